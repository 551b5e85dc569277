"""What a session costs, with prompt caching and without: `bench/bench_cost.py`.

Run from the repository root with the project's virtualenv (no network, no API key):

    .venv/bin/python bench/bench_cost.py            # Markdown tables; exit 1 if over target
    .venv/bin/python bench/bench_cost.py --json     # the same figures as one JSON object
    .venv/bin/python bench/bench_cost.py --steps 8  # a shorter session (for a quick look)

A scripted session of 40 model steps (39 tool calls on a small Python project, reading files,
grepping, running its tests, fixing a bug, then a final answer; the tool outputs are a few
hundred tokens each) is played through `epistemic run` against a fake Anthropic server and a
fake OpenAI server on 127.0.0.1 (bench/fake_models.py, which apply each provider's documented
caching rules), once as the product sends it and once without caching, in the same run:

* Anthropic: `--no-cache` sends no breakpoints, so nothing is cached;
* OpenAI caches by itself; the uncached run is the same requests on a fake with its cache
  off, which is what the session would cost if no prefix were reused.

Billed-equivalent input tokens weigh each kind of input token by its price relative to
ordinary input: Anthropic cache reads 0.1x, cache writes 1.25x; OpenAI (GPT-5.1) cached input
0.1x. They are computed from the journal's `model` records, and checked against the fake
servers' own accounting. Target: cached <= 0.3x uncached, for each provider.

Exit status: 0 within the target, 1 over it, 2 when a run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cost_project import write_project
from cost_session import TASK, script
from fake_models import AnthropicCache, FakeModelServer, OpenAICache

TARGET = 0.3
WEIGHTS = {"anthropic": {"read": 0.1, "write": 1.25}, "openai": {"read": 0.1, "write": 1.0}}
MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5.1"}
EPISTEMIC = Path(sys.executable).with_name("epistemic")


class RunFailed(RuntimeError):
    pass


def run_session(provider: str, cached: bool, steps: int, root: Path) -> dict[str, Any]:
    """One session through `epistemic run`; its journal's figures and the server's."""
    workspace = root / f"{provider}-{'cached' if cached else 'uncached'}"
    write_project(workspace)
    cache = AnthropicCache() if provider == "anthropic" else OpenAICache(enabled=cached)
    models = root / "models.toml"  # the fake takes a prompt_cache_key, as OpenAI's API does
    models.write_text(f'[models."{MODELS["openai"]}"]\nprompt_cache_key = true\n', "utf-8")
    with FakeModelServer(provider, script(steps), cache) as server:
        command = [str(EPISTEMIC), "run", "--model", f"{provider}:{MODELS[provider]}"]
        command += ["--base-url", server.base_url, "--models", str(models), "--max-steps", "60"]
        command += ["-C", str(workspace), "--json", TASK]
        if not cached:
            command.append("--no-cache")
        env = {k: v for k, v in os.environ.items() if "PROXY" not in k.upper()}
        env.update(NO_PROXY="127.0.0.1", OPENAI_API_KEY="fake", ANTHROPIC_API_KEY="fake")
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
        log = list(server.log)
    if done.returncode != 0:
        raise RunFailed(f"{provider} run exited {done.returncode}: {done.stderr[-2000:]}")
    records = [json.loads(line) for line in (workspace / ".epistemic" / "journal.jsonl").open()]
    models_seen = [r for r in records if r["kind"] == "model"]
    return figures(provider, models_seen, log)


def figures(
    provider: str, models: list[dict[str, Any]], log: list[tuple[int, ...]]
) -> dict[str, Any]:
    total = sum(m["input_tokens"] for m in models)
    read = sum(m["cache_read_input_tokens"] or 0 for m in models)
    written = sum(m["cache_creation_input_tokens"] or 0 for m in models)
    weights = WEIGHTS[provider]
    server = [sum(column) for column in zip(*log, strict=True)] if log else [0, 0, 0, 0]
    if [total, read, written] != server[:3]:
        raise RunFailed(
            f"{provider}: the journal ({total}, {read}, {written}) does not match "
            f"what the server billed ({server[:3]})"
        )
    return {
        "requests": len(models),
        "calls": sum(m["calls"] for m in models),
        "input_tokens": total,
        "cache_read": read,
        "cache_write": written,
        "uncached_input": total - read - written,
        "output_tokens": sum(m["completion_tokens"] for m in models),
        "billed_input": round(
            total - read - written + weights["read"] * read + weights["write"] * written
        ),
        "cost": round(sum(m["cost"] for m in models if m["cost"] is not None), 6),
    }


def measure(steps: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="bench-cost-"))
    try:
        results: dict[str, Any] = {}
        for provider in ("anthropic", "openai"):
            cached = run_session(provider, True, steps, root)
            uncached = run_session(provider, False, steps, root)
            ratio = cached["billed_input"] / uncached["billed_input"]
            results[provider] = {
                "model": MODELS[provider],
                "cached": cached,
                "uncached": uncached,
                "ratio": round(ratio, 3),
                "cost_ratio": round(cached["cost"] / uncached["cost"], 3)
                if uncached["cost"]
                else None,
                "ok": ratio <= TARGET,
            }
        return {"steps": steps, "target": TARGET, "providers": results}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"A {result['steps']}-step session, each provider with and without caching "
        "(tokens: one per four characters, the fakes' stand-in tokenizer).",
        "",
        "| | requests | input tokens | cache reads | cache writes | uncached input | "
        "billed-equivalent input | cost (product's table) |",
        "|--|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for provider, data in result["providers"].items():
        for kind in ("cached", "uncached"):
            row = data[kind]
            lines.append(
                f"| {provider} `{data['model']}`, {kind} | {row['requests']} | "
                f"{row['input_tokens']:,} | {row['cache_read']:,} | {row['cache_write']:,} | "
                f"{row['uncached_input']:,} | {row['billed_input']:,} | ${row['cost']:.4f} |"
            )
    lines.append("")
    for provider, data in result["providers"].items():
        verdict = "PASS" if data["ok"] else "FAIL"
        lines.append(
            f"- {provider}: cached / uncached billed-equivalent input **{data['ratio']:.3f}x** "
            f"(target <= {result['target']}x: {verdict}); in dollars, with output, "
            f"{data['cost_ratio']:.3f}x"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--steps", type=int, default=40, help="model steps (default 40)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not 2 <= args.steps <= 40:
        parser.error("--steps must be between 2 and 40")
    try:
        result = measure(args.steps)
    except (RunFailed, subprocess.TimeoutExpired) as error:
        print(f"bench_cost: {error}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1) if args.json else markdown(result))
    return 0 if all(data["ok"] for data in result["providers"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
