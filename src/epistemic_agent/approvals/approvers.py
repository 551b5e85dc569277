"""Who answers a call a policy asks about: approvers by name, and the one a channel means.

An approver is anything with the `Approver` interface of approval.py (`ask(request, cancel)`
returning an `Answer`) and a `for_channel(Channel)` class method. Each is named here by the
import path of its class, like the providers and the observers, so a new one is one line and
its module is imported only when it is chosen.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..core import load
from .request import Approver, Channel

APPROVERS: dict[str, str] = {
    "terminal": "epistemic_agent.approvals.terminal.TerminalApprover",
    "file": "epistemic_agent.approvals.files.FileApprover",
}


def approver_class(name: str) -> Any:
    """The approver class registered under `name`; KeyError names the known ones."""
    return load(APPROVERS, name, "approver")


def choose(
    channel: str, folder: Path, timeout: float, workspace: str, key: str | None = None
) -> Approver:
    """The approver for a channel (`terminal`, `file`, or `auto`: the terminal when there is
    one, else files for `epistemic approve` from another shell); `key`: the SSH key a
    terminal answer is signed with."""
    at_terminal = _isatty(sys.stdin) and _isatty(sys.stderr)
    name = "terminal" if channel == "terminal" or (channel == "auto" and at_terminal) else "file"
    approver: Approver = approver_class(name).for_channel(
        Channel(folder, timeout, workspace, sys.stdin, sys.stderr, key)
    )
    return approver


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
