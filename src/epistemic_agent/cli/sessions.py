"""`epistemic sessions` (a workspace's sessions) and `epistemic show SEQ` (one call in full)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..core import UsageError
from .choice import reading
from .options import session_choice, session_option, workspace_option


def define_sessions(p: argparse.ArgumentParser) -> None:
    p.description = (
        "List the sessions of a workspace, oldest first. Status: open (exec and "
        "tool continue the newest open one), finished, interrupted, max-steps, rejections, "
        "provider-error, closed (an MCP session that ended), torn (ends inside a line)."
    )
    workspace_option(p)
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.set_defaults(handler=_cmd_sessions)


def define_show(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Show call SEQ of a session as recorded: the reason, the command and the "
        "act (for a rejected call, as it gave them), the static check, the policy's decision "
        "and approver, the outcome, what it changed and how it was confined, in sentences; "
        "its flags, the whole stdout and stderr kept as evidence, and the diff of every file "
        "it changed. With --output, only its stdout and stderr. Exit 0 when shown; 1 "
        "when some evidence cannot be shown (missing or changed blob) or the journal was "
        "tampered with (announced); 2 for an unknown SEQ, no journal or a malformed option."
    )
    p.add_argument("seq", metavar="SEQ", help="the call's number (as RATIONALE.md and log show)")
    workspace_option(p)
    session_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--output",
        action="store_true",
        help="print only the call's whole stdout and stderr, from the evidence (control "
        "characters but tabs shown as escapes)",
    )
    p.set_defaults(handler=_cmd_show)


def _workspace(args: argparse.Namespace) -> Path:
    directory = Path(args.directory)
    if not directory.is_dir():
        raise UsageError(f"workspace {directory} is not a directory")
    return directory.resolve()


def _cmd_sessions(args: argparse.Namespace) -> int:
    from ..journal import listing
    from ..reports import _plain

    entries = listing(_workspace(args))
    rows = [entry.to_json() for entry in entries]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    if not rows:
        print(f"no sessions in {args.directory}", file=sys.stderr)
        return 0
    for row in rows:
        who = row["model"] or row["client"] or row["mode"] or "exec/tool"
        task = row["task"] if row["task"] is not None else "-"
        print(
            _plain(
                f"{row['id'][:12]}  {row['started'] or '?':24}  {row['status']:<14}  "
                f"{row['calls']:>5} call(s)  {who}  {task}"
            )[:400]
        )
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    from ..journal import ReadError, load
    from ..reports import gather, lines, output_only

    try:
        seq = int(args.seq)
    except ValueError:
        raise UsageError(f"SEQ must be a call number, not {args.seq!r}") from None
    if seq < 1:
        raise UsageError(f"SEQ must be 1 or more, not {seq}")
    try:
        workspace = _workspace(args)
        loaded = load(workspace, session=reading(workspace, session_choice(args)))
    except ReadError as error:
        raise UsageError(str(error)) from None
    for note in loaded.notes:
        print(f"note: {note}", file=sys.stderr)
    shown = gather(loaded, seq)
    if args.json:
        print(json.dumps(shown, ensure_ascii=False, indent=1))
    elif args.output:
        print("\n".join(output_only(shown)))
    else:
        print("\n".join(lines(shown)))
    for problem in shown["problems"]:
        print(f"epistemic show: cannot show {problem}", file=sys.stderr)
    integrity = loaded.integrity
    if integrity is not None and integrity.status != "intact":
        problem = integrity.problem or "see `epistemic verify`"
        print(f"epistemic show: the journal is {integrity.status}: {problem}", file=sys.stderr)
        return 1 if integrity.status == "tampered" else 0
    return 1 if shown["problems"] else 0
