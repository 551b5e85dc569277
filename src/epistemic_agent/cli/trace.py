"""`epistemic trace`: from a file, a line or a commit back to the calls that made it
(docs/traceability.md). `--commit REV` goes from a commit's Epistemic-* trailers to the calls
they name, checked against the journal (the trailers are claims)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import UsageError, visible
from ..journal import Loaded, ReadError, find_journals, journal_of, load
from ..reports import TraceError, build, change_json, undid
from ..session import parse_trailers
from .choice import reading
from .git_hook import calls_of, git, line_of_head
from .options import workspace_option

if TYPE_CHECKING:
    from ..reports import Trace

LINE = re.compile(r"^(?P<path>.+):(?P<line>[0-9]+)$")


def define_trace(p: argparse.ArgumentParser) -> None:
    p.description = (
        "From the artefact back to intent. For each file the session changed "
        "(or PATH), the calls that changed it in order (seq, act, reason, policy decision, "
        "approval and signer, the diff hunk), then the verify calls after its last change. "
        "A change no passing verify followed is marked **unverified**; a revert shows what "
        "it undid. PATH:LINE names the call that last wrote that line (a blame by declared "
        "act, through file-tool and shell edits alike). --matrix writes the traceability "
        "matrix; --commit REV goes from a commit's Epistemic-* trailers to its calls. "
        "Read-only. Exit 2 on bad input (a path no call changed, a line beyond the file, an "
        "unknown session, a commit without trailers)."
    )
    p.add_argument(
        "target",
        nargs="?",
        metavar="PATH[:LINE]",
        help="a file the session changed, or one of its lines",
    )
    workspace_option(p, "the workspace, or a folder of sessions (default: .)")
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--session", metavar="ID", help="the session with this id (or a unique prefix of it)"
    )
    which.add_argument("--all", action="store_true", help="every session found under the folder")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--matrix", action="store_true", help="write the traceability matrix (with -o)")
    p.add_argument("-o", dest="output", metavar="FILE", help="the matrix file: .md, .csv or .html")
    p.add_argument("--commit", metavar="REV", help="the calls a commit's Epistemic-* trailers name")
    p.set_defaults(handler=_cmd_trace)


def _cmd_trace(args: argparse.Namespace) -> int:
    directory = Path(args.directory)
    if args.output and not args.matrix:
        raise UsageError("-o is for --matrix")
    if args.matrix and (args.target or args.commit):
        raise UsageError("--matrix covers every change: give no PATH and no --commit")
    if args.commit is not None:
        return trace_commit(directory, args.commit, args.json)
    traces = [build(loaded) for loaded in choose_sessions(directory, args.session, args.all)]
    if args.matrix:
        return _matrix(traces, args.output)
    try:
        if args.target is None:
            return _show_sessions(traces, None, args.json)
        path, line = split_target(traces, args.target, directory)
        if line is None:
            return _show_sessions(traces, path, args.json)
        return _show_line(traces, path, line, args.json)
    except TraceError as error:
        raise UsageError(str(error)) from None


def split_target(traces: list[Trace], target: str, directory: Path) -> tuple[str, int | None]:
    """PATH or PATH:LINE, PATH made workspace-relative (a path that is itself recorded wins
    over reading a trailing `:N` as a line)."""
    known = {path for trace in traces for path in trace.files()}
    path, line = target, None
    match = LINE.match(target)
    if match and target not in known:
        path, line = match["path"], int(match["line"])
    return relative(path, directory), line


def relative(path: str, directory: Path) -> str:
    import os

    if os.path.isabs(path):
        try:
            return Path(path).resolve().relative_to(directory.resolve()).as_posix()
        except ValueError:
            raise UsageError(f"{path} is not inside the workspace {directory.resolve()}") from None
    return os.path.normpath(path).replace(os.sep, "/")


def _show_sessions(traces: list[Trace], path: str | None, as_json: bool) -> int:
    from ..reports import render_session, session_json

    results = []
    for trace in traces:
        try:
            results.append(session_json(trace, path))
        except TraceError:
            if len(traces) == 1:
                raise
    if path is not None and not results:
        raise TraceError(f"{path}: no call of these {len(traces)} session(s) changed it")
    if as_json:
        print(json.dumps({"sessions": results}, ensure_ascii=False, indent=1))
        return 0
    for index, data in enumerate(results):
        if index:
            print()
        print("\n".join(render_session(data)))
    return 0


def _show_line(traces: list[Trace], path: str, line: int, as_json: bool) -> int:
    from ..reports import line_json, render_line

    if len(traces) != 1:
        raise UsageError("PATH:LINE needs one session: name it with --session ID")
    data = line_json(traces[0], path, line)
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=1))
    else:
        print("\n".join(render_line(data)))
    return 0


def _matrix(traces: list[Trace], output: str | None) -> int:
    from ..core import atomic_write
    from ..reports import FORMATS, rows
    from ..reports import render_matrix as render

    if not output:
        raise UsageError("--matrix needs -o FILE (.md, .csv or .html)")
    target = Path(output)
    if target.suffix not in FORMATS:
        raise UsageError(f"{output}: the matrix is written as .md, .csv or .html")
    found = rows(traces)
    try:
        atomic_write(target, render(found, target.suffix).encode("utf-8"))
    except OSError as error:
        raise UsageError(f"{output}: cannot write: {error.strerror or error}") from None
    unverified = sum(1 for row in found if row["status"] == "unverified")
    print(f"wrote {output}: {len(found)} row(s), {unverified} unverified")
    return 0


# -- which sessions: the workspace's own, every one under a folder, or one by id -------------


def choose_sessions(directory: Path, session: str | None, every: bool) -> list[Loaded]:
    """The sessions asked for: the workspace's own; every one under the folder; or the one
    whose id starts with `session`."""
    try:
        if not every and session is None:
            return [load(journal_of(directory, reading(directory, None)))]
        journals = find_journals([directory])
    except ReadError as error:
        raise UsageError(str(error)) from None
    loaded = []
    for journal in journals:
        try:
            loaded.append(load(journal))
        except ReadError as error:
            print(f"epistemic: skipped: {error}", file=sys.stderr)
    if session is None:
        return loaded
    if not session.strip():
        raise UsageError("--session: the id is empty")
    found = [one for one in loaded if str(one.header.get("session", "")).startswith(session)]
    if not found:
        known = ", ".join(str(one.header.get("session", "?"))[:16] for one in loaded)
        raise UsageError(f"no session {session!r} under {directory} (sessions: {known or 'none'})")
    if len(found) > 1:
        raise UsageError(
            f"--session {session!r} matches {len(found)} sessions: give more of the id"
        )
    return found


# -- --commit REV: from a commit's trailers to the calls they name ----------------------------


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
