"""Long sessions: old tool output is compacted to a line naming its evidence, every
declaration stays intact, each compaction is journaled, and a session does not fail for
context length while something can still shrink."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import epistemic
from epistemic_agent.agent.compaction import MARK, Compactor, ContextTooSmall
from epistemic_agent.agent.loop import Agent, AgentConfig
from epistemic_agent.providers.base import (
    AssistantMessage,
    Message,
    Reasoning,
    ToolCall,
    ToolResult,
    ToolResults,
    Turn,
    UserMessage,
)
from epistemic_agent.providers.replay import ReplayProvider
from epistemic_agent.session.session import Session
from fakeserver import FakeServer
from providerkit import (
    bash,
    clean_subprocess_env,
    of_kind,
    provider_for,
    push_calls,
    push_final,
    records,
    run_agent,
)
from wire import AnthropicWire

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("clean_env")]
REASON = "Read the next chunk of the log; I need all of it before deciding."


def transcript(outputs: list[int], thinking: bool = False) -> list[Message]:
    messages: list[Message] = [UserMessage("task")]
    for n, size in enumerate(outputs, start=1):
        reasoning = (
            (
                Reasoning(
                    "thinking",
                    "t" * 500,
                    {"type": "thinking", "thinking": "t" * 500, "signature": "s"},
                ),
            )
            if thinking
            else ()
        )
        call = ToolCall(
            f"c{n}", "bash", {"command": f"cat part{n}", "type": "collect-info", "reason": REASON}
        )
        messages.append(AssistantMessage(f"turn {n}", (call,), reasoning))
        evidence = (("stdout", f"{n:064x}"),)
        messages.append(
            ToolResults((ToolResult(f"c{n}", "x" * size, False, n, "collect-info", evidence),))
        )
    return messages


def declarations(messages: list[Message]) -> list[Any]:
    return [
        (m.text, getattr(m, "calls", None))
        for m in messages
        if isinstance(m, AssistantMessage | UserMessage)
    ]


def test_shrinks_the_oldest_outputs_first_and_keeps_every_declaration() -> None:
    messages = transcript([3000] * 6)
    compactor = Compactor(context_window=8000, output_limit=1000, fixed_chars=2800)
    kept = declarations(messages)
    assert compactor.due(messages)

    done = compactor.shrink(messages, "near-limit")

    assert done is not None and done.trigger == "near-limit"
    assert declarations(messages) == kept
    results = [m.results[0] for m in messages if isinstance(m, ToolResults)]
    shrunk = [r.seq for r in results if r.text.startswith(MARK)]
    assert shrunk == list(done.calls) == list(range(1, len(shrunk) + 1))  # the oldest first
    assert results[-1].text == "x" * 3000  # the newest output stays whole
    assert results[0].text == (
        f"{MARK} to fit the context window: 3000 characters from call 1 (collect-info); "
        f"the full output is in the evidence store: stdout sha256:{1:064x}]"
    )
    assert done.after <= 0.6 * 7000 < done.before
    assert compactor.estimate(messages) == done.after
    assert not compactor.due(messages)
    assert (
        compactor.shrink(messages, "near-limit") is None
        or compactor.estimate(messages) <= done.after
    )


def test_drops_old_thinking_only_when_outputs_are_not_enough() -> None:
    messages = transcript([10] * 30, thinking=True)
    compactor = Compactor(context_window=7000, output_limit=0, fixed_chars=2800)

    done = compactor.shrink(messages, "provider-limit")

    assert done is not None and done.reasoning_dropped == 29
    turns = [m for m in messages if isinstance(m, AssistantMessage)]
    assert all(not t.reasoning for t in turns[:-1]) and turns[-1].reasoning  # the newest kept


def test_nothing_to_shrink_says_so() -> None:
    messages: list[Message] = [UserMessage("a very long task " * 500)]
    assert Compactor(1000, 0, 2800).shrink(messages, "provider-limit") is None


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 6000), min_size=1, max_size=12),
    st.integers(3000, 40_000),
    st.booleans(),
)
def test_compaction_never_touches_a_declaration(
    sizes: list[int], window: int, thinking: bool
) -> None:
    messages = transcript(sizes, thinking)
    before = list(messages)
    compactor = Compactor(window, 0, 2800)
    estimate = compactor.estimate(messages)

    done = compactor.shrink(messages, "near-limit" if window % 2 else "provider-limit")

    assert declarations(messages) == declarations(before)
    for old, new in zip(before, messages, strict=True):
        if isinstance(old, ToolResults):
            assert isinstance(new, ToolResults)
            for a, b in zip(old.results, new.results, strict=True):
                assert (a.call_id, a.is_error, a.seq, a.evidence) == (
                    b.call_id,
                    b.is_error,
                    b.seq,
                    b.evidence,
                )
                assert b.text == a.text or (b.text.startswith(MARK) and f"call {a.seq}" in b.text)
    if done is None:
        assert messages == before
    else:
        assert compactor.estimate(messages) < estimate


def test_a_window_too_small_for_the_fixed_prompt_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"final": "done"}]), "utf-8")
    with (
        Session(tmp_path) as session,
        pytest.raises(ContextTooSmall, match="cannot hold the fixed prompt"),
    ):
        Agent(session, ReplayProvider(script), AgentConfig(context_window=600))

    workspace = tmp_path / "ws"
    workspace.mkdir()
    done = run_with_window("600", script, workspace)
    assert done.returncode == 2
    assert "epistemic: the context window (600 tokens) cannot hold the fixed prompt" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (workspace / ".epistemic").exists()  # refused before anything was journaled
    bad = run_with_window("-5", script, workspace)
    assert bad.returncode == 2 and "--context-window must be positive" in bad.stderr


def run_with_window(tokens: str, script: Path, ws: Path) -> subprocess.CompletedProcess[str]:
    """`epistemic run` of the replay `script` in `ws` with `--context-window TOKENS`."""
    argv = ("run", "--model", f"replay:{script}", "--context-window", tokens, "-C", str(ws), "t")
    return epistemic(*argv, env=clean_subprocess_env(), timeout=60)


class Recording(ReplayProvider):
    def complete(self, system: str, messages: list[Message]) -> Turn:
        self.sent = [*getattr(self, "sent", []), list(messages)]
        return super().complete(system, messages)


@pytest.mark.system  # end to end, slow for the default tier
def test_a_long_replayed_session_is_compacted_and_journaled(tmp_path: Path) -> None:
    turns = [
        {
            "calls": [
                {
                    "tool": "bash",
                    "args": {
                        "command": f"python3 -c \"print('{n}' * 3000)\"",
                        "type": "collect-info",
                        "reason": REASON,
                    },
                }
            ]
        }
        for n in range(8)
    ]
    script = tmp_path / "s.json"
    script.write_text(json.dumps([*turns, {"final": "done"}]), "utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    provider = Recording(script)

    with Session(workspace) as session:
        stop = Agent(session, provider, AgentConfig(context_window=7000)).run("read it all")

    assert stop.reason == "finished"
    journal = records(workspace)
    compactions = of_kind(journal, "compaction")
    assert compactions and all(c["trigger"] == "near-limit" for c in compactions)
    assert compactions[0]["context_window"] == 7000
    assert compactions[0]["estimated_tokens_after"] < compactions[0]["estimated_tokens_before"]
    # every declaration is in the journal and was sent back whole, every time
    assert [c["seq"] for c in of_kind(journal, "call")] == list(range(1, 9))
    last = provider.sent[-1]
    sent_calls = [m.calls[0].arguments for m in last if isinstance(m, AssistantMessage)]
    assert sent_calls == [t["calls"][0]["args"] for t in turns]
    # a compacted output names the very evidence the outcome record stored
    outcomes = {o["seq"]: o for o in of_kind(journal, "outcome")}
    shrunk = [
        r for m in last if isinstance(m, ToolResults) for r in m.results if r.text.startswith(MARK)
    ]
    compacted = [seq for c in compactions for seq in c["calls"]]
    assert shrunk and [r.seq for r in shrunk] == compacted == list(range(1, len(shrunk) + 1))
    for result in shrunk:
        digest = outcomes[result.seq]["evidence"]["stdout"]["sha256"]
        assert f"stdout sha256:{digest}" in result.text
        assert (workspace / ".epistemic" / "evidence" / digest[:2] / digest).is_file()


def test_a_provider_overflow_is_compacted_and_retried(server: FakeServer, tmp_path: Path) -> None:
    wire = AnthropicWire(True)
    big = "python3 -c \"print('y' * 4000)\""
    push_calls(wire, server, bash("c1", big))
    push_calls(wire, server, bash("c2", big))
    too_long = wire.error(400, "prompt is too long: 210345 tokens > 200000 maximum")
    server.push(400, too_long)
    push_final(wire, server, "Done.")

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert (stop.reason, stop.final) == ("finished", "Done.")
    [error] = of_kind(journal, "model-error")
    assert (error["status"], error["retrying"]) == (400, True)
    [compaction] = of_kind(journal, "compaction")
    assert compaction["trigger"] == "provider-limit" and compaction["calls"] == [1, 2]
    refused, retried = server.bodies()[2:]
    assert len(json.dumps(retried)) < len(json.dumps(refused)) - 3000
    assert MARK in json.dumps(retried)
    assert of_kind(journal, "model")[-1]["attempts"] == 2


def test_an_overflow_with_nothing_left_to_shrink_ends_clearly(
    server: FakeServer, tmp_path: Path
) -> None:
    wire = AnthropicWire(True)
    server.push(400, wire.error(400, "prompt is too long: 250000 tokens > 200000 maximum"))

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert (stop.reason, stop.exit_code) == ("provider-error", 5)
    assert "nothing is left to compact" in stop.message
    assert len(server.requests) == 1
    assert of_kind(journal, "compaction") == []


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("turn"), st.integers(0, 3000), st.booleans()),
            st.tuples(st.just("estimate"), st.just(0), st.just(False)),
            st.tuples(st.just("shrink"), st.integers(1000, 20000), st.booleans()),
            st.tuples(st.just("other list"), st.just(0), st.just(False)),
        ),
        max_size=40,
    )
)
def test_the_kept_measure_always_equals_measuring_the_whole_transcript(
    steps: list[tuple[str, int, bool]],
) -> None:
    """The size is kept as the transcript grows (each message measured once), yet after any
    mix of turns, estimates, compactions (results shrunk, thinking dropped) and a different
    transcript, it is what measuring every message again would give."""
    from epistemic_agent.agent.compaction import message_size

    compactor = Compactor(context_window=None, output_limit=0, fixed_chars=0, ratio=1.0)
    messages = transcript([])
    for n, (what, amount, flag) in enumerate(steps):
        if what == "turn":  # a user message last: a shrink replaces messages before it
            messages += [*transcript([amount], thinking=flag)[1:], UserMessage("go on")]
        elif what == "shrink":
            compactor.context_window = amount
            compactor.shrink(messages, "near-limit" if flag else "provider-limit")
        elif what == "other list":
            messages = transcript([n * 10, 5])
        assert compactor.estimate(messages) == sum(message_size(m) for m in messages)


def test_the_estimate_measures_only_the_new_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """The work of an estimate does not grow with the transcript: one new turn is two new
    messages measured, after 10 turns as after 2,000."""
    import epistemic_agent.agent.compaction as compaction

    measured: list[Message] = []
    real = compaction.message_size

    def counting(message: Message) -> int:
        measured.append(message)
        return real(message)

    monkeypatch.setattr(compaction, "message_size", counting)
    compactor = Compactor(context_window=None, output_limit=0, fixed_chars=0)
    messages = transcript([])
    counts = {}
    for turn in range(1, 2001):
        messages += transcript([50])[1:]
        measured.clear()
        compactor.learn(messages, None)
        compactor.due(messages)
        counts[turn] = len(measured)
    assert counts[10] == counts[2000] == 2
