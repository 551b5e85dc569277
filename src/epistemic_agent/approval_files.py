"""The file channel of approvals: for sessions without a terminal (CI jobs, the MCP server).

The session writes the request to `.epistemic/pending/SEQ.request.json` and waits; a human
answers from another shell with `epistemic approve SEQ` / `deny SEQ`, which writes
`SEQ.answer.json`. Answers are created with link(2), so exactly one answer wins: a human's, or
the session's own timeout denial. No act can see or write this folder (it lies in the record,
which acts cannot reach: confine.py).

When the wait ends (answered, timed out, withdrawn because the call was cancelled, or because
the session stopped), the request is replaced by `SEQ.closed.json`, which says which: so a
late `approve` is told exactly why it cannot answer, and exits non-zero.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .approval import COMMENT_CAP, Answer, Request, who
from .fsutil import make_unique
from .records import now
from .recovery import epoch_of, recorder_alive

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

    from .cancel import Cancel

POLL_SECONDS = 0.1
ANSWER_CAP = 64 << 10


class FileApprover:
    """Writes the request under .epistemic/pending/ and waits for an answer file."""

    def __init__(self, folder: Path, timeout: float, out: TextIO | None, workspace: str = ""):
        self.folder, self.timeout, self.out, self.workspace = folder, timeout, out, workspace

    def ask(self, request: Request, cancel: Cancel | None = None) -> Answer:
        self.folder.mkdir(parents=True, exist_ok=True)
        request_path, answer_path = paths_of(self.folder, request.seq)
        answer_path.unlink(missing_ok=True)  # written before the question: not an answer
        closed_path(self.folder, request.seq).unlink(missing_ok=True)
        _write_new(request_path, request.to_json(), exclusive=False)
        self._notice(request)
        closing = "withdrawn"
        try:
            answer = self._wait(request, answer_path, cancel)
            if answer.decision != "cancelled":
                closing = "timed out" if answer.timed_out else "answered"
            return answer
        finally:
            _write_new(closed_path(self.folder, request.seq), {"why": closing, "at": now()}, False)
            for path in (request_path, answer_path):
                path.unlink(missing_ok=True)

    def _wait(self, request: Request, answer_path: Path, cancel: Cancel | None) -> Answer:
        deadline = time.monotonic() + self.timeout
        while not answer_path.exists():
            if cancel is not None and cancel.is_set():
                return Answer("cancelled", cancel.by, "file", cancel.describe())
            if time.monotonic() >= deadline:
                denial = {"decision": "denied", "by": None, "timed_out": True, "at": now()}
                denial["nonce"] = request.nonce
                denial["comment"] = f"no answer within {self.timeout:g} s"
                _write_new(answer_path, denial, exclusive=True)  # loses to a human's answer
                break
            _sleep(cancel)
        return _read_answer(answer_path, request.nonce)

    def _notice(self, request: Request) -> None:
        if self.out is None:
            return
        where = f" -C {self.workspace}" if self.workspace else ""
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
    import select

    select.select([cancel], [], [], POLL_SECONDS)


def paths_of(folder: Path, seq: int) -> tuple[Path, Path]:
    return folder / f"{seq}.request.json", folder / f"{seq}.answer.json"


def closed_path(folder: Path, seq: int) -> Path:
    return folder / f"{seq}.closed.json"


def _write_new(path: Path, data: dict[str, Any], exclusive: bool) -> bool:
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


def _read_json(path: Path) -> Any:
    with open(path, "rb") as handle:
        return json.loads(handle.read(ANSWER_CAP))


def _read_answer(path: Path, nonce: str) -> Answer:
    try:
        data = _read_json(path)
    except (OSError, ValueError) as error:
        return Answer("denied", None, "file", f"the answer file could not be read ({error})")
    if not isinstance(data, dict) or data.get("decision") not in ("approved", "denied"):
        return Answer("denied", None, "file", "the answer file holds no decision")
    if data.get("nonce") != nonce:
        why = "the answer does not name this request (no matching nonce): it was not written by "
        return Answer("denied", None, "file", why + "`epistemic approve` for this question")
    by, comment = data.get("by"), data.get("comment", "")
    extra = {k: data[k] for k in ("uid", "pid") if isinstance(data.get(k), int)}
    if isinstance(data.get("host"), str):
        extra["host"] = data["host"][:255]
    return Answer(
        str(data["decision"]),
        by if isinstance(by, str) else None,
        "file",
        comment[:COMMENT_CAP] if isinstance(comment, str) else "",
        str(data.get("at") or now()),
        bool(data.get("timed_out", False)),
        extra,
    )


def why_closed(folder: Path, seq: int) -> str:
    """Why a request cannot be answered, in words, once it is no longer open."""
    try:
        closed = _read_json(closed_path(folder, seq))
    except (OSError, ValueError):
        return f"no request for call {seq} was ever opened here (see `epistemic pending`)"
    why = closed.get("why") if isinstance(closed, dict) else None
    when = closed.get("at") if isinstance(closed, dict) else None
    if why == "answered":
        return f"call {seq} was answered already ({when})"
    if why == "timed out":
        return f"the request for call {seq} timed out ({when}): the call was denied"
    return f"the request for call {seq} was withdrawn ({when}): the call will not run"


def answer(folder: Path, seq: int, decision: str, by: str | None, comment: str) -> str | None:
    """Answer a pending request (for `epistemic approve` / `deny`); the problem, or None."""
    request_path, answer_path = paths_of(folder, seq)
    try:
        asked = _read_json(request_path)
    except FileNotFoundError:
        return why_closed(folder, seq)
    except (OSError, ValueError):
        return f"the request for call {seq} cannot be read"
    if not isinstance(asked, dict):
        return f"the request for call {seq} cannot be read"
    if not asking(asked):
        return (
            f"the session that asked about call {seq} is gone (process {asked.get('pid')}); "
            "nothing would run the call. Continue the session to close it."
        )
    record = {
        "nonce": asked.get("nonce"),
        "decision": decision,
        "by": who(by),
        "comment": comment[:COMMENT_CAP],
        "at": now(),
        "uid": os.getuid(),
        "host": os.uname().nodename,
        "pid": os.getpid(),
    }
    if not _write_new(answer_path, record, exclusive=True):
        return f"call {seq} was answered already"
    if not request_path.exists():  # the session closed the request while this was written
        answer_path.unlink(missing_ok=True)
        return why_closed(folder, seq)
    return None


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
            data = _read_json(path)
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("seq"), int):
            continue
        data["waiting"] = asking(data)
        data["answered"] = paths_of(folder, data["seq"])[1].exists()
        found.append(data)
    return sorted(found, key=lambda item: int(item["seq"]))
