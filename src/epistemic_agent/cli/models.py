"""The model options of `run` and `repl`, and `epistemic models` (the price table)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from ..core import UsageError

if TYPE_CHECKING:
    from typing import Any

    from ..providers import Provider

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
SUMMARIES = ("auto", "concise", "detailed", "none")
MIN_THINKING = 1024
_MODELS_HELP = (
    "a models.toml of prices, context windows and output limits (default: $EPISTEMIC_MODELS, "
    "else ~/.config/epistemic/models.toml if it exists; see docs/models.md)"
)


def add_model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--models", metavar="FILE", help=_MODELS_HELP)
    p.add_argument(
        "--max-output-tokens",
        type=int,
        metavar="N",
        help="output tokens per model request (default: the model table's, else 8192)",
    )
    p.add_argument(
        "--context-window",
        type=int,
        metavar="N",
        help="the model's context window in tokens (default: the model table's); old tool "
        "output is compacted to stay inside it",
    )
    p.add_argument(
        "--thinking",
        metavar="BUDGET",
        help="Anthropic extended thinking: a budget of tokens (at least 1024), or `adaptive`",
    )
    p.add_argument(
        "--reasoning-effort",
        choices=EFFORTS,
        metavar="LEVEL",
        help=f"OpenAI reasoning effort: {', '.join(EFFORTS)}",
    )
    p.add_argument(
        "--reasoning-summary",
        choices=SUMMARIES,
        default="auto",
        metavar="KIND",
        help="reasoning summaries to ask openai-responses for: auto (default), concise, "
        "detailed, none",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="no prompt-cache breakpoints (Anthropic) and no prompt_cache_key (OpenAI)",
    )
    p.add_argument(
        "--no-stream", action="store_true", help="ask for whole answers instead of streams"
    )


def thinking_option(value: str | None, kind: str) -> int | str | None:
    if value is None:
        return None
    if kind != "anthropic":
        raise UsageError("--thinking is for anthropic models; OpenAI's is --reasoning-effort")
    if value == "adaptive":
        return value
    try:
        budget = int(value)
    except ValueError:
        raise UsageError(
            f"--thinking must be a number of tokens or `adaptive`, not {value!r}"
        ) from None
    if budget < MIN_THINKING:
        raise UsageError(f"--thinking needs a budget of at least {MIN_THINKING} tokens")
    return budget


def provider_from_args(args: argparse.Namespace, spec: str) -> tuple[Any, Any]:
    """The provider for `spec` with the options the flags and models.toml give; and the
    model's entry (None for a scripted model)."""
    from ..providers import (
        ModelConfigError,
        ModelOptions,
        config_path,
        load_config,
        lookup,
        make_provider,
        split_spec,
    )

    for name in ("max_output_tokens", "context_window"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive")
    kind, model = split_spec(spec)
    thinking = thinking_option(args.thinking, kind)
    if args.reasoning_effort and kind not in ("openai", "openai-responses"):
        raise UsageError("--reasoning-effort is for OpenAI models; Anthropic's is --thinking")
    try:
        config = load_config(config_path(args.models))
    except ModelConfigError as error:
        raise UsageError(str(error)) from None
    info = None if kind == "replay" else lookup(kind, model, config)
    options = None
    if info is not None:
        options = ModelOptions(
            info,
            max_output=args.max_output_tokens,
            thinking=thinking,
            reasoning_effort=args.reasoning_effort,
            cache=not args.no_cache,
            stream=not args.no_stream,
        )
    summary = None if args.reasoning_summary == "none" else args.reasoning_summary
    provider = make_provider(
        spec,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        timeout=args.request_timeout,
        options=options,
        summary=summary,
    )
    return provider, info


def check_window(args: argparse.Namespace, provider: Provider, min_reason: int) -> None:
    """Refuse, before anything is journaled, a window too small for the fixed prompt."""
    from ..agent import Compactor, ContextTooSmall, fixed_prompt_chars

    options = provider.options
    info = options.info if options is not None else None
    window = args.context_window or (info.context_window if info is not None else None)
    limit = options.output_limit if options is not None else 0
    try:
        Compactor(window, limit, fixed_prompt_chars(min_reason)).check()
    except ContextTooSmall as error:
        raise UsageError(str(error)) from None


# -- epistemic models -------------------------------------------------------------------------


def define_models(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Print the built-in model table merged with your models.toml; with "
        "PROVIDER:MODEL arguments, the entry each of them gets. Exit 1 when a named model has "
        "no price (its costs would be recorded as null), 2 on a bad models file."
    )
    p.add_argument("specs", nargs="*", metavar="PROVIDER:MODEL")
    p.add_argument("--models", metavar="FILE", help=_MODELS_HELP)
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.set_defaults(handler=_cmd_models)


def _cmd_models(args: argparse.Namespace) -> int:
    from ..providers import (
        ModelConfigError,
        ModelSpecError,
        config_path,
        load_config,
        lookup,
        split_spec,
        table,
    )

    try:
        config = load_config(config_path(args.models))
    except ModelConfigError as error:
        raise UsageError(str(error)) from None
    if not args.specs:
        rows = table(config)
    else:
        rows = []
        for spec in args.specs:
            try:
                kind, model = split_spec(spec)
            except ModelSpecError as error:
                raise UsageError(str(error)) from None
            found = lookup(kind, model, config)
            rows.append({"spec": spec, **_row(found)})
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        _print_table(rows)
    return 1 if args.specs and any(row["input"] is None for row in rows) else 0


def _row(info: Any) -> dict[str, Any]:
    names: tuple[str, ...] = ("model", "entry", "input", "output", "cache_write", "cache_read")
    names += ("context_window", "max_output", "max_tokens_param", "reasoning", "source")
    return {name: getattr(info, name) for name in names}


def _print_table(rows: list[dict[str, Any]]) -> None:
    from ..core import one_line

    print(
        f"{'model':<28} {'input':>7} {'output':>7} {'c.write':>7} {'c.read':>7} "
        f"{'context':>9} {'max out':>7}  source"
    )
    for row in rows:
        name = one_line(str(row.get("spec") or row["model"]))
        prices = [_price(row.get(key)) for key in ("input", "output", "cache_write", "cache_read")]
        window = row.get("context_window")
        source = one_line(str(row.get("source")))
        if row.get("input") is None:
            source += " (no price: costs recorded as null)"
        print(
            f"{name:<28} {' '.join(f'{p:>7}' for p in prices)} "
            f"{window if window else '-':>9} {row.get('max_output') or '-':>7}  {source}"
        )
    print("prices: US dollars per million tokens")


def _price(value: Any) -> str:
    return "-" if value is None else f"{value:g}"
