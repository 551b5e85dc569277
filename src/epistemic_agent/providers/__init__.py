"""Model providers, named by one string `PROVIDER:MODEL`. SDKs are imported only when used."""

from __future__ import annotations

from pathlib import Path

from .base import ModelSpecError, Provider, ProviderError

PROVIDERS = ("openai", "anthropic", "replay")


def make_provider(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    timeout: float = 600.0,
) -> Provider:
    """`openai:gpt-5.1`, `anthropic:claude-sonnet-4-5`, `replay:session.json`."""
    kind, sep, model = spec.partition(":")
    if not sep or not model:
        raise ModelSpecError(
            f"model {spec!r} must be PROVIDER:MODEL with PROVIDER one of "
            f"{', '.join(PROVIDERS)} (e.g. openai:gpt-5.1, replay:demo.json)"
        )
    if kind == "replay":
        from .replay import ReplayProvider, ScriptError

        try:
            return ReplayProvider(Path(model))
        except ScriptError as error:
            raise ModelSpecError(str(error)) from None
    if kind == "openai":
        from .openai_chat import OpenAIProvider

        return OpenAIProvider(
            model, base_url=base_url, api_key_env=api_key_env or "OPENAI_API_KEY", timeout=timeout
        )
    if kind == "anthropic":
        from .anthropic_messages import AnthropicProvider

        return AnthropicProvider(
            model,
            base_url=base_url,
            api_key_env=api_key_env or "ANTHROPIC_API_KEY",
            timeout=timeout,
        )
    raise ModelSpecError(f"unknown provider {kind!r}; use one of {', '.join(PROVIDERS)}")


__all__ = ["PROVIDERS", "ModelSpecError", "Provider", "ProviderError", "make_provider"]
