"""`epistemic trace` and `epistemic git-hook`: from a file, a line or a commit back to the
calls that made it (docs/traceability.md)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import UsageError
from .options import workspace_option
from .trace_commit import trace_commit
from .trace_sessions import choose_sessions

if TYPE_CHECKING:
    from ..reports.trace.model import Trace

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
    from ..reports.trace.model import TraceError, build

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
    from ..reports.trace.model import TraceError
    from ..reports.trace.view import render_session, session_json

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
    from ..reports.trace.view import line_json, render_line

    if len(traces) != 1:
        raise UsageError("PATH:LINE needs one session: name it with --session ID")
    data = line_json(traces[0], path, line)
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=1))
    else:
        print("\n".join(render_line(data)))
    return 0


def _matrix(traces: list[Trace], output: str | None) -> int:
    from ..core.fsutil import atomic_write
    from ..reports.trace.matrix import FORMATS, render, rows

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
