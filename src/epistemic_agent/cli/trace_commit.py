"""`epistemic trace --commit REV`: from a commit's Epistemic-* trailers to the calls they
name, checked against the journal (the trailers are claims; docs/traceability.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from ..core.safetext import visible
from ..reports.trace.model import build
from ..reports.trace.view import change_json, undid
from ..session.git_step import parse_trailers
from .git_hook import calls_of, git, line_of_head
from .trace_sessions import choose_sessions

if TYPE_CHECKING:
    from ..reports.trace.model import Trace


def trace_commit(directory: Path, rev: str, as_json: bool) -> int:
    if not rev.strip() or rev.startswith("-"):
        raise UsageError(f"--commit {rev!r}: not a revision")
    sha = git(
        directory, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False
    ).strip()
    if not sha:
        raise UsageError(f"--commit {rev}: no such commit in {directory.resolve()}")
    message = git(directory, "cat-file", "commit", sha).split("\n\n", 1)[-1]
    parsed = parse_trailers(message)
    if "Epistemic-Session" not in parsed:
        raise UsageError(
            f"commit {sha[:12]} has no Epistemic-* trailers: it was made outside a session, "
            "or without the hook (`epistemic git-hook install`)"
        )
    session = parsed["Epistemic-Session"]
    trace = build(choose_sessions(directory, session, False)[0])
    result = commit_json(trace, sha, parsed, _commit_files(directory, sha))
    if as_json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print("\n".join(render_commit(result)))
    return 0


def _commit_files(directory: Path, sha: str) -> list[str]:
    out = git(directory, "diff-tree", "--root", "--no-commit-id", "--name-only", "-r", "-z", sha)
    return [path for path in out.split("\0") if path]


def commit_json(trace: Trace, sha: str, parsed: dict[str, str], files: list[str]) -> dict[str, Any]:
    head = parsed.get("Epistemic-Head", "")
    line = line_of_head(trace.loaded.journal, head) if head else None
    calls, problems = [], []
    reverts = undid(trace)
    covered: set[str] = set()
    for seq in calls_of(parsed):
        if seq not in trace.calls:
            problems.append(f"call {seq} is not in session {trace.session_id[:12]}")
            continue
        changes = [c for c in trace.changes if c.seq == seq]
        mine = [c for c in changes if c.path in files]
        covered.update(c.path for c in mine)
        if not mine:
            problems.append(f"call {seq} changed none of the commit's files")
        calls.append(
            {
                **{k: trace.calls[seq][k] for k in ("seq", "act", "reason", "command", "ok")},
                "files": [change_json(trace, c, reverts) for c in mine],
            }
        )
    if head and line is None:
        problems.append(
            f"the journal holds no line with head {head[:12]} (another or a rewritten journal)"
        )
    unnamed = [path for path in files if path not in covered and trace.of_file(path)]
    if unnamed:
        problems.append(f"changed by the session but no named call: {', '.join(unnamed)}")
    return {
        "commit": sha,
        "session": trace.session_id,
        "head": head,
        "head_line": line,
        "files": files,
        "calls": calls,
        "problems": problems,
    }


def render_commit(result: dict[str, Any]) -> list[str]:
    where = f"line {result['head_line']}" if result["head_line"] else "not found"
    lines = [
        f"commit {result['commit']}",
        f"  session {result['session']}, journal head {result['head'][:16]} ({where})",
        f"  files: {visible(', '.join(result['files'])) or 'none'}",
    ]
    for call in result["calls"]:
        lines.append(f"  call {call['seq']} {call['act']}: {visible(call['reason'])}")
        for change in call["files"]:
            mark = "" if change["verified_by"] else "  **unverified**"
            verified = ", ".join(map(str, change["verified_by"])) or "none"
            lines.append(
                f"    {visible(change['path'])} ({change['kind']}): verified by {verified}{mark}"
            )
    for problem in result["problems"]:
        lines.append(f"  problem: {visible(problem)}")
    return lines
