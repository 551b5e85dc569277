"""Anthropic Messages through the official `anthropic` SDK (imported lazily)."""

from __future__ import annotations

import json
from typing import Any

from ..tools import anthropic_tools
from .base import (
    AssistantMessage,
    Message,
    ProviderError,
    ToolResults,
    Turn,
    Usage,
    UserMessage,
    api_key,
    call_sdk,
)
from .base import ToolCall as Call

MAX_TOKENS = 8192


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        timeout: float = 600.0,
    ) -> None:
        import anthropic

        key, self.key_hint = api_key(api_key_env, base_url, "Anthropic")
        self.model = model
        self.client = anthropic.Anthropic(
            api_key=key or "not-set", base_url=base_url, timeout=timeout, max_retries=0
        )
        self._sdk = anthropic

    def complete(self, system: str, messages: list[Message]) -> Turn:
        request: Any = to_anthropic(messages)
        tools: Any = anthropic_tools()
        response = call_sdk(
            self._sdk,
            self.key_hint,
            lambda: self.client.messages.create(
                model=self.model,
                max_tokens=MAX_TOKENS,
                system=system,
                messages=request,
                tools=tools,
            ),
        )
        return from_anthropic(response)


def to_anthropic(messages: list[Message]) -> list[dict[str, Any]]:
    """The neutral transcript as Messages turns (consecutive user content is merged)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            _add(out, "user", [{"type": "text", "text": message.text}])
        elif isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = []
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
            _add(out, "assistant", blocks or [{"type": "text", "text": "(no text)"}])
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
    return out


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
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    return {"_unparsed": arguments if isinstance(arguments, str) else repr(arguments)}


def from_anthropic(response: Any) -> Turn:
    content = getattr(response, "content", None)
    if not isinstance(content, list):
        raise ProviderError("the model server's answer is not a Messages response", retryable=True)
    texts: list[str] = []
    calls: list[Call] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(getattr(block, "text", "") or "")
        elif kind == "tool_use":
            calls.append(
                Call(
                    getattr(block, "id", None) or None,
                    getattr(block, "name", None),
                    getattr(block, "input", None),
                )
            )
    usage = getattr(response, "usage", None)
    return Turn(
        "\n".join(t for t in texts if t),
        tuple(calls),
        Usage(
            prompt_tokens=getattr(usage, "input_tokens", None),
            completion_tokens=getattr(usage, "output_tokens", None),
            cached_tokens=getattr(usage, "cache_read_input_tokens", None),
        ),
        getattr(response, "stop_reason", None),
    )
