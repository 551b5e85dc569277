"""Reasoning models: Anthropic's thinking blocks and OpenAI's reasoning items go back to the
provider exactly as received, and what they show is journaled as `thinking` records, apart
from the declared reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from epistemic_agent.providers.models import ModelInfo
from fakeserver import FakeServer
from providerkit import (
    REASON,
    bash,
    of_kind,
    provider_for,
    push_calls,
    push_final,
    records,
    run_agent,
)
from wire import MODEL, AnthropicWire, OpenAIWire, ResponsesWire

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("clean_env")]

THOUGHT = {
    "type": "thinking",
    "thinking": "The user wants the listing; `ls` answers that without changing anything.",
    "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/=",
}
HIDDEN = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"}
REASONING = {
    "id": "rs_68af1e3c",
    "type": "reasoning",
    "summary": [
        {"type": "summary_text", "text": "**Listing first**\n\nI should look before editing."}
    ],
    "encrypted_content": "gAAAAABo_r1Wv0m9Zr0sfEwV4rPqH0xkqk3N-opaque-",
}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_thinking_blocks_go_back_exactly_with_their_signatures(
    server: FakeServer, tmp_path: Path, stream: bool
) -> None:
    wire = AnthropicWire(stream)
    push_calls(wire, server, bash("c1", "ls"), text="Listing.", thinking=[THOUGHT, HIDDEN])
    push_final(wire, server, "Done.")

    provider = provider_for(wire, server, thinking=2048)
    stop, journal, _ = run_agent(tmp_path, provider)

    assert stop.reason == "finished"
    first, second = server.bodies()
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first["max_tokens"] == provider.options.output_limit + 2048  # type: ignore[attr-defined]
    [assistant] = [m for m in second["messages"] if m["role"] == "assistant"]
    assert assistant["content"][:2] == [THOUGHT, HIDDEN]  # first, unchanged, signature and all
    assert [b["type"] for b in assistant["content"][2:]] == ["text", "tool_use"]
    thinking = of_kind(journal, "thinking")
    assert [(r["step"], r["block"], r["text"]) for r in thinking] == [
        (1, "thinking", THOUGHT["thinking"]),
        (1, "redacted_thinking", ""),
    ]
    assert "signature" not in str(thinking)  # opaque: sent back, not journaled
    [model, _] = of_kind(journal, "model")
    assert model["thinking"] == 2
    assert of_kind(journal, "call")[0]["reason"] == REASON  # the declared reason, apart


def test_adaptive_thinking(server: FakeServer, tmp_path: Path) -> None:
    wire = AnthropicWire(True)
    push_final(wire, server, "Done.", thinking=[THOUGHT])

    run_agent(tmp_path, provider_for(wire, server, thinking="adaptive"))

    [body] = server.bodies()
    assert body["thinking"] == {"type": "adaptive"}
    assert [r["text"] for r in records(tmp_path, "thinking")] == [THOUGHT["thinking"]]


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_responses_keeps_reasoning_items_across_turns(
    server: FakeServer, tmp_path: Path, stream: bool
) -> None:
    wire = ResponsesWire(stream)
    push_calls(wire, server, bash("call_1", "ls"), reasoning=[REASONING], tokens=(900, 300, 0))
    push_calls(wire, server, bash("call_2", "pwd"), tokens=(1400, 80, 896))
    push_final(wire, server, "All listed.")
    reasoner = ModelInfo(MODEL, reasoning=True, max_output=4000)

    stop, journal, _ = run_agent(
        tmp_path, provider_for(wire, server, info=reasoner, reasoning_effort="high")
    )

    assert (stop.reason, stop.final) == ("finished", "All listed.")
    first, second, third = server.bodies()
    for body in (first, second, third):
        assert body["store"] is False
        assert body["reasoning"] == {"effort": "high", "summary": "auto"}
        assert body["include"] == ["reasoning.encrypted_content"]
        assert body["max_output_tokens"] == 4000
    kinds = [item.get("type") or item.get("role") for item in second["input"]]
    assert kinds == ["user", "reasoning", "function_call", "function_call_output"]
    assert second["input"][1] == REASONING  # exactly as received, encrypted content included
    assert second["input"][2] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "bash",
        "arguments": second["input"][2]["arguments"],
    }
    assert third["input"][: len(second["input"])] == second["input"]  # kept on later turns
    [thought] = of_kind(journal, "thinking")
    assert (thought["block"], thought["provider"]) == ("reasoning", "openai-responses")
    assert thought["text"] == REASONING["summary"][0]["text"]  # type: ignore[index]
    assert [c["command"] for c in of_kind(journal, "call")] == ["ls", "pwd"]


def test_responses_without_reasoning_for_a_plain_model(server: FakeServer, tmp_path: Path) -> None:
    wire = ResponsesWire(True)
    push_final(wire, server, "Hi.")

    run_agent(tmp_path, provider_for(wire, server))

    [body] = server.bodies()
    assert "reasoning" not in body and "include" not in body
    assert body["tools"][0] == {
        "type": "function",
        "name": "bash",
        "description": body["tools"][0]["description"],
        "parameters": body["tools"][0]["parameters"],
        "strict": False,
    }


def test_responses_cut_at_the_output_limit_says_so(server: FakeServer, tmp_path: Path) -> None:
    wire = ResponsesWire(True)
    push_final(wire, server, "I was going to say", status="incomplete")

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert stop.reason == "finished"
    assert "cut at the token limit" in stop.message
    assert of_kind(journal, "model")[0]["stop_reason"] == "max_output_tokens"


def test_chat_completions_reasoning_models_get_their_parameters(
    server: FakeServer, tmp_path: Path
) -> None:
    wire = OpenAIWire(True)
    push_final(wire, server, "Hi.")
    reasoner = ModelInfo(
        MODEL, reasoning=True, max_output=9000, max_tokens_param="max_completion_tokens"
    )

    run_agent(tmp_path, provider_for(wire, server, info=reasoner, reasoning_effort="low"))

    [body] = server.bodies()
    assert (body["reasoning_effort"], body["max_completion_tokens"]) == ("low", 9000)
    assert "max_tokens" not in body
    assert body["stream_options"] == {"include_usage": True}


def test_chat_completions_for_an_unknown_model_sends_no_limit_unless_asked(
    server: FakeServer, tmp_path: Path
) -> None:
    wire = OpenAIWire(True)
    push_final(wire, server, "Hi.")
    push_final(wire, server, "Hi again.")

    run_agent(tmp_path, provider_for(wire, server))
    (tmp_path / "b").mkdir()
    run_agent(tmp_path / "b", provider_for(wire, server, max_output=1234))

    plain, limited = server.bodies()
    assert "max_tokens" not in plain and "max_completion_tokens" not in plain
    assert limited["max_tokens"] == 1234
