"""`epistemic run --resume ID`: the conversation so far, rebuilt from a session's journal.

The journal keeps what the model said (`user`, `model`, `text`, `final`) and what each of its
calls was and came to (`call`, `rejected`, `outcome`), so the messages are rebuilt from them:
each model step is an assistant message with its text and calls, followed by their results.
Tool call ids are not journaled; each rebuilt call gets `resumed-SEQ`. A result is rebuilt
from the outcome and the output kept as evidence, cut to the session's output limit; a call
with no outcome (the session was killed) is said to have none."""

from __future__ import annotations

import json
from pathlib import Path

from ..journal import Record, read_blob
from ..providers import AssistantMessage, Message, ToolCall, ToolResult, ToolResults, UserMessage

NO_OUTCOME = "no outcome was recorded for this call (the session was interrupted while it ran)"


def rebuild(records: list[Record], evidence: Path, limit: int = 16_000) -> list[Message]:
    """The messages of a session's conversation, in order."""
    messages: list[Message] = []
    turn: dict[str, object] | None = None
    outcomes = {r.get("seq"): r for r in records if r.get("kind") == "outcome"}

    def flush() -> None:
        nonlocal turn
        if turn is None:
            return
        calls = turn["calls"]
        assert isinstance(calls, list)
        text = str(turn["text"])
        if calls or text:
            messages.append(AssistantMessage(text, tuple(c for c, _ in calls)))
        if calls:
            messages.append(ToolResults(tuple(r for _, r in calls)))
        turn = None

    for record in records:
        kind = record.get("kind")
        if kind == "user" and isinstance(record.get("text"), str):
            flush()
            messages.append(UserMessage(str(record["text"])))
        elif kind == "model":
            flush()
            turn = {"text": "", "calls": []}
        elif kind in ("text", "final") and turn is not None:
            turn["text"] = str(record.get("text") or "")
        elif kind in ("call", "rejected") and turn is not None and type(record.get("seq")) is int:
            pair = _call(record, outcomes.get(record["seq"]), evidence, limit)
            calls = turn["calls"]
            assert isinstance(calls, list)
            calls.append(pair)
    flush()
    return messages


def _call(
    record: Record, outcome: Record | None, evidence: Path, limit: int
) -> tuple[ToolCall, ToolResult]:
    seq = int(record["seq"])
    call_id = f"resumed-{seq}"
    tool = str(record.get("tool") or "")
    act = record.get("act") if isinstance(record.get("act"), str) else None
    if record.get("kind") == "rejected":
        given = record.get("given")
        text = f"REJECTED {record.get('rule')}: {record.get('message')}"
        arguments = given if isinstance(given, dict) else {"given": given}
        return ToolCall(call_id, tool, arguments), ToolResult(call_id, text, True, seq, act)
    call = ToolCall(call_id, tool, _arguments(record, evidence))
    if outcome is None:
        return call, ToolResult(call_id, NO_OUTCOME, True, seq, act)
    return call, ToolResult(
        call_id, _result(tool, outcome, evidence, limit), not outcome.get("ok"), seq, act
    )


def _arguments(record: Record, evidence: Path) -> dict[str, object]:
    """The arguments the call was made with, as far as the journal keeps them."""
    args: dict[str, object] = {"reason": record.get("reason", "")}
    if record.get("tool") == "bash":
        return {"command": record.get("command", ""), "type": record.get("act"), **args}
    args["path"] = record.get("path", "")
    lines = record.get("lines")
    if isinstance(lines, dict):
        args.update(lines)
    blob = read_blob(evidence, record.get("inputs"))
    if blob.data is not None:
        try:
            inputs = json.loads(blob.data)
        except ValueError:
            inputs = None
        if isinstance(inputs, dict):
            args.update(inputs)
    return args


def _result(tool: str, outcome: Record, evidence: Path, limit: int) -> str:
    """What the model was told, rebuilt: the outcome line and the output kept as evidence."""
    refs = outcome.get("evidence") if isinstance(outcome.get("evidence"), dict) else {}
    assert isinstance(refs, dict)
    line = str(outcome.get("outcome") or "")
    if outcome.get("denied"):
        return f"DENIED: {line}"
    if tool != "bash":
        if not outcome.get("ok"):
            return f"ERROR: {line}"
        content = read_blob(evidence, refs.get("content"), limit)
        return content.text if content.data is not None else line
    streams = {
        name: read_blob(evidence, refs.get(name), limit).text if refs.get(name) else ""
        for name in ("stdout", "stderr")
    }
    body = {"returncode": outcome.get("returncode"), **streams}
    if outcome.get("timed_out"):
        body["timed_out"] = True
    return json.dumps(body, ensure_ascii=False)
