"""Anthropic Messages answers read into a Turn: a whole response, or a stream of events
(message_start, content blocks with their deltas, message_delta, message_stop)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .base import ProviderError, Reasoning, StreamSink, ToolCall, Turn, Usage
from .streams import count, get, incomplete, malformed


def from_anthropic(response: Any) -> Turn:
    """A whole (non-streamed) Messages response."""
    content = get(response, "content")
    if not isinstance(content, list):
        raise ProviderError("the model server's answer is not a Messages response", retryable=True)
    blocks = [_block_of(block) for block in content]
    return _turn(blocks, usage(get(response, "usage")), get(response, "stop_reason"))


def _block_of(block: Any) -> dict[str, Any]:
    kind = get(block, "type")
    found: dict[str, Any] = {"type": kind}
    for key in ("text", "id", "name", "input", "thinking", "signature", "data"):
        value = get(block, key)
        if value is not None:
            found[key] = value
    return found


def assemble(stream: Iterable[Any], sink: StreamSink | None = None) -> Turn:
    """A streamed answer, built from its events; text and thinking go to `sink` as they
    arrive. A stream that ends before `message_stop` is an error, not a shorter answer."""
    blocks: dict[int, dict[str, Any]] = {}
    parts: dict[int, list[str]] = {}
    start_usage: Any = None
    final_usage: Any = None
    stop_reason = None
    seen = 0
    for event in stream:
        seen += 1
        kind = get(event, "type")
        if kind == "message_start":
            start_usage = get(get(event, "message"), "usage")
        elif kind == "content_block_start":
            index = _index(event)
            blocks[index] = _block_of(get(event, "content_block"))
            parts[index] = []
        elif kind == "content_block_delta":
            _delta(blocks, parts, _index(event), get(event, "delta"), sink)
        elif kind == "message_delta":
            stop_reason = get(get(event, "delta"), "stop_reason") or stop_reason
            final_usage = get(event, "usage") or final_usage
        elif kind == "message_stop":
            ordered = [_finished(blocks[i], parts[i]) for i in sorted(blocks)]
            return _turn(ordered, usage(start_usage, final_usage), stop_reason)
        # ping, content_block_stop and event types added later carry nothing to keep
    raise incomplete("message_stop", seen)


def _index(event: Any) -> int:
    index = get(event, "index")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise malformed(f"{get(event, 'type')} without a block index")
    return index


def _delta(
    blocks: dict[int, dict[str, Any]],
    parts: dict[int, list[str]],
    index: int,
    delta: Any,
    sink: StreamSink | None,
) -> None:
    block = blocks.get(index)
    if block is None:
        raise malformed(f"a delta for block {index}, which never started")
    kind = get(delta, "type")
    if kind == "text_delta":
        text = get(delta, "text") or ""
        block["text"] = block.get("text", "") + text
        if sink is not None and text:
            sink.text(text)
    elif kind == "input_json_delta":
        parts[index].append(get(delta, "partial_json") or "")
    elif kind == "thinking_delta":
        text = get(delta, "thinking") or ""
        block["thinking"] = block.get("thinking", "") + text
        if sink is not None and text:
            sink.thinking(text)
    elif kind == "signature_delta":
        block["signature"] = block.get("signature", "") + (get(delta, "signature") or "")


def _finished(block: dict[str, Any], json_parts: list[str]) -> dict[str, Any]:
    """A tool_use block's input is the JSON its deltas spelled: kept raw, so an unparsable
    one reaches the gate as it was sent (and is rejected there, with its text)."""
    if block.get("type") == "tool_use" and "".join(json_parts):
        block["input"] = "".join(json_parts)
    return block


def _turn(blocks: list[dict[str, Any]], used: Usage, stop_reason: Any) -> Turn:
    texts: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[Reasoning] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            calls.append(ToolCall(block.get("id") or None, block.get("name"), block.get("input")))
        elif kind == "thinking":
            native = {
                "type": "thinking",
                "thinking": block.get("thinking", ""),
                "signature": block.get("signature", ""),
            }
            reasoning.append(Reasoning("thinking", str(native["thinking"]), native))
        elif kind == "redacted_thinking":
            native = {"type": "redacted_thinking", "data": block.get("data", "")}
            reasoning.append(Reasoning("redacted_thinking", "", native))
    stop = stop_reason if isinstance(stop_reason, str) else None
    return Turn("\n".join(t for t in texts if t), tuple(calls), used, stop, tuple(reasoning))


def usage(first: Any, last: Any = None) -> Usage:
    """Usage from message_start, updated by message_delta's cumulative counts."""

    def field(name: str) -> int | None:
        later = count(get(last, name)) if last is not None else None
        return later if later is not None else count(get(first, name))

    uncached = field("input_tokens")
    read = field("cache_read_input_tokens")
    written = field("cache_creation_input_tokens")
    details = get(last, "output_tokens_details") or get(first, "output_tokens_details")
    total = None if uncached is None else uncached + (read or 0) + (written or 0)
    return Usage(
        prompt_tokens=uncached,
        completion_tokens=field("output_tokens"),
        cached_tokens=read,
        cache_creation_input_tokens=written,
        input_tokens=total,
        reasoning_tokens=count(get(details, "thinking_tokens")),
    )
