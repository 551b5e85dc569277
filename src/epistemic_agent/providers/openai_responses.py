"""OpenAI's Responses API (`openai-responses:MODEL`) through the official `openai` SDK.

Nothing is stored on OpenAI's side (`store: false`): every request carries the whole
conversation, and with it the reasoning items of earlier turns, exactly as received with
their encrypted content, so a reasoning model keeps its chain across tool calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import responses_tools
from .base import (
    AssistantMessage,
    Message,
    ModelOptions,
    ProviderError,
    Reasoning,
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
from .streams import count, events, get, incomplete, mid_stream_error


class OpenAIResponsesProvider(OpenAIClient):
    name = "openai-responses"
    streams = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 600.0,
        options: ModelOptions | None = None,
        summary: str | None = "auto",
    ) -> None:
        super().__init__(
            model, base_url=base_url, api_key_env=api_key_env, timeout=timeout, options=options
        )
        self.summary = summary

    @property
    def reasons(self) -> bool:
        return self.options.info.reasoning or self.options.reasoning_effort is not None

    def request(self, system: str, messages: Sequence[Message]) -> dict[str, Any]:
        options = self.options
        body: dict[str, Any] = {
            "model": self.model,
            "instructions": system,
            "input": to_responses(messages),
            "tools": responses_tools(),
            "store": False,
            "max_output_tokens": options.output_limit,
        }
        if self.reasons:
            reasoning: dict[str, Any] = {}
            if options.reasoning_effort is not None:
                reasoning["effort"] = options.reasoning_effort
            if self.summary is not None:
                reasoning["summary"] = self.summary
            body["reasoning"] = reasoning
            body["include"] = ["reasoning.encrypted_content"]
        if options.cache and self.takes_cache_key and self.cache_key:
            body["prompt_cache_key"] = self.cache_key
        return body

    def complete(
        self, system: str, messages: Sequence[Message], sink: StreamSink | None = None
    ) -> Turn:
        body = self.request(system, messages)
        create: Any = self.client.responses.create
        if not self.options.stream:
            return from_response(call_sdk(self._sdk, self.key_hint, lambda: create(**body)))
        stream = call_sdk(self._sdk, self.key_hint, lambda: create(**body, stream=True))
        return assemble(events(self._sdk, self.key_hint, stream), sink, self.key_hint)


def to_responses(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The neutral transcript as Responses input items."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            out += [
                dict(r.native) for r in message.reasoning if r.native.get("type") == "reasoning"
            ]
            if message.text:
                out.append({"role": "assistant", "content": message.text})
            out += [
                {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name or "",
                    "arguments": arguments_text(call.arguments),
                }
                for call in message.calls
            ]
        elif isinstance(message, ToolResults):
            out += [
                {"type": "function_call_output", "call_id": r.call_id, "output": r.text}
                for r in message.results
            ]
    return out


def assemble(stream: Any, sink: StreamSink | None = None, key_hint: str = "") -> Turn:
    """A streamed response: deltas go to `sink`; the turn is built from the finished items
    (`response.output_item.done`) once `response.completed` (or `.incomplete`) arrives."""
    items: dict[int, Any] = {}
    seen = 0
    for event in stream:
        seen += 1
        kind = get(event, "type")
        if kind == "response.output_text.delta" and sink is not None:
            sink.text(str(get(event, "delta") or ""))
        elif kind == "response.reasoning_summary_text.delta" and sink is not None:
            sink.thinking(str(get(event, "delta") or ""))
        elif kind == "response.output_item.done":
            index = get(event, "output_index")
            items[index if isinstance(index, int) else len(items)] = get(event, "item")
        elif kind in ("response.completed", "response.incomplete"):
            response = get(event, "response")
            output = get(response, "output") or [items[i] for i in sorted(items)]
            return _turn(output, response)
        elif kind == "response.failed":
            error = get(get(event, "response"), "error")
            raise mid_stream_error(str(get(error, "message")), get(error, "code"), key_hint)
        elif kind == "error":
            raise mid_stream_error(str(get(event, "message")), get(event, "code"), key_hint)
    raise incomplete("response.completed", seen)


def from_response(response: Any) -> Turn:
    output = get(response, "output")
    if not isinstance(output, list):
        raise ProviderError("the model server's answer is not a Responses response", retryable=True)
    return _turn(output, response)


def _turn(output: list[Any], response: Any) -> Turn:
    texts: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[Reasoning] = []
    for item in output:
        kind = get(item, "type")
        if kind == "message":
            texts += [
                str(get(part, "text") or "")
                for part in get(item, "content") or ()
                if get(part, "type") == "output_text"
            ]
        elif kind == "function_call":
            calls.append(
                ToolCall(get(item, "call_id") or None, get(item, "name"), get(item, "arguments"))
            )
        elif kind == "reasoning":
            summary = [str(get(s, "text") or "") for s in get(item, "summary") or ()]
            reasoning.append(Reasoning("reasoning", "\n\n".join(summary), _native(item)))
    return Turn(
        "".join(texts),
        tuple(calls),
        usage(get(response, "usage")),
        _stop(response),
        tuple(reasoning),
    )


def _native(item: Any) -> dict[str, Any]:
    """The item exactly as the server sent it (the SDK keeps the fields that were set)."""
    if isinstance(item, dict):
        return dict(item)
    found: dict[str, Any] = item.to_dict(mode="json", exclude_unset=True)
    return found


def _stop(response: Any) -> str | None:
    status = get(response, "status")
    reason = get(get(response, "incomplete_details"), "reason")
    if status == "incomplete" and isinstance(reason, str):
        return reason  # max_output_tokens, content_filter
    return status if isinstance(status, str) else None


def usage(used: Any) -> Usage:
    total = count(get(used, "input_tokens"))
    details = get(used, "input_tokens_details")
    output = get(used, "output_tokens_details")
    return Usage(
        prompt_tokens=total,
        completion_tokens=count(get(used, "output_tokens")),
        cached_tokens=count(get(details, "cached_tokens")),
        cache_creation_input_tokens=count(get(details, "cache_write_tokens")),
        input_tokens=total,
        reasoning_tokens=count(get(output, "reasoning_tokens")),
    )
