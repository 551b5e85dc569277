"""The recorded responses in tests/fixtures/wire (see its README for their sources), played
through the real SDKs and the product's parsers: what the references show is what we read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from epistemic_agent.providers import ProviderError
from epistemic_agent.providers.base import UserMessage
from fakeserver import FakeServer
from providerkit import Recorder, provider_for
from wire import SSE, AnthropicWire, OpenAIWire, ResponsesWire

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("clean_env")]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wire"


class Sink:
    def __init__(self) -> None:
        self.recorder = Recorder()

    def text(self, delta: str) -> None:
        self.recorder.model_delta(1, "text", delta)

    def thinking(self, delta: str) -> None:
        self.recorder.model_delta(1, "thinking", delta)


def play(server: FakeServer, wire: Any, name: str, status: int = 200) -> tuple[Any, Sink]:
    data = (FIXTURES / name).read_bytes()
    headers = SSE if name.endswith(".sse") else {}
    server.push(status, data, headers=headers)
    sink = Sink()
    provider: Any = provider_for(wire, server)
    turn = provider.complete(
        "system", [UserMessage("What is the weather like in San Francisco?")], sink
    )
    return turn, sink


def test_anthropic_tool_use_stream(server: FakeServer) -> None:
    turn, sink = play(server, AnthropicWire(True), "anthropic-messages-tool-use.sse")

    assert turn.text == "Okay, let's check the weather for San Francisco, CA:"
    assert "".join(sink.recorder.deltas()) == turn.text
    [call] = turn.calls
    assert (call.id, call.name) == ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather")
    assert json.loads(call.arguments) == {"location": "San Francisco, CA", "unit": "fahrenheit"}
    assert turn.stop_reason == "tool_use"
    usage = turn.usage
    assert (usage.prompt_tokens, usage.input_tokens, usage.completion_tokens) == (472, 472, 89)


def test_anthropic_thinking_stream(server: FakeServer) -> None:
    turn, sink = play(server, AnthropicWire(True), "anthropic-messages-thinking.sse")

    [thought] = turn.reasoning
    assert thought.kind == "thinking"
    assert thought.text.startswith(
        "Let me solve this step by step:\n\n1. First break down 27 * 453"
    )
    assert thought.text.endswith("6. 10,800 + 1,350 + 81 = 12,231")
    assert thought.native["signature"] == "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds..."
    assert "".join(sink.recorder.deltas("thinking")) == thought.text
    assert turn.text == "27 * 453 = 12,231"
    assert turn.usage.input_tokens is None  # the page's stream reports no usage


def test_anthropic_overloaded_mid_stream(server: FakeServer) -> None:
    with pytest.raises(ProviderError) as caught:
        play(server, AnthropicWire(True), "anthropic-messages-overloaded.sse")
    assert caught.value.retryable
    assert "(overloaded_error): Overloaded" in str(caught.value)


@pytest.mark.parametrize(
    ("wire", "name", "status", "context"),
    [
        (AnthropicWire(True), "anthropic-error.json", 404, False),
        (AnthropicWire(True), "anthropic-error-too-long.json", 400, True),
        (OpenAIWire(True), "openai-error-context-length.json", 400, True),
        (ResponsesWire(True), "openai-error-context-length.json", 400, True),
    ],
)
def test_error_bodies(
    server: FakeServer, wire: object, name: str, status: int, context: bool
) -> None:
    with pytest.raises(ProviderError) as caught:
        play(server, wire, name, status)
    error = caught.value
    expected = json.loads((FIXTURES / name).read_text())["error"]["message"]
    assert (error.status, error.context_limit, error.retryable) == (status, context, False)
    assert expected in str(error)


def test_openai_chat_stream(server: FakeServer) -> None:
    turn, sink = play(server, OpenAIWire(True), "openai-chat-stream.sse")

    assert (turn.text, turn.calls, turn.stop_reason) == ("Hello", (), "stop")
    assert sink.recorder.deltas() == ["Hello"]


def test_openai_chat_tool_call_stream(server: FakeServer) -> None:
    turn, _ = play(server, OpenAIWire(True), "openai-chat-tool-call.sse")

    [call] = turn.calls
    assert (call.id, call.name, call.arguments) == (
        "call_DdmO9pD3xa9XTPNJ32zg2hcA",
        "get_weather",
        '{"location":"Paris, France"}',
    )
    assert turn.stop_reason == "tool_calls"
    assert (turn.usage.input_tokens, turn.usage.completion_tokens) == (19, 10)


def test_openai_responses_function_call_stream(server: FakeServer) -> None:
    turn, _ = play(server, ResponsesWire(True), "openai-responses-function-call.sse")

    [call] = turn.calls
    assert (call.id, call.name, call.arguments) == (
        "call_1234xyz",
        "get_weather",
        '{"location":"Paris, France"}',
    )
    assert turn.stop_reason == "completed"
    assert (turn.usage.input_tokens, turn.usage.completion_tokens) == (37, 11)
