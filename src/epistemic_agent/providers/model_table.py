"""The built-in table of models: prices, context windows, output limits (see docs/models.md).

Prices are US dollars per million tokens, as the providers published them (transcribed on
2026-12-01; prices change, so a models.toml can override any entry). `cache_write` is the
price of a token written to the prompt cache (Anthropic: 1.25x input for the 5-minute cache;
OpenAI before GPT-5.6: no premium, the input price), `cache_read` of a token read from it.
"""

from __future__ import annotations

#: Field order of a row: input, output, cache_write, cache_read, context_window, max_output,
#: max_tokens_param, reasoning (an OpenAI reasoning model). None: unknown (a null context
#: window never triggers compaction before the provider reports an overflow).
Row = tuple[float, float, float, float, int | None, int, str | None, bool]

_OPUS = (5.0, 25.0, 6.25, 0.50)
_OPUS_OLD = (15.0, 75.0, 18.75, 1.50)
_SONNET = (3.0, 15.0, 3.75, 0.30)
_M = "max_completion_tokens"

BUILTIN: dict[str, Row] = {
    # Anthropic: platform.claude.com/docs/en/about-claude/pricing and each model's page
    "claude-opus-5": (*_OPUS, 1_000_000, 16_384, None, False),
    "claude-opus-4-8": (*_OPUS, None, 16_384, None, False),
    "claude-opus-4-7": (*_OPUS, None, 16_384, None, False),
    "claude-opus-4-6": (*_OPUS, 1_000_000, 16_384, None, False),
    "claude-opus-4-5": (*_OPUS, 200_000, 16_384, None, False),
    "claude-opus-4-1": (*_OPUS_OLD, 200_000, 16_384, None, False),
    "claude-opus-4-0": (*_OPUS_OLD, 200_000, 16_384, None, False),
    "claude-sonnet-5": (2.0, 10.0, 2.50, 0.20, 1_000_000, 16_384, None, False),
    "claude-sonnet-4-6": (*_SONNET, 1_000_000, 16_384, None, False),
    "claude-sonnet-4-5": (*_SONNET, 200_000, 16_384, None, False),
    "claude-sonnet-4-0": (*_SONNET, 200_000, 16_384, None, False),
    "claude-haiku-4-5": (1.0, 5.0, 1.25, 0.10, 200_000, 16_384, None, False),
    # OpenAI: developers.openai.com/api/docs/pricing (cached input; no write premium)
    "gpt-5.5": (5.0, 30.0, 5.0, 0.50, 1_000_000, 32_768, _M, True),
    "gpt-5.4": (2.50, 15.0, 2.50, 0.25, 1_000_000, 32_768, _M, True),
    "gpt-5.4-mini": (0.75, 4.50, 0.75, 0.075, None, 32_768, _M, True),
    "gpt-5.4-nano": (0.20, 1.25, 0.20, 0.02, None, 32_768, _M, True),
    "gpt-5.2": (1.75, 14.0, 1.75, 0.175, None, 32_768, _M, True),
    "gpt-5.1": (1.25, 10.0, 1.25, 0.125, 400_000, 32_768, _M, True),
    "gpt-5": (1.25, 10.0, 1.25, 0.125, 400_000, 32_768, _M, True),
    "gpt-5-mini": (0.25, 2.0, 0.25, 0.025, 400_000, 32_768, _M, True),
    "gpt-5-nano": (0.05, 0.40, 0.05, 0.005, 400_000, 32_768, _M, True),
    "o3": (2.0, 8.0, 2.0, 0.50, 200_000, 32_768, _M, True),
    "o4-mini": (1.10, 4.40, 1.10, 0.275, 200_000, 32_768, _M, True),
    "gpt-4.1": (2.0, 8.0, 2.0, 0.50, 1_047_576, 16_384, "max_tokens", False),
    "gpt-4.1-mini": (0.40, 1.60, 0.40, 0.10, 1_047_576, 16_384, "max_tokens", False),
    "gpt-4o": (2.50, 10.0, 2.50, 1.25, 128_000, 16_384, "max_tokens", False),
    "gpt-4o-mini": (0.15, 0.60, 0.15, 0.075, 128_000, 16_384, "max_tokens", False),
}

#: Model names the providers also accept for a table entry.
ALIASES: dict[str, str] = {
    "claude-opus-4": "claude-opus-4-0",
    "claude-sonnet-4": "claude-sonnet-4-0",
}

#: Max output tokens when neither the table nor the configuration knows the model.
DEFAULT_MAX_OUTPUT = 8192
