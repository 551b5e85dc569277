"""Prompt caching: Anthropic's breakpoints where they pay, OpenAI's byte-stable prefix and
`prompt_cache_key`, and the cache tokens each provider reports, in the record."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from epistemic_agent.providers.models import ModelInfo
from fakeserver import FakeServer
from providerkit import bash, of_kind, provider_for, push_calls, push_final, records, run_agent
from wire import MODEL, AnthropicWire, OpenAIWire, ResponsesWire, Wire

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("clean_env")]
EPHEMERAL = {"type": "ephemeral"}


def three_turns(wire: Wire, server: FakeServer, tmp_path: Path, **options: Any) -> list[Any]:
    """A session of four requests (three calls, then the answer); the bodies the server got."""
    for n in range(3):
        push_calls(wire, server, bash(f"call_{n}", f"echo {n}"), text=f"Step {n}.")
    push_final(wire, server, "Done.")
    stop, _, _ = run_agent(tmp_path, provider_for(wire, server, **options), task="count")
    assert stop.reason == "finished"
    bodies: list[Any] = server.bodies()
    assert len(bodies) == 4
    return bodies


def breakpoints(body: Any) -> list[str]:
    """Where the request's cache_control markers are, by place."""
    found = [f"tools[{i}]" for i, tool in enumerate(body["tools"]) if "cache_control" in tool]
    system = body["system"]
    if isinstance(system, list):
        found += [f"system[{i}]" for i, b in enumerate(system) if "cache_control" in b]
    for m, message in enumerate(body["messages"]):
        for b, block in enumerate(message["content"]):
            if "cache_control" in block:
                assert block["cache_control"] == EPHEMERAL
                found.append(f"messages[{m}].{message['role']}[{b}]")
    return found


def unmarked(value: Any) -> Any:
    """The request without its cache markers (they are not part of the cached prefix)."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_anthropic_marks_the_system_prompt_and_the_newest_turns(
    server: FakeServer, tmp_path: Path, stream: bool
) -> None:
    bodies = three_turns(AnthropicWire(stream), server, tmp_path)

    # request 1: [user]; 2: [user, assistant, user]; 3: ... the user turns are at even indexes
    assert breakpoints(bodies[0]) == ["system[0]", "messages[0].user[0]"]
    assert breakpoints(bodies[1]) == ["system[0]", "messages[0].user[0]", "messages[2].user[0]"]
    assert breakpoints(bodies[3]) == ["system[0]", "messages[4].user[0]", "messages[6].user[0]"]
    for body in bodies:
        assert len(breakpoints(body)) <= 4  # the API's limit
        assert body["system"][0]["text"] == bodies[0]["system"][0]["text"]
        # the tools come before the system prompt in the cached prefix: its breakpoint covers them
        assert all("cache_control" not in tool for tool in body["tools"])
    # the newest breakpoint of one request is the one before the newest of the next: a read
    for before, after in pairwise(bodies):
        assert breakpoints(before)[-1] in breakpoints(after)


def test_without_caching_no_breakpoint_is_sent(server: FakeServer, tmp_path: Path) -> None:
    bodies = three_turns(AnthropicWire(True), server, tmp_path, cache=False)

    assert all(isinstance(body["system"], str) for body in bodies)
    assert "cache_control" not in json.dumps(bodies)


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize(
    "wire",
    [AnthropicWire(True), OpenAIWire(True), OpenAIWire(False), ResponsesWire(True)],
    ids=lambda w: w.id,
)
def test_the_prefix_is_stable_across_turns(wire: Wire, server: FakeServer, tmp_path: Path) -> None:
    bodies = three_turns(wire, server, tmp_path)

    for before, after in pairwise(bodies):
        old, new = unmarked(wire.history(before)), unmarked(wire.history(after))
        assert new[: len(old)] == old  # every earlier message is resent unchanged
        assert len(new) > len(old)
        for key in ("tools", "system", "instructions", "model"):
            if key in before:
                assert unmarked(before[key]) == unmarked(after[key])


@pytest.mark.parametrize("wire", [OpenAIWire(True), ResponsesWire(True)], ids=lambda w: w.id)
def test_openai_requests_are_byte_prefixes_of_the_next(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    """Automatic prefix caching matches bytes: each body, up to the end of its history, is
    the start of the next body, byte for byte."""
    three_turns(wire, server, tmp_path)
    raw = [request.body for request in server.requests]
    key = b'"messages":[' if isinstance(wire, OpenAIWire) else b'"input":['
    for before, after in pairwise(raw):
        history = wire.history(json.loads(before))
        start = before.index(key) + len(key)
        items = json.dumps(history, separators=(",", ":"), ensure_ascii=False).encode()[1:-1]
        assert before[start : start + len(items)] == items
        assert after.startswith(before[: start + len(items)])


@pytest.mark.parametrize("wire", [OpenAIWire(True), ResponsesWire(True)], ids=lambda w: w.id)
def test_prompt_cache_key_is_the_session_id_where_the_server_takes_one(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    takes = ModelInfo(MODEL, prompt_cache_key=True)
    bodies = three_turns(wire, server, tmp_path, info=takes)

    [header] = records(tmp_path, "session")
    assert {body["prompt_cache_key"] for body in bodies} == {header["session"]}


@pytest.mark.parametrize("wire", [OpenAIWire(True), ResponsesWire(True)], ids=lambda w: w.id)
def test_no_prompt_cache_key_for_other_servers_or_without_caching(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    bodies = three_turns(wire, server, tmp_path)  # 127.0.0.1 is not OpenAI's API
    assert all("prompt_cache_key" not in body for body in bodies)
    server.requests.clear()
    (tmp_path / "b").mkdir()
    again = three_turns(
        wire, server, tmp_path / "b", info=ModelInfo(MODEL, prompt_cache_key=True), cache=False
    )
    assert all("prompt_cache_key" not in body for body in again)


@pytest.mark.parametrize(
    "wire",
    [AnthropicWire(True), AnthropicWire(False), OpenAIWire(True), ResponsesWire(True)],
    ids=lambda w: w.id,
)
def test_cache_reads_and_writes_are_recorded(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    push_calls(wire, server, bash("c1", "echo hi"), tokens=(3000, 40, 0, 2500))
    push_final(wire, server, tokens=(3100, 12, 2500, 550))

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert stop.reason == "finished"
    got = [
        (
            m["input_tokens"],
            m["cached_tokens"],
            m["cache_read_input_tokens"],
            m["cache_creation_input_tokens"],
        )
        for m in of_kind(journal, "model")
    ]
    assert got == [(3000, 0, 0, 2500), (3100, 2500, 2500, 550)]
    if isinstance(wire, AnthropicWire):  # its own figure: what was neither read nor written
        assert [m["prompt_tokens"] for m in of_kind(journal, "model")] == [500, 50]
