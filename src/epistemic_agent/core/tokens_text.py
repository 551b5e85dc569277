"""Token counts said the same way for every provider: all input (uncached, read from the
prompt cache and written to it), then output.

Providers disagree on what their own input figure means: OpenAI's `prompt_tokens` is all input,
Anthropic's `input_tokens` only what follows the last cache breakpoint. The journal keeps both
(`prompt_tokens` as the provider said it, `input_tokens` as all input); summaries say all input,
from `input_tokens`, or `prompt_tokens` for a record written before `input_tokens` existed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any


def total_input(record: Mapping[str, Any]) -> int | None:
    """A model record's input tokens, cached or not; None when it reported none."""
    for key in ("input_tokens", "prompt_tokens"):
        value = record.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def input_sum(records: Iterable[Mapping[str, Any]]) -> int:
    return sum(total_input(record) or 0 for record in records)


def tokens_line(spend: Mapping[str, Any]) -> str:
    """`9,356 input (5,998 read from the cache, 2,511 written) + 275 output tokens`, from a
    spend summary (spend.Spend.to_json); "not reported" when no call reported any."""
    if not spend.get("tokens_reported"):
        return "not reported"
    cache = f"{int(spend.get('cached_tokens') or 0):,} read from the cache"
    written = int(spend.get("cache_creation_input_tokens") or 0)
    if written:
        cache += f", {written:,} written"
    return (
        f"{int(spend.get('input_tokens') or 0):,} input ({cache}) + "
        f"{int(spend.get('output_tokens') or 0):,} output tokens"
    )
