"""The answerer's side of the file channel (`epistemic approve` / `deny`): write a signed answer
beside the request, then read the session's verdict on it from the session's journal.

An answer file is only a proposal. The session checks it (its nonce, its signature, the
signer the allowed_signers file gives the key) and either journals an `approval` record and
acts on it, or journals an `approval-rejected` record, removes the file and goes on waiting
(approval_files.py). So the answerer waits, a bounded time, for one of those two records
before it says what happened: what it prints is what the journal says, never what it hoped.

It knows the record about its own answer by the call number and by the process, user and host
that its answer file states and both records copy, among the records appended after the
moment it wrote the answer (answers are created with link(2): while this answer lies in the
folder, no other can).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import JOURNAL_NAME, SealError, now, struct, visible
from ..gate import Statement
from ..gate import sign_statement as sign
from ..journal import Position, decode, follow, line_hash
from .files import asking, closed_path, paths_of, read_json, write_new
from .request import COMMENT_CAP, who

if TYPE_CHECKING:
    from typing import Any

    from ..journal import Record

#: What became of an answer; `epistemic approve` gives each its own exit status.
ACCEPTED = "accepted"  # the session journaled it as the call's approval (or denial)
CLOSED = "closed"  # the request was answered already, timed out or withdrawn
REFUSED = "refused"  # the answer does not count: the session refused it, or it cannot be signed
ABSENT = "absent"  # no such request, or the session that asked is gone
UNHEARD = "unheard"  # the session recorded no verdict on it in the time given
POLL_SECONDS = 0.05
VERDICTS = ("approval", "approval-rejected")


@struct
class Outcome:
    """What became of an answer (`kind`, one of the names above), in one line."""

    kind: str
    message: str


@struct
class Given:
    """An answer written beside its request, and what is needed to find the session's verdict
    on it: where the journal stood just before it was written, and who wrote it."""

    folder: Path
    seq: int
    asked: dict[str, Any]
    mark: int
    answer: dict[str, Any]
    note: str | None = None  # said on the way: the answer went unsigned, and why


def give(
    folder: Path,
    seq: int,
    decision: str,
    by: str | None,
    comment: str,
    key: str | None = None,
    unsigned: bool = False,
) -> Given | Outcome:
    """Answer the open request for call `seq` in `folder`, signed with the operator's SSH key
    (`key`, else ssh-agent, else ~/.ssh/id_ed25519) unless `unsigned`: the answer as written,
    or why none was."""
    request_path, answer_path = paths_of(folder, seq)
    try:
        asked = read_json(request_path)
    except FileNotFoundError:
        return closed(folder, seq)
    except (OSError, ValueError):
        asked = None
    if not isinstance(asked, dict):
        return Outcome(ABSENT, f"the request for call {seq} cannot be read")
    if not asking(asked):
        return _gone(seq, asked)
    answer = {
        "nonce": asked.get("nonce"),
        "decision": decision,
        "by": by.strip() if by and by.strip() else (None if not unsigned else who(None)),
        "comment": comment[:COMMENT_CAP],
        "at": now(),
        "uid": os.getuid(),
        "host": os.uname().nodename,
        "pid": os.getpid(),
    }
    note = None
    checkable = asked.get("signatures") == "required" or asked.get("allowed_signers") is not False
    if not unsigned and not checkable and key is None:  # a signature nobody could check
        note = "the policy names no allowed signers: answering unsigned"
        answer["by"] = answer["by"] or who(None)
    elif not unsigned:
        problem = _sign(answer, asked, folder, key)
        if problem is not None and (key is not None or asked.get("signatures") == "required"):
            return Outcome(REFUSED, problem)
        if problem is not None:  # no key, and unsigned answers count here: say so, go on
            note = f"{problem}; answering unsigned"
            answer["by"] = answer["by"] or who(None)
    mark = _size(folder.parent / JOURNAL_NAME)
    if not write_new(answer_path, answer, exclusive=True):
        why = "another answer waits for the session's check, or the request timed out"
        return Outcome(CLOSED, f"call {seq} was answered already ({why})")
    if not request_path.exists():  # the session closed the request while this was written
        answer_path.unlink(missing_ok=True)
        return closed(folder, seq)
    return Given(folder, seq, asked, mark, answer, note)


def verdict(given: Given, wait: float) -> Outcome:
    """The session's verdict on `given`, read from its journal within `wait` seconds."""
    journal = given.folder.parent / JOURNAL_NAME
    position = Position(offset=given.mark)
    deadline = time.monotonic() + wait
    while True:
        record = _find(journal, position, given)
        if record is None and not asking(given.asked):
            record = _find(journal, position, given)  # it may have recorded it, then ended
            if record is None:
                return _gone(given.seq, given.asked, "before it recorded a verdict on the answer")
        if record is not None:
            return _said(record, given.seq)
        if time.monotonic() >= deadline:
            return Outcome(
                UNHEARD,
                f"the session recorded no verdict on the answer to call {given.seq} within "
                f"{wait:g} s: it may still take it (see `epistemic pending` and `epistemic log`)",
            )
        time.sleep(POLL_SECONDS)


def closed(folder: Path, seq: int) -> Outcome:
    """Why a request cannot be answered, once it is no longer open (or never was)."""
    try:
        ending = read_json(closed_path(folder, seq))
    except (OSError, ValueError):
        return Outcome(
            ABSENT, f"no request for call {seq} was ever opened here (see `epistemic pending`)"
        )
    why = ending.get("why") if isinstance(ending, dict) else None
    when = ending.get("at") if isinstance(ending, dict) else None
    if why == "answered":
        return Outcome(CLOSED, f"call {seq} was answered already ({when})")
    if why == "timed out":
        return Outcome(
            CLOSED, f"the request for call {seq} timed out ({when}): the call was denied"
        )
    return Outcome(
        CLOSED, f"the request for call {seq} was withdrawn ({when}): the call will not run"
    )


def _gone(seq: int, asked: dict[str, Any], when: str = "") -> Outcome:
    stopped = f"stopped {when}" if when else "is gone"
    return Outcome(
        ABSENT,
        f"the session that asked about call {seq} {stopped} (process {asked.get('pid')}); "
        "nothing would run the call. Continue the session to close it.",
    )


def _find(journal: Path, position: Position, given: Given) -> Record | None:
    """The first verdict on `given` appended since `position` (which it advances)."""
    mine = {name: given.answer[name] for name in ("pid", "uid", "host")}
    try:
        for record, _ in follow(journal, position):
            about = record.get("kind") in VERDICTS and record.get("seq") == given.seq
            if about and all(record.get(name) == value for name, value in mine.items()):
                return record
    except OSError:
        return None
    return None


def _said(record: Record, seq: int) -> Outcome:
    """The verdict in one line, in the journal's own words."""
    if record.get("kind") == "approval-rejected":
        why = visible(str(record.get("why")))
        return Outcome(
            REFUSED,
            f"the session refused the answer: {why}; call {seq} still waits for one that counts",
        )
    decision, by = str(record.get("decision")), visible(str(record.get("by")))
    if record.get("signed") is True:
        how = f"signed, key {visible(str(record.get('key')))}"
    else:
        how = "unsigned: the policy takes unsigned answers"
    claimed = record.get("claimed_by")
    also = f"; it named {visible(str(claimed))}" if isinstance(claimed, str) else ""
    return Outcome(
        ACCEPTED, f"call {seq} {decision} by {by} ({how}{also}); the session recorded it"
    )


def _size(journal: Path) -> int:
    try:
        return journal.stat().st_size
    except OSError:
        return 0


def _sign(
    answer: dict[str, Any], asked: dict[str, Any], folder: Path, key: str | None
) -> str | None:
    """Sign the answer's statement into `answer`; the problem, or None."""
    call = _call_hash(folder.parent / JOURNAL_NAME, asked)
    if call.startswith("!"):
        return call[1:]
    statement = Statement(
        str(asked.get("session")), int(asked["seq"]), call, answer["decision"], answer["at"],
        answer["comment"],
    )  # fmt: skip
    try:
        signature, _ = sign(statement, key)
    except SealError as error:
        return f"cannot sign the answer: {error}"
    answer.update(statement=statement.text(), signature=signature)
    return None


def _call_hash(journal: Path, asked: dict[str, Any]) -> str:
    """The SHA-256 of the call's line, read from the journal itself and checked against the
    request ("!problem" when they disagree: the request is not the journal's)."""
    seq, session, found = asked.get("seq"), None, None
    try:
        with journal.open("rb") as handle:
            for line in handle:
                body = line.rstrip(b"\n")
                record = decode(body) or {}
                if record.get("kind") == "session":
                    session = record.get("session")
                elif record.get("kind") == "call" and record.get("seq") == seq:
                    found = line_hash(body)
    except OSError as error:
        return f"!the journal cannot be read ({error.strerror or error})"
    if found is None or session != asked.get("session"):
        return f"!the journal holds no call {seq} of session {asked.get('session')}"
    if asked.get("call") and asked.get("call") != found:
        return "!the request does not match the journal's call record: it cannot be answered"
    return found
