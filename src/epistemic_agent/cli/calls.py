"""`epistemic exec` and `epistemic tool`: one gated call from the command line, its output
streamed, its result printed, its exit status the command's."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..core import SupervisorUnavailable, UsageError
from .exits import EXIT_REJECTED, EXIT_TIMEOUT, silence
from .options import (
    chosen_policy,
    command_option,
    command_text,
    command_words,
    policy_options,
    session_choice,
    session_option,
    supervisor_option,
    ticket_of,
    ticket_option,
    workspace_option,
)


def define_exec(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run one shell command through the gate, policy, journal and report. "
        "Exits with the command's status; 2 when rejected or denied; 124 on timeout."
    )
    p.add_argument("--type", dest="act", help="the act type (see `epistemic types`)")
    p.add_argument("--reason", help="why this act, now")
    workspace_option(p)
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds before the command's process group is killed (default 120)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    policy_options(p)
    session_option(p, writer=True)
    supervisor_option(p)
    ticket_option(p)
    command_option(p)
    p.set_defaults(handler=_cmd_exec)


def define_tool(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Call bash, read_file, write_file or str_replace_edit with "
        "the JSON arguments a model would send."
    )
    p.add_argument("name", help="the tool name")
    p.add_argument("--args", required=True, metavar="JSON", help="the arguments object")
    workspace_option(p)
    p.add_argument("--timeout", type=float, metavar="S")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    policy_options(p)
    session_option(p, writer=True)
    supervisor_option(p)
    p.set_defaults(handler=_cmd_tool)


def _open_session(args: argparse.Namespace) -> Any:
    from ..session import Session, Settings

    directory = Path(args.directory)
    if not directory.is_dir():
        raise UsageError(f"workspace {directory} is not a directory")
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    waits = getattr(args, "approval_timeout", None)
    if waits is not None and not waits > 0:
        raise UsageError("--approval-timeout must be a positive number of seconds")
    chosen = session_choice(args)
    supervisor = getattr(args, "supervisor", None)
    settings = Settings(approval_timeout=waits, session=chosen, supervisor=supervisor)
    if timeout is not None:
        settings = Settings(
            timeout=timeout, approval_timeout=waits, session=chosen, supervisor=supervisor
        )
    from ..core import moved_note

    moved = moved_note(directory)  # the workspace has a RATIONALE.md of its own
    ticket = ticket_of(args)
    header = {"ticket": ticket} if ticket is not None else {}

    try:
        session = Session(directory, settings, header, policy=chosen_policy(args)).open()
    except SupervisorUnavailable as error:  # before anything ran
        from .options import supervisor_error

        raise UsageError(supervisor_error(error)) from None
    warn_opening(session)
    if moved is not None:
        print(f"epistemic: note: {moved}", file=sys.stderr)
    return session


def warn_opening(session: Any) -> None:
    """What opening the session found for its user: confinement that does not hold, a policy
    found that is not in force."""
    from ..execute import warning

    note = warning(session.confinement)
    if note is not None:
        print(note, file=sys.stderr)
    for notice in session.notices:
        print(f"epistemic: {notice}", file=sys.stderr)


def _cmd_exec(args: argparse.Namespace) -> int:
    words = command_words(args.words)
    payload: dict[str, Any] = {}
    if words:
        payload["command"] = command_text(words)
    for key, value in (("type", args.act), ("reason", args.reason)):
        if value is not None:
            payload[key] = value
    return _run_call(args, "bash", payload)


def _cmd_tool(args: argparse.Namespace) -> int:
    from ..core import TOOL_NAMES

    if args.name not in TOOL_NAMES:  # the gate says so, whatever --args holds
        return _run_call(args, args.name, {})
    try:
        payload = json.loads(args.args)
    except (ValueError, RecursionError) as error:
        from ..gate import Rejected

        rejected = Rejected(
            "args-not-object", f"--args is not valid JSON ({error}).", args.name, given=args.args
        )
        with _open_session(args) as session:
            result = session.reject(rejected)
        return _print_result(args, result, False, session.journal.position)
    return _run_call(args, args.name, payload)


def _run_call(args: argparse.Namespace, tool: str, payload: Any) -> int:
    streamed = not args.json and tool == "bash"
    sink = _stream_output if streamed else None
    with _open_session(args) as session:
        result = session.call(tool, payload, on_output=sink)
    return _print_result(args, result, streamed, session.journal.position)


def _stream_output(done: Any) -> None:
    """Copy the command's complete output to our stdout and stderr."""
    for path, stream in ((done.stdout, sys.stdout), (done.stderr, sys.stderr)):
        try:
            stream.flush()
            with open(path, "rb") as handle:
                while block := handle.read(1 << 16):
                    stream.buffer.write(block)
            stream.flush()
        except BrokenPipeError:  # the reader left (`| head`): the call still counts
            silence(stream)
        except FileNotFoundError:  # the command deleted (or replaced) its own capture file
            print(
                "epistemic: the command's output was lost (it deleted or replaced its capture "
                "file)",
                file=sys.stderr,
            )


def head_line(position: Any) -> str:
    """The journal's head after a session, printed so that logs keep an anchor outside the
    workspace (`epistemic verify --expect-head`; docs/security.md)."""
    return f"epistemic: journal head {position.head} (line {position.lines})"


def _print_result(args: argparse.Namespace, result: Any, streamed: bool, position: Any) -> int:
    if args.json:
        head = {"lines": position.lines, "head": position.head}
        print(json.dumps({**result.to_json(), "journal_head": head}, ensure_ascii=False))
    else:
        _print_text(result, streamed)
        print(head_line(position), file=sys.stderr)
    if result.status in ("rejected", "denied"):
        return EXIT_REJECTED
    if result.timed_out:
        return EXIT_TIMEOUT
    if result.returncode is not None:
        code = int(result.returncode)
        return 128 - code if code < 0 else code  # killed by signal N: 128+N, as shells do
    return 0 if result.ok else 1


def _print_text(result: Any, streamed: bool) -> None:
    review = result.review
    if review is not None and review.get("verdict") != "ok":
        from ..core import one_line

        said = review.get("verdict") or f"failed to review ({review.get('failure')})"
        print(f"epistemic: supervisor {said}: {one_line(str(review['note']))}", file=sys.stderr)
    if result.status in ("rejected", "denied"):
        from ..core import visible

        print(visible(result.for_model()), file=sys.stderr)  # agent text: no escape codes
    elif not streamed:
        text = result.stdout if result.ok else result.outcome
        print(
            text,
            end="" if text.endswith("\n") else "\n",
            file=sys.stdout if result.ok else sys.stderr,
        )
    if result.timed_out and streamed and result.status not in ("rejected", "denied"):
        print(f"epistemic: {result.outcome}", file=sys.stderr)
