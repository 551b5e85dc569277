"""The file channel of approvals: for sessions without a terminal (CI jobs, the MCP server).

The session writes the request to `.epistemic/pending/SEQ.request.json` and waits; a human
answers from another shell with `epistemic approve SEQ` / `deny SEQ`, which writes
`SEQ.answer.json`. Answers are created with link(2), so exactly one answer wins: a human's, or
the session's own timeout denial. No act can see or write this folder (it lies in the record,
which acts cannot reach: execute/sandbox/confinement.py).

When the wait ends (answered, timed out, withdrawn because the call was cancelled, or because
the session stopped), the request is replaced by `SEQ.closed.json`, which says which: so a
late `approve` is told exactly why it cannot answer, and exits non-zero. This module is the
session's side; approval_answer.py is the answerer's (writing the answer, then reading the
session's verdict on it from the journal).
"""

from __future__ import annotations

import json
import os
import select
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import epoch_of, make_unique, now, recorder_alive
from ..gate import check_signature as check
from ..gate import parse
from .request import COMMENT_CAP, Answer, Channel, Request

if TYPE_CHECKING:
    from typing import Any, TextIO

    from ..core import Cancel

POLL_SECONDS = 0.1
ANSWER_CAP = 64 << 10


class FileApprover:
    """Writes the request under .epistemic/pending/ and waits for an answer file."""

    def __init__(self, folder: Path, timeout: float, out: TextIO | None, workspace: str = ""):
        self.folder, self.timeout, self.out, self.workspace = folder, timeout, out, workspace

    @classmethod
    def for_channel(cls, channel: Channel) -> FileApprover:
        return cls(channel.folder, channel.timeout, channel.out, channel.workspace)

    def cannot_sign(self) -> str | None:
        """Answers are signed by `epistemic approve` in the answerer's own shell."""
        return None

    def ask(self, request: Request, cancel: Cancel | None = None) -> Answer:
        self.folder.mkdir(parents=True, exist_ok=True)
        request_path, answer_path = paths_of(self.folder, request.seq)
        answer_path.unlink(missing_ok=True)  # written before the question: not an answer
        closed_path(self.folder, request.seq).unlink(missing_ok=True)
        write_new(request_path, request.to_json(), exclusive=False)
        self._notice(request)
        closing = "withdrawn"
        try:
            answer = self._wait(request, answer_path, cancel)
            if answer.decision != "cancelled":
                closing = "timed out" if answer.timed_out else "answered"
            return answer
        finally:
            write_new(closed_path(self.folder, request.seq), {"why": closing, "at": now()}, False)
            for path in (request_path, answer_path):
                path.unlink(missing_ok=True)

    def _wait(self, request: Request, answer_path: Path, cancel: Cancel | None) -> Answer:
        """Until an answer that counts, the timeout, or a cancel. An answer that does not
        count (unsigned where signatures are required, signed by an unknown key, for another
        request) is journaled as rejected and removed, and the wait goes on."""
        deadline = time.monotonic() + self.timeout
        while True:
            while not answer_path.exists():
                if cancel is not None and cancel.is_set():
                    return Answer("cancelled", cancel.by, "file", cancel.describe())
                if time.monotonic() >= deadline:
                    denial = {"decision": "denied", "by": None, "timed_out": True, "at": now()}
                    denial["nonce"] = request.nonce
                    denial["comment"] = f"no answer within {self.timeout:g} s"
                    write_new(answer_path, denial, exclusive=True)  # loses to a human's
                    break
                _sleep(cancel)
            found = read_answer(answer_path, request)
            if isinstance(found, Answer):
                return found
            if request.rejected is not None:
                request.rejected(found)
            answer_path.unlink(missing_ok=True)

    def _notice(self, request: Request) -> None:
        if self.out is None:
            return
        where = f" -C {self.workspace}" if self.workspace else ""
        if request.session:  # several sessions may wait at once (approval_sessions.py)
            where += f" --session {request.session[:12]}"
        print(
            f"epistemic: call {request.seq} ({request.act}) awaits approval "
            f"(rule {request.rule or 'default'}): `epistemic approve {request.seq}{where} "
            f"[--as NAME] [--comment C]` or `epistemic deny {request.seq}{where} --comment C`; "
            f"denied in {self.timeout:g} s without an answer",
            file=self.out,
            flush=True,
        )


def _sleep(cancel: Cancel | None) -> None:
    """One poll interval, cut short by a cancel."""
    if cancel is None:
        time.sleep(POLL_SECONDS)
        return

    select.select([cancel], [], [], POLL_SECONDS)


def paths_of(folder: Path, seq: int) -> tuple[Path, Path]:
    return folder / f"{seq}.request.json", folder / f"{seq}.answer.json"


def closed_path(folder: Path, seq: int) -> Path:
    return folder / f"{seq}.closed.json"


def write_new(path: Path, data: dict[str, Any], exclusive: bool) -> bool:
    """Write JSON whole (a reader never sees half); with `exclusive`, only if none is there."""
    handle, name = make_unique(path.parent, prefix=".tmp-", mode=0o644)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, ensure_ascii=False)
            out.flush()
            os.fsync(out.fileno())
        if not exclusive:
            os.replace(name, path)
            return True
        try:
            os.link(name, path)
            return True
        except FileExistsError:
            return False
    finally:
        if exclusive or os.path.exists(name):
            os.unlink(name)


def read_json(path: Path) -> Any:
    """A request, answer or closing file, read up to ANSWER_CAP bytes."""
    with open(path, "rb") as handle:
        return json.loads(handle.read(ANSWER_CAP))


def read_answer(path: Path, request: Request) -> Answer | dict[str, Any]:
    """The answer in the file, or, when it does not count, why not (for the journal)."""
    try:
        data = read_json(path)
    except (OSError, ValueError) as error:
        return {"why": f"the answer file could not be read ({error})"}
    if not isinstance(data, dict) or data.get("decision") not in ("approved", "denied"):
        return {"why": "the answer file holds no decision"}
    claimed = data.get("by") if isinstance(data.get("by"), str) else None
    facts = {k: data[k] for k in ("uid", "pid") if isinstance(data.get(k), int)}
    if isinstance(data.get("host"), str):
        facts["host"] = data["host"][:255]
    refused = {"claimed_by": claimed, **facts}
    if data.get("nonce") != request.nonce:
        why = "it does not name this request (no matching nonce): a replayed or forged answer"
        return {"why": why, **refused}
    if data.get("timed_out") is True and data.get("decision") == "denied" and claimed is None:
        return Answer("denied", None, "file", str(data.get("comment", "")), now(), True)
    comment = data.get("comment", "")
    comment = comment[:COMMENT_CAP] if isinstance(comment, str) else ""
    signed = _signature(data, request, comment)
    if isinstance(signed, str):
        return {"why": signed, **refused}
    by = signed.get("signer", claimed)
    answer = Answer(str(data["decision"]), by, "file", comment, str(data.get("at") or now()))
    answer.extra.update(facts, **signed)
    if claimed is not None and claimed != by:
        answer.extra["claimed_by"] = claimed
    return answer


def _signature(data: dict[str, Any], request: Request, comment: str) -> dict[str, Any] | str:
    """The signature's part of the approval record, or why the answer does not count."""
    statement, signature = data.get("statement"), data.get("signature")
    if statement is None and signature is None:
        if request.signatures == "required":
            return "it is not signed, and the policy requires signed approvals"
        return {"signed": False}
    parsed = parse(statement)
    if isinstance(parsed, str):
        return f"its statement is malformed: {parsed}"
    expected = request.statement(str(data["decision"]), parsed.answered, comment)
    if parsed != expected:
        return "its signed statement does not match this request (session, call, decision)"
    if not _in_time(parsed.answered, request.requested):
        return f"it was signed at {parsed.answered}, outside the time the request was open"
    if request.signers is None:
        return "it is signed, but the policy names no allowed_signers to check it against"
    claimed = data.get("by") if isinstance(data.get("by"), str) else None
    checked = check(str(statement), signature, Path(request.signers), claimed)
    if checked.problem is not None:
        return checked.problem
    return {
        "signed": True,
        "signer": checked.signer,
        "key": checked.key,
        "statement": statement,
        "signature": signature,
    }


def _in_time(answered: str, requested: str) -> bool:
    signed, asked = epoch_of(answered), epoch_of(requested)
    return signed is not None and asked is not None and asked - 1 <= signed <= time.time() + 60


def asking(request: dict[str, Any]) -> bool:
    """Whether the process that wrote a request is alive and is the one that asked."""
    pid = request.get("pid")
    declared = epoch_of(str(request.get("requested", "")))
    return isinstance(pid, int) and declared is not None and recorder_alive(pid, declared)


def pending(folder: Path) -> list[dict[str, Any]]:
    """The open requests, oldest first; `waiting` is false when the asking process is gone."""
    found = []
    for path in sorted(folder.glob("*.request.json")) if folder.is_dir() else []:
        try:
            data = read_json(path)
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("seq"), int):
            continue
        data["waiting"] = asking(data)
        data["answered"] = paths_of(folder, data["seq"])[1].exists()
        found.append(data)
    return sorted(found, key=lambda item: int(item["seq"]))
