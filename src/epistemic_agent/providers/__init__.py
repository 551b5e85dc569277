"""Model providers, named by one string `PROVIDER:MODEL`. SDKs are imported only when used."""

from __future__ import annotations

from pathlib import Path

from .base import ModelOptions, ModelSpecError, Provider, ProviderError

PROVIDERS = ("openai", "openai-responses", "anthropic", "replay")


def split_spec(spec: str) -> tuple[str, str]:
    """`openai:llama3.1:8b` -> ("openai", "llama3.1:8b"): only the first colon separates."""
    kind, sep, model = spec.partition(":")
    if not sep or not model:
        raise ModelSpecError(
            f"model {spec!r} must be PROVIDER:MODEL with PROVIDER one of "
            f"{', '.join(PROVIDERS)} (e.g. openai:gpt-5.1, replay:demo.json)"
        )
    if kind not in PROVIDERS:
        raise ModelSpecError(f"unknown provider {kind!r}; use one of {', '.join(PROVIDERS)}")
    return kind, model


def make_provider(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    timeout: float = 600.0,
    options: ModelOptions | None = None,
    summary: str | None = "auto",
) -> Provider:
    """`openai:gpt-5.1`, `openai-responses:gpt-5.1`, `anthropic:claude-sonnet-4-5`,
    `replay:session.json`. `options` default to the built-in table's entry for the model."""
    kind, model = split_spec(spec)
    if kind == "replay":
        from .replay import ReplayProvider, ScriptError

        try:
            return ReplayProvider(Path(model))
        except ScriptError as error:
            raise ModelSpecError(str(error)) from None
    if options is None:
        from ..models import lookup

        options = ModelOptions(lookup(kind, model, {}))
    if kind == "anthropic":
        from .anthropic_messages import AnthropicProvider

        return AnthropicProvider(
            model,
            base_url=base_url,
            api_key_env=api_key_env or "ANTHROPIC_API_KEY",
            timeout=timeout,
            options=options,
        )
    key_env = api_key_env or "OPENAI_API_KEY"
    if kind == "openai-responses":
        from .openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider(
            model,
            base_url=base_url,
            api_key_env=key_env,
            timeout=timeout,
            options=options,
            summary=summary,
        )
    from .openai_chat import OpenAIProvider

    return OpenAIProvider(
        model, base_url=base_url, api_key_env=key_env, timeout=timeout, options=options
    )


__all__ = [
    "PROVIDERS",
    "ModelOptions",
    "ModelSpecError",
    "Provider",
    "ProviderError",
    "make_provider",
    "split_spec",
]
