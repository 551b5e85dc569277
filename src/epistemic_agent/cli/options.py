"""Arguments several commands share: the workspace, and a command given after `--`."""

from __future__ import annotations

import argparse
import math
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import UsageError
from ..policy import load_policy, preset

if TYPE_CHECKING:
    from ..policy import Policy

COMMAND_HELP = "one argument is a shell command line; several are quoted as argv"


def workspace_option(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    parser.add_argument(
        "-C",
        dest="directory",
        default=".",
        metavar="DIR",
        help=(help or "the workspace (default: the current directory)")
        + "; found upwards as git finds a repository: the nearest folder with a record "
        "(.epistemic/), within the git repository DIR is in, else that repository's root",
    )
    parser.add_argument(
        "--here",
        action="store_true",
        help="DIR itself is the workspace: do not look upwards for one (a workspace of its own "
        "inside another's tree)",
    )


def command_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "words", nargs=argparse.REMAINDER, metavar="-- COMMAND...", help=COMMAND_HELP
    )


def command_words(words: list[str]) -> list[str]:
    """The words after `--` (argparse may or may not keep the `--` itself)."""
    return words[1:] if words and words[0] == "--" else list(words)


def command_text(words: list[str]) -> str:
    """One word is a shell command line as given; several are quoted as an argv."""
    if len(words) == 1:
        return words[0]

    return shlex.join(words)


def policy_options(parser: argparse.ArgumentParser) -> None:
    """--policy FILE, --approve mutating|none, --read-only; --approval-timeout."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--policy",
        metavar="FILE",
        help="the policy to apply (default: the workspace's epistemic.toml, if any)",
    )
    group.add_argument(
        "--approve",
        choices=("mutating", "none"),
        help="a preset instead of a file: ask a human for every mutating act, or for none",
    )
    group.add_argument("--read-only", action="store_true", help="a preset: deny every mutating act")
    parser.add_argument(
        "--approval-timeout",
        type=seconds,
        metavar="S",
        help="seconds an approval request waits before it is denied (default: the "
        "policy's [approval] timeout, else 600)",
    )


TICKET_MAX = 200


def ticket_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ticket",
        metavar="ID",
        help="the task or ticket this work is for (JIRA-123, a change request's URL): "
        "recorded in the session header and on each call, and the policy fact `ticket`",
    )


def ticket_of(args: argparse.Namespace) -> str | None:
    """The --ticket given, checked: one line of printable text, at most TICKET_MAX long."""
    ticket = getattr(args, "ticket", None)
    if ticket is None:
        return None
    if not ticket.strip() or not ticket.isprintable() or len(ticket) > TICKET_MAX:
        raise UsageError(
            f"--ticket must be one line of printable text, 1 to {TICKET_MAX} characters"
        )
    return str(ticket).strip()


def chosen_policy(args: argparse.Namespace) -> Policy | None:
    """The policy the options name (None: the workspace's own); PolicyError when it is bad."""
    if getattr(args, "policy", None):
        return load_policy(Path(args.policy))
    if getattr(args, "read_only", False):
        return preset("read-only")
    if getattr(args, "approve", None):
        return preset(f"approve-{args.approve}")
    return None


def seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse type): `nan` and `inf` are refused."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def session_option(parser: argparse.ArgumentParser, writer: bool = False) -> None:
    """--session ID: which of the workspace's sessions (an id or a unique prefix)."""
    parser.add_argument(
        "--session",
        metavar="ID|new" if writer else "ID",
        help="the session to continue (its id or a unique prefix), or `new` to start one"
        if writer
        else "which of the workspace's sessions (its id or a unique prefix; default: the "
        "newest, said on stderr when there are several; `epistemic sessions` lists them)",
    )


def session_choice(args: argparse.Namespace) -> str | None:
    """The --session given, checked: an id, a prefix, or `new` (UsageError otherwise)."""
    value = getattr(args, "session", None)
    if not isinstance(value, str):
        return None

    wanted = value.strip().lower()
    if wanted != "new" and not (wanted and all(c in "0123456789abcdef" for c in wanted)):
        raise UsageError(f"--session {value!r}: give a session id (hex), a prefix of one, or new")
    return wanted


SUPERVISOR_HELP = (
    "a second model that reviews each test-hypothesis, change-state and revert before it "
    "runs: PROVIDER:MODEL, or replay:FILE for a verdict script (default: the policy's "
    "[supervisor]; docs/supervisor.md)"
)


def supervisor_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--supervisor", metavar="MODEL", help=SUPERVISOR_HELP)


def supervisor_error(error: Exception) -> str:
    """A supervisor that cannot start (a bad spec or script, no key) as a usage error."""
    return f"--supervisor: {error}"
