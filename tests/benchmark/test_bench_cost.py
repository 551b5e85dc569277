"""The cost benchmark's fake servers apply the providers' documented caching rules (prefix
match, minimum cacheable length, breakpoints and their 20-block lookback, 128-token steps,
routing by key, expiry), and a short benchmark session's journal matches their bills."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from fake_models import AnthropicCache, CacheError, OpenAICache, canonical, tokens

pytestmark = pytest.mark.timeout(120)
MARK = {"type": "ephemeral"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def block(text: str, marked: bool = False) -> dict[str, Any]:
    found: dict[str, Any] = {"type": "text", "text": text}
    if marked:
        found["cache_control"] = MARK
    return found


def anthropic(turns: list[str], marks: set[int], system: str = "s" * 400) -> dict[str, Any]:
    """A request: a system prompt, then one user or assistant block per turn."""
    messages = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": [block(t, n in marks)]}
        for n, t in enumerate(turns)
    ]
    return {"system": [block(system, -1 in marks)], "tools": [], "messages": messages}


def test_anthropic_writes_a_prefix_then_reads_it_and_writes_the_rest() -> None:
    cache = AnthropicCache(minimum=1024, clock=Clock())
    first = anthropic(["a" * 4000, "b" * 400], {1})
    total, read, written = cache.bill(first)
    assert (read, written) == (0, total)  # everything up to the breakpoint is new: written

    second = anthropic(["a" * 4000, "b" * 400, "c" * 800, "d" * 40], {1, 2})
    total2, read2, written2 = cache.bill(second)
    assert read2 == total  # the first request's prefix, read back
    assert written2 == tokens(canonical({"role": "user", "block": block("c" * 800)}))
    assert total2 - read2 - written2 == tokens(
        canonical({"role": "assistant", "block": block("d" * 40)})
    )


def test_a_prefix_below_the_minimum_is_never_cached() -> None:
    cache = AnthropicCache(minimum=1024, clock=Clock())
    short = anthropic(["x" * 1000], {0})
    assert cache.bill(short)[1:] == (0, 0)
    assert cache.bill(short)[1:] == (0, 0)  # nothing was written, so nothing to read


def test_the_lookback_reaches_only_20_blocks_back() -> None:
    cache = AnthropicCache(minimum=10, clock=Clock())
    turns = ["t" * 100 for _ in range(30)]
    cache.bill(anthropic(turns[:5], {4}))
    near = anthropic(turns[:20], {19})  # 15 blocks after the cached one: found
    assert cache.bill(near)[1] > 0
    cache = AnthropicCache(minimum=10, clock=Clock())
    cache.bill(anthropic(turns[:5], {4}))
    far = anthropic(turns, {29})  # 25 blocks after: missed...
    assert cache.bill(far)[1] == 0
    cache = AnthropicCache(minimum=10, clock=Clock())
    cache.bill(anthropic(turns[:5], {4}))
    both = anthropic(turns, {4, 29})  # ...unless a breakpoint sits on it
    assert cache.bill(both)[1] > 0


def test_a_changed_prefix_misses_and_more_than_four_breakpoints_are_refused() -> None:
    cache = AnthropicCache(minimum=10, clock=Clock())
    cache.bill(anthropic(["a" * 400, "b" * 400], {1}))
    assert cache.bill(anthropic(["a" * 400, "b" * 400], {1}, system="S" * 400))[1] == 0
    with pytest.raises(CacheError, match="maximum of 4"):
        cache.bill(anthropic(["x"] * 6, {0, 1, 2, 3, 4}))


def test_entries_expire_after_five_minutes_unless_read() -> None:
    clock = Clock()
    cache = AnthropicCache(minimum=10, clock=clock)
    request = anthropic(["a" * 400, "b" * 400], {1})
    cache.bill(request)
    clock.now = 290.0
    assert cache.bill(request)[1] > 0  # read: refreshed until 590
    clock.now = 580.0
    assert cache.bill(request)[1] > 0
    clock.now = 900.0
    assert cache.bill(request)[1] == 0


def openai(messages: list[str], key: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "tools": [],
        "messages": [{"role": "user", "content": m} for m in messages],
    }
    if key:
        body["prompt_cache_key"] = key
    return body


def test_openai_caches_long_prefixes_in_128_token_steps() -> None:
    cache = OpenAICache(clock=Clock())
    assert cache.bill(openai(["q" * 2000]))[1] == 0  # under 1024 tokens: never cached
    assert cache.bill(openai(["q" * 2000, "r" * 100]))[1] == 0
    long = openai(["p" * 6000], key="s1")
    total, cached, _ = cache.bill(long)
    assert cached == 0 and total >= 1024
    grown = openai(["p" * 6000, "more" * 50], key="s1")
    _, cached, _ = cache.bill(grown)
    assert cached >= 1024 and (cached - 1024) % 128 == 0 and total - 128 < cached <= total


def test_openai_reuses_prefixes_only_on_the_same_route_and_when_enabled() -> None:
    cache = OpenAICache(clock=Clock())
    cache.bill(openai(["p" * 6000], key="a"))
    assert cache.bill(openai(["p" * 6000, "x"], key="b"))[1] == 0
    assert cache.bill(openai(["P" + "p" * 5999, "x"], key="a"))[1] == 0  # first byte differs
    off = OpenAICache(enabled=False, clock=Clock())
    off.bill(openai(["p" * 6000], key="a"))
    assert off.bill(openai(["p" * 6000], key="a"))[1] == 0


@pytest.mark.system  # a benchmark session against the fake servers
def test_a_short_benchmark_session_bills_what_the_journal_records(tmp_path: Path) -> None:
    import bench_cost

    cached = bench_cost.run_session("anthropic", True, 5, tmp_path)  # raises on a mismatch
    assert cached["requests"] == 5 and cached["calls"] == 4
    assert cached["cache_read"] > 0 and cached["cache_write"] > 0
    assert cached["billed_input"] < cached["input_tokens"]
    uncached = bench_cost.run_session("anthropic", False, 5, tmp_path)
    assert (uncached["cache_read"], uncached["cache_write"]) == (0, 0)
    assert uncached["billed_input"] == uncached["input_tokens"]
