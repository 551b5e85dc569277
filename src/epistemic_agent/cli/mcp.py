"""`epistemic mcp`: the MCP server over stdio (mcp/server.py), with the workspace's policy."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..mcp import PROGRESS_EVERY
from .options import (
    policy_options,
    session_option,
    supervisor_option,
    ticket_option,
    workspace_option,
)

if TYPE_CHECKING:
    import argparse


def define_mcp(p: argparse.ArgumentParser) -> None:
    p.description = (
        "An MCP server over stdio: bash, read_file, write_file and "
        "str_replace_edit behind the gate, policy, journal and report of the workspace. "
        "Approvals go through `epistemic pending` / `approve` / `deny` (stdio belongs to "
        "the protocol). Logs go to stderr. The session ends when the client closes stdin or "
        "ends the server with SIGINT, SIGTERM or SIGHUP: a call in flight is stopped and its "
        "outcome journaled, then the session's `closed` record."
    )
    workspace_option(p)
    policy_options(p)
    session_option(p, writer=True)
    supervisor_option(p)
    ticket_option(p)
    p.add_argument(
        "--progress-interval",
        type=float,
        default=PROGRESS_EVERY,
        metavar="SECONDS",
        help="seconds between progress notifications while a call waits or runs, for clients "
        f"that ask for them (default {PROGRESS_EVERY:g})",
    )
    p.set_defaults(handler=_cmd_mcp)


def _cmd_mcp(args: Any) -> int:
    from ..core import UsageError
    from ..execute import detect
    from ..mcp import serve

    directory = Path(args.directory).resolve()
    if not directory.is_dir():
        raise UsageError(f"workspace {args.directory} is not a directory")
    if args.approval_timeout is not None and not args.approval_timeout > 0:
        raise UsageError("--approval-timeout must be a positive number of seconds")
    if not args.progress_interval > 0:
        raise UsageError("--progress-interval must be a positive number of seconds")
    detect()  # while the process has one thread: it may enter a user namespace (confinement)
    serve(partial(_gatekeeper, args, directory))  # raises what _gatekeeper raised
    return 0


def _gatekeeper(args: Any, directory: Path) -> Any:
    """The policy, loaded and checked, and the gatekeeper that applies it: in a thread, while
    the front answers the client's handshake (mcp/serving.py). Whatever stops the server
    here stops it with the same error as it always did, before any call runs."""
    from ..core import SupervisorUnavailable, UsageError
    from ..execute import detect, probe, unmet, warning
    from ..journal import for_writing
    from ..mcp import Gatekeeper
    from ..policy import PolicyError
    from ..session import refusal, supervisor_for, workspace_policy
    from .options import chosen_policy, session_choice, supervisor_error, ticket_of

    named = chosen_policy(args)
    policy = named or workspace_policy(directory)  # a bad policy stops here
    policy.check_signers()
    confinement = probe(detect(), directory, policy.writable)
    problem = unmet(policy.require_confinement, confinement)
    if problem is not None:
        raise PolicyError(f"{policy.source}: {problem}")
    try:
        supervisor = supervisor_for(policy, args.supervisor)
    except SupervisorUnavailable as error:
        raise UsageError(supervisor_error(error)) from None
    keeper = Gatekeeper(
        directory, policy, args.approval_timeout, implicit=named is None, supervisor=supervisor
    )
    keeper.ticket = ticket_of(args)
    keeper.progress_every = args.progress_interval
    keeper.session_choice = session_choice(args)
    if keeper.session_choice not in (None, "new"):  # an unknown id stops here, not at a call
        for_writing(directory, keeper.session_choice, True)
    else:  # a new session: a policy an act could have written stops here, not at a call
        extra = supervisor.files if supervisor is not None else ()
        refused = refusal(policy, directory, extra)
        if refused is not None:
            raise PolicyError(refused)
    print(f"epistemic mcp: serving {directory} (policy {policy.source})", file=sys.stderr)
    note = warning(confinement)
    if note is not None:
        print(note, file=sys.stderr)
    return keeper
