"""OpenAI-compatible Chat Completions through the official `openai` SDK (imported lazily)."""

from __future__ import annotations

import json
from typing import Any

from ..tools import openai_tools
from .base import (
    AssistantMessage,
    Message,
    ProviderError,
    ToolCall,
    ToolResults,
    Turn,
    Usage,
    UserMessage,
    api_key,
    call_sdk,
)


class OpenAIProvider:
    """Any server that speaks Chat Completions: OpenAI, vLLM, llama.cpp, Ollama, OpenRouter..."""

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 600.0,
    ) -> None:
        import openai

        key, self.key_hint = api_key(api_key_env, base_url, "OpenAI")
        self.model = model
        self.client = openai.OpenAI(
            api_key=key or "not-set", base_url=base_url, timeout=timeout, max_retries=0
        )
        self._sdk = openai

    def complete(self, system: str, messages: list[Message]) -> Turn:
        request: Any = [{"role": "system", "content": system}, *to_openai(messages)]
        tools: Any = openai_tools()
        response = call_sdk(
            self._sdk,
            self.key_hint,
            lambda: self.client.chat.completions.create(
                model=self.model, messages=request, tools=tools
            ),
        )
        return from_openai(response)


def to_openai(messages: list[Message]) -> list[dict[str, Any]]:
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
    arguments = call.arguments
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False, default=str)
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name or "", "arguments": arguments},
    }


def from_openai(response: Any) -> Turn:
    if not getattr(response, "choices", None):
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
    usage = response.usage
    details = getattr(usage, "prompt_tokens_details", None) if usage else None
    return Turn(
        message.content or "",
        calls,
        Usage(
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            cached_tokens=getattr(details, "cached_tokens", None),
        ),
        choice.finish_reason,
    )
