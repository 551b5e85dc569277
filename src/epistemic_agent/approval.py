"""Human approval of a call a policy `ask`s about: at a terminal, or through files.

The file channel suits sessions with no terminal (CI jobs, the MCP server): the request is
written to `.epistemic/pending/SEQ.request.json`, and `epistemic approve SEQ` / `deny SEQ`, run
anywhere that can write the workspace, answer it with `SEQ.answer.json`. Answers are created
with link(2), so exactly one answer wins: a human's, or the session's own timeout denial.
"""

from __future__ import annotations

import json
import os
import time

from .fsutil import make_unique
from .records import now
from .safetext import visible as visible  # cli_approval imports it from here
from .structs import field, struct

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Protocol, TextIO

    class Approver(Protocol):
        def ask(self, request: Request) -> Answer: ...


POLL_SECONDS = 0.1
ANSWER_CAP = 64 << 10
COMMENT_CAP = 2000


@struct
class Request:
    """What a human is asked to decide: the call, its static effect, and the rule that asked."""

    seq: int
    session: str
    tool: str
    act: str
    reason: str
    command: str
    paths: tuple[str, ...]
    effect: str
    rule: str | None
    message: str
    timeout: float
    requested: str = field(default_factory=now)
    nonce: str = field(default_factory=lambda: os.urandom(16).hex())  # an answer must repeat it

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "session": self.session,
            "tool": self.tool,
            "act": self.act,
            "reason": self.reason,
            "command": self.command,
            "paths": list(self.paths),
            "effect": self.effect,
            "rule": self.rule,
            "message": self.message,
            "requested": self.requested,
            "timeout": self.timeout,
            "nonce": self.nonce,
            "pid": os.getpid(),
        }


@struct
class Answer:
    """A decision: approved or denied, by whom, when, through which channel, with a comment."""

    decision: str  # approved | denied
    by: str | None
    channel: str  # terminal | file
    comment: str = ""
    at: str = field(default_factory=now)
    timed_out: bool = False
    extra: dict[str, Any] = field(default_factory=dict)  # uid, host, pid of the answerer

    @property
    def approved(self) -> bool:
        return self.decision == "approved"


def who(name: str | None) -> str:
    """The approver: the name given, else the OS user."""
    from .session import _user

    return name.strip() if name and name.strip() else _user()


# -- the terminal ---------------------------------------------------------------------------


class TerminalApprover:
    """Asks at a terminal: shows the call, reads y or n, then an optional comment."""

    def __init__(self, timeout: float, stdin: TextIO, out: TextIO, user: str | None = None):
        self.timeout, self.stdin, self.out, self.user = timeout, stdin, out, user

    def ask(self, request: Request) -> Answer:
        self._show(request)
        deadline = time.monotonic() + self.timeout
        while True:
            line = self._read(f"approve call {request.seq}? [y/n] ", deadline)
            if line is None:
                return self._denied(f"no answer within {self.timeout:g} s", timed_out=True)
            if line == "":
                return self._denied("no answer: the terminal closed its input")
            word = line.strip().lower()
            if word in ("y", "yes", "n", "no"):
                break
            self._say("answer y (approve) or n (deny)")
        comment = self._read("comment (optional, Enter to skip): ", deadline) or ""
        decision = "approved" if word.startswith("y") else "denied"
        return Answer(decision, who(self.user), "terminal", comment.strip()[:COMMENT_CAP])

    def _denied(self, why: str, timed_out: bool = False) -> Answer:
        self._say(f"denied: {why}")
        return Answer("denied", None, "terminal", why, timed_out=timed_out)

    def _show(self, request: Request) -> None:
        rule = f"rule `{request.rule}`" if request.rule else "the policy's default"
        effect = request.effect + (f"; writes {', '.join(request.paths)}" if request.paths else "")
        lines = [
            "",
            f"── approval needed: call {request.seq}, asked by {visible(rule)} ──",
            f"  act      {visible(request.act)}",
            f"  reason   {visible(' '.join(request.reason.split()))}",
            f"  command  {visible(request.command)}",
            f"  effect   {visible(effect)}",
            f"  rule     {visible(request.message)}",
        ]
        self._say("\n".join(lines))

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _read(self, prompt: str, deadline: float) -> str | None:
        """A line; "" at end of input; None when the deadline passes first."""
        import select

        print(prompt, end="", file=self.out, flush=True)
        remaining = deadline - time.monotonic()
        try:
            ready, _, _ = select.select([self.stdin], [], [], max(0.0, remaining))
        except (OSError, ValueError):
            return ""
        if not ready:
            print(file=self.out, flush=True)
            return None
        return self.stdin.readline()


# -- the file channel -----------------------------------------------------------------------


class FileApprover:
    """Writes the request under .epistemic/pending/ and waits for an answer file."""

    def __init__(self, folder: Path, timeout: float, out: TextIO | None, workspace: str = ""):
        self.folder, self.timeout, self.out, self.workspace = folder, timeout, out, workspace

    def ask(self, request: Request) -> Answer:
        self.folder.mkdir(parents=True, exist_ok=True)
        request_path, answer_path = paths_of(self.folder, request.seq)
        answer_path.unlink(missing_ok=True)  # written before the question: not an answer
        _write_new(request_path, request.to_json(), exclusive=False)
        self._notice(request)
        deadline = time.monotonic() + self.timeout
        try:
            while not answer_path.exists():
                if time.monotonic() >= deadline:
                    denial = {"decision": "denied", "by": None, "timed_out": True, "at": now()}
                    denial["nonce"] = request.nonce
                    denial["comment"] = f"no answer within {self.timeout:g} s"
                    _write_new(answer_path, denial, exclusive=True)  # loses to a human's answer
                    break
                time.sleep(POLL_SECONDS)
            return _read_answer(answer_path, request.nonce)
        finally:
            for path in (request_path, answer_path):
                path.unlink(missing_ok=True)

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


def paths_of(folder: Path, seq: int) -> tuple[Path, Path]:
    return folder / f"{seq}.request.json", folder / f"{seq}.answer.json"


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


def _read_answer(path: Path, nonce: str) -> Answer:
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(ANSWER_CAP))
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


def answer(folder: Path, seq: int, decision: str, by: str | None, comment: str) -> str | None:
    """Answer a pending request (for `epistemic approve` / `deny`); the problem, or None."""
    request_path, answer_path = paths_of(folder, seq)
    try:
        asked = json.loads(request_path.read_bytes()[:ANSWER_CAP])
    except FileNotFoundError:
        return f"no pending request for call {seq} (see `epistemic pending`)"
    except (OSError, ValueError):
        return f"the request for call {seq} cannot be read"
    record = {
        "nonce": asked.get("nonce") if isinstance(asked, dict) else None,
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
        return f"call {seq} was answered already"
    return None


def pending(folder: Path) -> list[dict[str, Any]]:
    """The open requests, oldest first; `waiting` is false when the asking process is gone."""
    found = []
    for path in sorted(folder.glob("*.request.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_bytes()[:ANSWER_CAP])
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("seq"), int):
            continue
        data["waiting"] = _alive(data.get("pid"))
        data["answered"] = paths_of(folder, data["seq"])[1].exists()
        found.append(data)
    return sorted(found, key=lambda item: int(item["seq"]))


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def choose(channel: str, folder: Path, timeout: float, workspace: str) -> Approver:
    """The approver for a channel; `auto` asks at the terminal when there is one."""
    import sys

    if channel == "terminal" or (channel == "auto" and _isatty(sys.stdin) and _isatty(sys.stderr)):
        return TerminalApprover(timeout, sys.stdin, sys.stderr)
    return FileApprover(folder, timeout, sys.stderr, workspace)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
