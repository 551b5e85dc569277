"""OpenAI-compatible Chat Completions through the official `openai` SDK (imported lazily).

The request prefix stays byte-stable between requests (the same system prompt, tools and
history, serialised the same way), so automatic prefix caching applies; `prompt_cache_key`
(the session id) is sent to OpenAI's own API, or where models.toml says a server takes it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import openai_tools
from .base import (
    AssistantMessage,
    Message,
    ProviderError,
    StreamSink,
    ToolCall,
    ToolResults,
    Turn,
    Usage,
    UserMessage,
    arguments_text,
    call_sdk,
)
from .openai_common import OpenAIClient
from .streams import count, events, get, incomplete


class OpenAIProvider(OpenAIClient):
    """Any server that speaks Chat Completions: OpenAI, vLLM, llama.cpp, Ollama, OpenRouter..."""

    name = "openai"
    streams = True

    def request(self, system: str, messages: Sequence[Message]) -> dict[str, Any]:
        options = self.options
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, *to_openai(messages)],
            "tools": openai_tools(),
        }
        param = options.info.max_tokens_param
        if param is None and options.max_output is not None:
            param = "max_tokens"  # an explicit limit for a model the table does not know
        if param is not None:
            body[param] = options.output_limit
        if options.reasoning_effort is not None:
            body["reasoning_effort"] = options.reasoning_effort
        if options.cache and self.takes_cache_key and self.cache_key:
            body["prompt_cache_key"] = self.cache_key
        return body

    def complete(
        self, system: str, messages: Sequence[Message], sink: StreamSink | None = None
    ) -> Turn:
        body = self.request(system, messages)
        create: Any = self.client.chat.completions.create
        if not self.options.stream:
            return from_openai(call_sdk(self._sdk, self.key_hint, lambda: create(**body)))
        streaming = {"stream": True, "stream_options": {"include_usage": True}}
        stream = call_sdk(self._sdk, self.key_hint, lambda: create(**body, **streaming))
        return assemble(events(self._sdk, self.key_hint, stream), sink)


def to_openai(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The neutral transcript as Chat Completions messages."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.calls:
                entry["tool_calls"] = [_tool_call(call) for call in message.calls]
            out.append(entry)
        elif isinstance(message, ToolResults):
            out += [
                {"role": "tool", "tool_call_id": r.call_id, "content": r.text}
                for r in message.results
            ]
    return out


def _tool_call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name or "", "arguments": arguments_text(call.arguments)},
    }


def from_openai(response: Any) -> Turn:
    if not get(response, "choices"):
        raise ProviderError("the model server returned no choices", retryable=True)
    choice = response.choices[0]
    message = choice.message
    calls = tuple(
        ToolCall(
            call.id or None,
            getattr(call.function, "name", None),
            getattr(call.function, "arguments", None),
        )
        for call in (message.tool_calls or [])
    )
    return Turn(message.content or "", calls, usage(response.usage), choice.finish_reason)


def assemble(stream: Any, sink: StreamSink | None = None) -> Turn:
    """A streamed answer: text deltas, tool calls whose id, name and arguments arrive in
    pieces (by `index`), a finish reason, and a last chunk with usage and no choices."""
    texts: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    used: Any = None
    seen = 0
    for chunk in stream:
        seen += 1
        used = get(chunk, "usage") or used
        for choice in get(chunk, "choices") or ():
            if get(choice, "index") not in (0, None):
                continue
            delta = get(choice, "delta")
            text = get(delta, "content")
            if isinstance(text, str) and text:
                texts.append(text)
                if sink is not None:
                    sink.text(text)
            for position, piece in enumerate(get(delta, "tool_calls") or ()):
                _add_call(calls, piece, position)
            finish = get(choice, "finish_reason") or finish
    if finish is None:
        raise incomplete("a finish_reason", seen)
    found = tuple(
        ToolCall(c["id"] or None, c["name"] or None, c["arguments"])
        for _, c in sorted(calls.items())
    )
    return Turn("".join(texts), found, usage(used), finish)


def _add_call(calls: dict[int, dict[str, Any]], piece: Any, position: int) -> None:
    index = get(piece, "index")
    if not isinstance(index, int) or isinstance(index, bool):
        index = position
    entry = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
    entry["id"] = get(piece, "id") or entry["id"]
    function = get(piece, "function")
    entry["name"] += get(function, "name") or ""
    arguments = get(function, "arguments")
    entry["arguments"] += arguments if isinstance(arguments, str) else ""


def usage(used: Any) -> Usage:
    prompt = get(used, "prompt_tokens")
    details = get(used, "prompt_tokens_details")
    output = get(used, "completion_tokens_details")
    return Usage(
        prompt_tokens=count(prompt),
        completion_tokens=count(get(used, "completion_tokens")),
        cached_tokens=count(get(details, "cached_tokens")),
        cache_creation_input_tokens=count(get(details, "cache_write_tokens")),
        input_tokens=count(prompt),
        reasoning_tokens=count(get(output, "reasoning_tokens")),
    )
