"""The three wire formats as the real APIs speak them, for the fake servers (stdlib only).

Each class builds what the provider's server sends (a whole JSON response, or the
server-sent events of a stream, with the events, field names, usage blocks with cache fields
and stop reasons of the real API; tests/fixtures/wire/README.md names the references) and
reads what the client sent. Streams split text and tool-call arguments into pieces the way
the servers do, so the client must reassemble them.
"""

from __future__ import annotations

import json
from typing import Any

from epistemic_agent.core.tools import anthropic_tools, openai_tools, responses_tools

MODEL = "test-model"

#: A tool call as the fake server sends it: (id or None for "no id", tool name, arguments).
Call = tuple[str | None, str, Any]
#: prompt (all input), completion, cached (read), and optionally written-to-cache tokens.
Tokens = tuple[int, ...]
SSE = {"Content-Type": "text/event-stream"}


def pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def named_events(events: list[dict[str, Any]]) -> bytes:
    """`event: TYPE` + `data: JSON` blocks (Anthropic Messages, OpenAI Responses)."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def data_events(chunks: list[dict[str, Any]]) -> bytes:
    """`data: JSON` blocks ended by `data: [DONE]` (OpenAI Chat Completions)."""
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)
    return (body + "data: [DONE]\n\n").encode()


def arguments(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args)


class OpenAIWire:
    """Chat Completions."""

    name = "openai"
    key_env = "OPENAI_API_KEY"
    path = "/v1/chat/completions"
    stop_calls, stop_final = "tool_calls", "stop"
    bad_arguments: tuple[Any, ...] = ("{bad",)

    def __init__(self, stream: bool = False) -> None:
        self.stream = stream
        self.id = f"{self.name}{'-stream' if stream else ''}"

    def base_url(self, server: Any) -> str:
        return str(server.url) + "/v1"

    def tools(self) -> list[dict[str, Any]]:
        return openai_tools()

    def usage(self, tokens: Tokens) -> dict[str, Any]:
        prompt, completion, cached = tokens[:3]
        details: dict[str, Any] = {"cached_tokens": cached, "audio_tokens": 0}
        if len(tokens) > 3:
            details["cache_write_tokens"] = tokens[3]
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": details,
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        }

    def response(
        self, text: str | None, calls: list[Call], tokens: Tokens | None, **extra: Any
    ) -> tuple[Any, dict[str, str]]:
        if self.stream:
            return self.chunks(text, calls, tokens), SSE
        message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
        if calls:
            message["tool_calls"] = [
                {
                    **({"id": call_id} if call_id is not None else {}),
                    "type": "function",
                    "function": {"name": name, "arguments": arguments(args)},
                }
                for call_id, name, args in calls
            ]
        body: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": self.stop_calls if calls else self.stop_final,
                }
            ],
        }
        if tokens is not None:
            body["usage"] = self.usage(tokens)
        return body, {}

    def chunks(self, text: str | None, calls: list[Call], tokens: Tokens | None) -> bytes:
        base = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": MODEL,
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return {**base, "system_fingerprint": "fp_fake", "choices": [choice]}

        out = [chunk({"role": "assistant", "content": ""})]
        out += [chunk({"content": piece}) for piece in (pieces(text, 5) if text else [])]
        for index, (call_id, name, args) in enumerate(calls):
            head: dict[str, Any] = {"index": index, "type": "function"}
            if call_id is not None:
                head["id"] = call_id
            head["function"] = {"name": name, "arguments": ""}
            out.append(chunk({"tool_calls": [head]}))
            out += [
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                for piece in pieces(arguments(args))
            ]
        out.append(chunk({}, self.stop_calls if calls else self.stop_final))
        if tokens is not None:
            out.append({**base, "choices": [], "usage": self.usage(tokens)})
        return data_events(out)

    def error(self, status: int, message: str, code: str | None = None) -> Any:
        kind = "invalid_request_error" if status == 400 else f"http_{status}"
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def system(self, body: Any) -> str:
        first = body["messages"][0]
        assert first["role"] == "system"
        return str(first["content"])

    def tool_names(self, body: Any) -> list[str]:
        return [tool["function"]["name"] for tool in body["tools"]]

    def history(self, body: Any) -> list[Any]:
        return list(body["messages"])

    def last_call_ids(self, body: Any) -> list[str]:
        last = [m for m in body["messages"] if m["role"] == "assistant"][-1]
        return [call["id"] for call in last["tool_calls"]]

    def results(self, body: Any) -> list[tuple[str, str]]:
        messages = body["messages"]
        start = max(i for i, m in enumerate(messages) if m["role"] == "assistant") + 1
        tail = messages[start:]
        assert all(m["role"] == "tool" for m in tail), tail
        return [(m["tool_call_id"], m["content"]) for m in tail]


class AnthropicWire:
    """Messages."""

    name = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    path = "/v1/messages"
    stop_calls, stop_final = "tool_use", "end_turn"
    bad_arguments: tuple[Any, ...] = ("oops", [1, 2])  # the SDK lets a non-object input through

    def __init__(self, stream: bool = False) -> None:
        self.stream = stream
        self.id = f"{self.name}{'-stream' if stream else ''}"

    def base_url(self, server: Any) -> str:
        return str(server.url)  # the SDK adds /v1 itself

    def tools(self) -> list[dict[str, Any]]:
        return anthropic_tools()

    def usage(self, tokens: Tokens) -> dict[str, Any]:
        """`input_tokens` counts what was neither read from nor written to the cache."""
        prompt, completion, cached = tokens[:3]
        written = tokens[3] if len(tokens) > 3 else 0
        return {
            "input_tokens": prompt - cached - written,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": cached,
            "cache_creation": {
                "ephemeral_5m_input_tokens": written,
                "ephemeral_1h_input_tokens": 0,
            },
            "output_tokens": completion,
            "service_tier": "standard",
        }

    def blocks(self, text: str | None, calls: list[Call], thinking: Any) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        for item in thinking or ():
            content.append(dict(item))
        if text:
            content.append({"type": "text", "text": text})
        content += [
            {
                "type": "tool_use",
                **({"id": call_id} if call_id is not None else {}),
                "name": name,
                "input": args,
            }
            for call_id, name, args in calls
        ]
        return content

    def response(
        self, text: str | None, calls: list[Call], tokens: Tokens | None, **extra: Any
    ) -> tuple[Any, dict[str, str]]:
        content = self.blocks(text, calls, extra.get("thinking"))
        stop = extra.get("stop") or (self.stop_calls if calls else self.stop_final)
        if self.stream:
            return self.events(content, tokens, stop), SSE
        body: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
        }
        if tokens is not None:
            body["usage"] = self.usage(tokens)
        return body, {}

    def events(self, content: list[dict[str, Any]], tokens: Tokens | None, stop: str) -> bytes:
        usage = self.usage(tokens) if tokens is not None else None
        message: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
        }
        if usage is not None:
            message["usage"] = {**usage, "output_tokens": 1}
        out: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
        for index, block in enumerate(content):
            out += self._block_events(index, block)
            if index == 0:
                out.append({"type": "ping"})
        delta: dict[str, Any] = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
        }
        if usage is not None:
            delta["usage"] = {"output_tokens": usage["output_tokens"]}
        out += [delta, {"type": "message_stop"}]
        return named_events(out)

    def _block_events(self, index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
        kind = block["type"]

        def delta(payload: dict[str, Any]) -> dict[str, Any]:
            return {"type": "content_block_delta", "index": index, "delta": payload}

        if kind == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [delta({"type": "text_delta", "text": p}) for p in pieces(block["text"], 5)]
        elif kind == "tool_use":
            start = {"type": "tool_use", "name": block["name"], "input": {}}
            if "id" in block:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = arguments(block["input"])
            deltas = [delta({"type": "input_json_delta", "partial_json": ""})]
            deltas += [delta({"type": "input_json_delta", "partial_json": p}) for p in pieces(raw)]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": ""}
            deltas = [
                delta({"type": "thinking_delta", "thinking": p})
                for p in pieces(block["thinking"], 9)
            ]
            deltas.append(delta({"type": "signature_delta", "signature": block["signature"]}))
        else:  # redacted_thinking arrives whole
            start, deltas = dict(block), []
        return [
            {"type": "content_block_start", "index": index, "content_block": start},
            *deltas,
            {"type": "content_block_stop", "index": index},
        ]

    def error(self, status: int, message: str, code: str | None = None) -> Any:
        kind = "invalid_request_error" if status == 400 else f"http_{status}"
        return {"type": "error", "error": {"type": kind, "message": message}}

    def system(self, body: Any) -> str:
        system = body["system"]
        if isinstance(system, list):
            return "".join(block["text"] for block in system)
        return str(system)

    def tool_names(self, body: Any) -> list[str]:
        return [tool["name"] for tool in body["tools"]]

    def history(self, body: Any) -> list[Any]:
        return list(body["messages"])

    def last_call_ids(self, body: Any) -> list[str]:
        last = [m for m in body["messages"] if m["role"] == "assistant"][-1]
        return [block["id"] for block in last["content"] if block["type"] == "tool_use"]

    def results(self, body: Any) -> list[tuple[str, str]]:
        last = body["messages"][-1]
        assert last["role"] == "user", last
        blocks = last["content"]
        assert all(block["type"] == "tool_result" for block in blocks), blocks
        return [(block["tool_use_id"], block["content"]) for block in blocks]


class ResponsesWire:
    """OpenAI Responses."""

    name = "openai-responses"
    key_env = "OPENAI_API_KEY"
    path = "/v1/responses"
    stop_calls = stop_final = "completed"
    bad_arguments: tuple[Any, ...] = ("{bad",)

    def __init__(self, stream: bool = True) -> None:
        self.stream = stream
        self.id = f"responses{'-stream' if stream else ''}"

    def base_url(self, server: Any) -> str:
        return str(server.url) + "/v1"

    def tools(self) -> list[dict[str, Any]]:
        return responses_tools()

    def usage(self, tokens: Tokens) -> dict[str, Any]:
        prompt, completion, cached = tokens[:3]
        details: dict[str, Any] = {"cached_tokens": cached}
        if len(tokens) > 3:
            details["cache_write_tokens"] = tokens[3]
        return {
            "input_tokens": prompt,
            "input_tokens_details": details,
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        }

    def items(self, text: str | None, calls: list[Call], reasoning: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [dict(item) for item in reasoning or ()]
        if text:
            out.append(
                {
                    "id": "msg_fake",
                    "type": "message",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            )
        for n, (call_id, name, args) in enumerate(calls):
            item: dict[str, Any] = {"type": "function_call", "id": f"fc_{n}", "name": name}
            if call_id is not None:
                item["call_id"] = call_id
            item.update(arguments=arguments(args), status="completed")
            out.append(item)
        return out

    def response(
        self, text: str | None, calls: list[Call], tokens: Tokens | None, **extra: Any
    ) -> tuple[Any, dict[str, str]]:
        output = self.items(text, calls, extra.get("reasoning"))
        status = extra.get("status", "completed")
        body: dict[str, Any] = {
            "id": "resp_fake",
            "object": "response",
            "created_at": 1_700_000_000,
            "status": status,
            "model": MODEL,
            "output": output,
            "usage": self.usage(tokens) if tokens is not None else None,
        }
        if status == "incomplete":
            body["incomplete_details"] = {"reason": "max_output_tokens"}
        if not self.stream:
            return body, {}
        return self.events(body), SSE

    def events(self, body: dict[str, Any]) -> bytes:
        started = {**body, "status": "in_progress", "output": [], "usage": None}
        out: list[dict[str, Any]] = [
            {"type": "response.created", "response": started},
            {"type": "response.in_progress", "response": started},
        ]
        for index, item in enumerate(body["output"]):
            out += self._item_events(index, item)
        final = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
        out.append({"type": final, "response": body})
        for number, event in enumerate(out):
            event["sequence_number"] = number
        return named_events(out)

    def _item_events(self, index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
        kind = item["type"]
        common = {"output_index": index, "item_id": item.get("id")}
        added = {"type": "response.output_item.added", "output_index": index}
        done = {"type": "response.output_item.done", "output_index": index, "item": item}
        if kind == "function_call":
            added["item"] = {**item, "arguments": "", "status": "in_progress"}
            deltas = [
                {"type": "response.function_call_arguments.delta", **common, "delta": p}
                for p in pieces(item["arguments"])
            ]
            deltas.append(
                {
                    "type": "response.function_call_arguments.done",
                    **common,
                    "arguments": item["arguments"],
                }
            )
        elif kind == "custom_tool_call":  # a freeform tool (Codex's apply_patch): raw input
            added["item"] = {**item, "input": "", "status": "in_progress"}
            deltas = [
                {"type": "response.custom_tool_call_input.delta", **common, "delta": p}
                for p in pieces(item["input"])
            ]
            deltas.append(
                {"type": "response.custom_tool_call_input.done", **common, "input": item["input"]}
            )
        elif kind == "message":
            added["item"] = {**item, "status": "in_progress", "content": []}
            text = item["content"][0]["text"]
            deltas = [
                {"type": "response.output_text.delta", **common, "content_index": 0, "delta": p}
                for p in pieces(text, 5)
            ]
            deltas.append(
                {"type": "response.output_text.done", **common, "content_index": 0, "text": text}
            )
        else:  # reasoning: its summary streams; encrypted content only comes with `.done`
            added["item"] = {"id": item["id"], "type": "reasoning", "summary": []}
            deltas = []
            for number, part in enumerate(item.get("summary") or ()):
                deltas += [
                    {
                        "type": "response.reasoning_summary_text.delta",
                        **common,
                        "summary_index": number,
                        "delta": p,
                    }
                    for p in pieces(part["text"], 9)
                ]
        return [added, *deltas, done]

    def error(self, status: int, message: str, code: str | None = None) -> Any:
        kind = "invalid_request_error" if status == 400 else f"http_{status}"
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def system(self, body: Any) -> str:
        return str(body["instructions"])

    def tool_names(self, body: Any) -> list[str]:
        return [tool["name"] for tool in body["tools"]]

    def history(self, body: Any) -> list[Any]:
        return list(body["input"])

    def last_call_ids(self, body: Any) -> list[str]:
        items = body["input"]
        calls = [i for i, item in enumerate(items) if item.get("type") == "function_call"]
        last = calls[-1]
        first = last
        while first - 1 in calls:
            first -= 1
        return [items[i]["call_id"] for i in range(first, last + 1)]

    def results(self, body: Any) -> list[tuple[str, str]]:
        items = body["input"]
        tail: list[dict[str, Any]] = []
        for item in reversed(items):
            if item.get("type") != "function_call_output":
                break
            tail.insert(0, item)
        assert tail, items[-1]
        return [(item["call_id"], item["output"]) for item in tail]


Wire = OpenAIWire | AnthropicWire | ResponsesWire
ALL_WIRES = (
    OpenAIWire(False),
    OpenAIWire(True),
    AnthropicWire(False),
    AnthropicWire(True),
    ResponsesWire(True),
    ResponsesWire(False),
)
