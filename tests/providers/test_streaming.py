"""Streams: text reaches the front end as it arrives, and a stream that is cut, malformed,
unfinished or reports an error mid-way is retried or ends in a clean provider error, never
in a half-parsed answer or a traceback."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from epistemic_agent.providers.base import ToolCall, Turn
from fakeserver import FakeServer
from providerkit import Recorder, bash, of_kind, provider_for, push_calls, push_final, run_agent
from wire import SSE, AnthropicWire, OpenAIWire, ResponsesWire, Wire, named_events

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("clean_env")]

STREAMS = (OpenAIWire(True), AnthropicWire(True), ResponsesWire(True))


@pytest.fixture(params=STREAMS, ids=lambda wire: wire.id)
def wire(request: pytest.FixtureRequest) -> Wire:
    chosen: Wire = request.param
    return chosen


def stream_body(wire: Wire, text: str, calls: list[Any] | None = None) -> bytes:
    body, _ = wire.response(text, calls or [], (50, 10, 0))
    assert isinstance(body, bytes)
    return body


def blocks(body: bytes) -> list[bytes]:
    return [block for block in body.split(b"\n\n") if block]


def join(parts: list[bytes]) -> bytes:
    return b"".join(part + b"\n\n" for part in parts)


def without_end(wire: Wire, body: bytes) -> bytes:
    """The stream as a server that stopped early (and closed cleanly) would send it."""
    parts = blocks(body)
    if isinstance(wire, OpenAIWire):  # everything from the chunk with the finish reason on
        cut = next(i for i, p in enumerate(parts) if b'"finish_reason": "' in p)
        return join(parts[:cut])
    end = b"message_stop" if isinstance(wire, AnthropicWire) else b"response.completed"
    return join([p for p in parts if end not in p.split(b"\n")[0]])


def test_text_reaches_the_front_end_as_it_arrives(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    prose = "Looking at the shell first, then I will decide."
    push_calls(wire, server, bash("call_1", "echo hi"), text=prose)
    push_final(wire, server, "It prints hi.")
    events = Recorder()

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server), events=events)

    assert stop.reason == "finished"
    deltas = events.deltas()
    assert len(deltas) > 3  # the text came in pieces, not at once
    assert "".join(deltas) == prose + "It prints hi."
    kinds = [item[0] for item in events.seen]
    first_finish = kinds.index("finished")
    step_one = [item for item in events.seen[:first_finish] if item[0] == "delta"]
    assert "".join(item[3] for item in step_one) == prose  # all before the turn was done
    assert [r["text"] for r in of_kind(journal, "text")] == [prose, "It prints hi."]


def test_a_cut_stream_is_retried_and_its_partial_answer_dropped(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    partial = stream_body(wire, "This answer will be cut off halfway through, never to end.")
    server.push(200, partial, headers=SSE, cut=len(partial) * 2 // 3)
    push_final(wire, server, "Complete answer.")

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert (stop.reason, stop.final) == ("finished", "Complete answer.")
    [error] = of_kind(journal, "model-error")
    assert error["retrying"] is True and error["status"] is None
    assert "stream was cut" in error["message"]
    assert "partial answer was discarded" in error["message"]
    assert [r["text"] for r in of_kind(journal, "final")] == ["Complete answer."]
    assert [m["attempts"] for m in of_kind(journal, "model")] == [2]
    first, second = server.bodies()
    assert first == second  # the same request, asked again


def test_a_stream_cut_every_time_ends_in_a_provider_error(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    partial = stream_body(wire, "Cut again and again, never complete.")
    for _ in range(3):
        server.push(200, partial, headers=SSE, cut=len(partial) // 2)

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server), retries=2)

    assert (stop.reason, stop.exit_code) == ("provider-error", 5)
    assert "stream was cut" in stop.message
    assert of_kind(journal, "final") == [] and of_kind(journal, "text") == []
    assert [e["retrying"] for e in of_kind(journal, "model-error")] == [True, True, False]


def test_a_stream_that_stops_before_its_end_is_not_an_answer(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    early = without_end(wire, stream_body(wire, "Unfinished business.", [bash("c1", "ls")]))
    server.push(200, early, headers=SSE)
    push_final(wire, server, "Finished.")

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert (stop.reason, stop.final) == ("finished", "Finished.")
    [error] = of_kind(journal, "model-error")
    assert "the stream ended after" in error["message"] and error["retrying"] is True
    assert of_kind(journal, "call") == []  # the unfinished turn's call never ran


def test_a_malformed_stream_event_is_a_clean_error(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    good = blocks(stream_body(wire, "Fine so far."))
    broken = b"event: content_block_delta\ndata: {not json" if wire.name == "anthropic" else b""
    if isinstance(wire, OpenAIWire):
        broken = b"data: {not json"
    elif isinstance(wire, ResponsesWire):
        broken = b"event: response.output_text.delta\ndata: {not json"
    body = join([*good[:2], broken, *good[2:]])
    for _ in range(2):
        server.push(200, body, headers=SSE)

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server), retries=1)

    assert stop.reason == "provider-error"
    assert "malformed stream event after 2 event(s)" in stop.message
    assert of_kind(journal, "text") == [] and of_kind(journal, "final") == []
    assert len(server.requests) == 2


def test_unparsable_arguments_split_across_chunks_are_rejected_not_fatal(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    broken = '{"command": "echo hi", "type": "collect-info", "reason": "never closed'
    push_calls(wire, server, ("call_bad", "bash", broken))
    push_calls(wire, server, bash("call_ok", "echo ok"))
    push_final(wire, server, "Recovered.")

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert (stop.reason, stop.final) == ("finished", "Recovered.")
    [rejected] = of_kind(journal, "rejected")
    assert (rejected["rule"], rejected["given"]) == ("args-not-object", broken)
    assert [c["command"] for c in of_kind(journal, "call")] == ["echo ok"]
    [(call_id, text)] = wire.results(server.bodies()[1])
    assert call_id == "call_bad" and text.startswith("REJECTED args-not-object: ")


def error_stream(wire: Wire, kind: str, message: str) -> bytes:
    """A stream that starts, then reports an error the way each API does."""
    head = blocks(stream_body(wire, "Starting to"))[:2]
    if isinstance(wire, AnthropicWire):
        error = {"type": "error", "error": {"type": kind, "message": message}}
        return join(head) + named_events([error])
    if isinstance(wire, OpenAIWire):
        data = json.dumps({"error": {"message": message, "type": kind, "code": None}})
        return join(head) + f"data: {data}\n\n".encode()
    failed = {"type": "error", "code": kind, "message": message, "param": None}
    return join(head) + named_events([failed])


def test_an_error_reported_mid_stream_is_retried(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    server.push(200, error_stream(wire, "overloaded_error", "Overloaded"), headers=SSE)
    push_final(wire, server, "Back.")

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert (stop.reason, stop.final) == ("finished", "Back.")
    [error] = of_kind(journal, "model-error")
    assert "error mid-stream (overloaded_error): Overloaded" in error["message"]
    assert error["retrying"] is True


def test_an_invalid_request_reported_mid_stream_is_not_retried(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    server.push(200, error_stream(wire, "invalid_request_error", "bad tool schema"), headers=SSE)
    push_final(wire, server, "never asked for")

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert stop.reason == "provider-error"
    assert "bad tool schema" in stop.message
    assert len(server.requests) == 1
    assert [e["retrying"] for e in of_kind(journal, "model-error")] == [False]


def test_a_failed_response_event_is_a_provider_error(server: FakeServer, tmp_path: Path) -> None:
    wire = ResponsesWire(True)
    head = blocks(stream_body(wire, "x"))[:2]
    error = {"code": "server_error", "message": "boom"}
    failed = {
        "type": "response.failed",
        "response": {"id": "r1", "status": "failed", "error": error},
    }
    server.push(200, join(head) + named_events([failed]), headers=SSE)
    push_final(wire, server, "After the failure.")

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert (stop.reason, stop.final) == ("finished", "After the failure.")
    assert "(server_error): boom" in of_kind(journal, "model-error")[0]["message"]


def test_the_live_view_prints_text_as_it_arrives_and_escapes_it() -> None:
    from rich.console import Console

    from epistemic_agent.agent.live.view import LiveEvents

    out = io.StringIO()
    live = LiveEvents(out)
    live.console = Console(file=out, force_terminal=False, width=100, highlight=False)
    live.model_started(1)
    live.model_delta(1, "text", "Hello ")
    assert out.getvalue() == "Hello "  # shown before the turn is done
    live.model_delta(1, "text", "\x1b]0;pwned\x07world")
    live.model_finished(1, Turn("Hello world", (ToolCall("c", "bash", {}),)), 0.1)
    shown = out.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown
    assert "Hello \\x1b]0;pwned\\x07world\n" in shown


@pytest.mark.parametrize("wire", [AnthropicWire(True), AnthropicWire(False)], ids=lambda w: w.id)
@pytest.mark.parametrize("stop", ["max_tokens", "refusal", "pause_turn"])
def test_anthropic_stop_reasons_end_the_turn_clearly(
    wire: Wire, server: FakeServer, tmp_path: Path, stop: str
) -> None:
    push_final(wire, server, "An answer that", stop=stop)

    result, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert result.reason == "finished"
    assert of_kind(journal, "model")[0]["stop_reason"] == stop
    cut = "cut at the token limit" in result.message
    assert cut == (stop == "max_tokens")


def test_openai_length_finish_says_the_answer_was_cut(server: FakeServer, tmp_path: Path) -> None:
    wire = OpenAIWire(True)
    body, headers = wire.response("An answer that", [], (5, 5, 0))
    server.push(
        200, body.replace(b'"finish_reason": "stop"', b'"finish_reason": "length"'), headers=headers
    )

    result, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert "cut at the token limit" in result.message
    assert of_kind(journal, "model")[0]["stop_reason"] == "length"
