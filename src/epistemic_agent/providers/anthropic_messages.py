"""Anthropic Messages through the official `anthropic` SDK (imported lazily).

Requests carry prompt-cache breakpoints (the tools and system prompt, and the two newest user
turns), stream by default, and with `--thinking` send every thinking block back exactly as
received, signature included."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anthropic

from ..core import anthropic_tools
from .anthropic_stream import assemble, from_anthropic
from .base import (
    AssistantMessage,
    Message,
    ModelOptions,
    StreamSink,
    ToolResults,
    Turn,
    UserMessage,
    api_key,
    call_sdk,
)
from .models import ModelInfo
from .streams import events

CACHE = {"type": "ephemeral"}
MIN_THINKING = 1024


class AnthropicProvider:
    name = "anthropic"
    streams = True
    leftover = 0  # a real model has no script

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        timeout: float = 600.0,
        options: ModelOptions | None = None,
    ) -> None:
        key, self.key_hint = api_key(api_key_env, base_url, "Anthropic")
        self.model = model
        self.options = options or ModelOptions(ModelInfo(model))
        self.cache_key: str | None = None  # unused here: breakpoints do the caching
        self.client = anthropic.Anthropic(
            api_key=key or "not-set", base_url=base_url, timeout=timeout, max_retries=0
        )
        self._sdk = anthropic

    def request(self, system: str, messages: Sequence[Message]) -> dict[str, Any]:
        """The request body's parameters (what the SDK serialises)."""
        options = self.options
        cache = options.cache
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": options.output_limit + thinking_budget(options.thinking),
            "system": [{"type": "text", "text": system, "cache_control": CACHE}]
            if cache
            else system,
            "messages": to_anthropic(messages, breakpoints=2 if cache else 0),
            "tools": anthropic_tools(),
        }
        if options.thinking is not None:
            body["thinking"] = thinking_config(options.thinking)
        return body

    def complete(
        self, system: str, messages: Sequence[Message], sink: StreamSink | None = None
    ) -> Turn:
        body = self.request(system, messages)
        create: Any = self.client.messages.create
        if not self.options.stream:
            return from_anthropic(call_sdk(self._sdk, self.key_hint, lambda: create(**body)))
        stream = call_sdk(self._sdk, self.key_hint, lambda: create(**body, stream=True))
        return assemble(events(self._sdk, self.key_hint, stream), sink)


def thinking_budget(thinking: int | str | None) -> int:
    return thinking if isinstance(thinking, int) else 0


def thinking_config(thinking: int | str) -> dict[str, Any]:
    if isinstance(thinking, int):
        return {"type": "enabled", "budget_tokens": thinking}
    return {"type": "adaptive"}


def to_anthropic(messages: Sequence[Message], breakpoints: int = 0) -> list[dict[str, Any]]:
    """The neutral transcript as Messages turns (consecutive user content is merged). With
    `breakpoints`, the last block of that many newest user turns gets a cache breakpoint: the
    newest caches the whole history for the next request, the one before it is read now."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            _add(out, "user", [{"type": "text", "text": message.text}])
        elif isinstance(message, AssistantMessage):
            _add(out, "assistant", _assistant_blocks(message))
        elif isinstance(message, ToolResults):
            _add(
                out,
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": r.call_id,
                        "content": r.text,
                        "is_error": r.is_error,
                    }
                    for r in message.results
                ],
            )
    users = [entry for entry in out if entry["role"] == "user"]
    for entry in users[-breakpoints:] if breakpoints else ():
        entry["content"][-1] = {**entry["content"][-1], "cache_control": CACHE}
    return out


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    """Thinking blocks first, exactly as received; then the text and the tool calls."""
    blocks = [dict(r.native) for r in message.reasoning if r.native.get("type") in THINKING]
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    blocks += [
        {
            "type": "tool_use",
            "id": call.id,
            "name": call.name or "",
            "input": _as_input(call.arguments),
        }
        for call in message.calls
    ]
    if len(blocks) == sum(1 for b in blocks if b["type"] in THINKING):
        blocks.append({"type": "text", "text": "(no text)"})
    return blocks


THINKING = ("thinking", "redacted_thinking")


def _add(out: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": blocks})


def _as_input(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    return {"_unparsed": arguments if isinstance(arguments, str) else repr(arguments)}
