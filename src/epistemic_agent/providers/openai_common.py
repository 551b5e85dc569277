"""What the two OpenAI providers share: the SDK's client, the key, the model's options and
whether the server takes `prompt_cache_key`."""

from __future__ import annotations

from urllib.parse import urlsplit

import openai

from .base import ModelOptions, api_key
from .models import ModelInfo

OPENAI_HOST = "api.openai.com"


class OpenAIClient:
    """The official `openai` SDK's client for one model (the SDK is imported here, when a
    provider is made, never at start-up)."""

    leftover = 0  # a real model has no script

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 600.0,
        options: ModelOptions | None = None,
    ) -> None:
        key, self.key_hint = api_key(api_key_env, base_url, "OpenAI")
        self.model = model
        self.options = options or ModelOptions(ModelInfo(model))
        self.cache_key: str | None = self.options.cache_key
        self.takes_cache_key = takes_cache_key(base_url, self.options.info)
        self.client = openai.OpenAI(
            api_key=key or "not-set", base_url=base_url, timeout=timeout, max_retries=0
        )
        self._sdk = openai


def takes_cache_key(base_url: str | None, info: ModelInfo) -> bool:
    """OpenAI's own API takes `prompt_cache_key`; other servers only when configured to."""
    if info.prompt_cache_key is not None:
        return info.prompt_cache_key
    if base_url is None:
        return True
    return urlsplit(base_url).hostname == OPENAI_HOST
