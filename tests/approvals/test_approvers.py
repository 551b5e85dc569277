"""The approvers' registry: every name loads a class that makes an `Approver`, and an unknown
name is refused with the known ones."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from epistemic_agent.approvals.approvers import APPROVERS, approver_class, choose
from epistemic_agent.approvals.request import Approver, Channel


def test_every_registered_approver_loads_and_an_unknown_name_is_refused(tmp_path: Path) -> None:
    channel = Channel(tmp_path, 1.0, str(tmp_path), io.StringIO(), io.StringIO())
    for name in APPROVERS:
        assert isinstance(approver_class(name).for_channel(channel), Approver)
    assert not isinstance(object(), Approver)
    with pytest.raises(KeyError, match="known: terminal, file"):
        approver_class("email")


def test_a_channel_chooses_its_approver(tmp_path: Path) -> None:
    assert type(choose("terminal", tmp_path, 1.0, "ws")).__name__ == "TerminalApprover"
    assert type(choose("file", tmp_path, 1.0, "ws")).__name__ == "FileApprover"
    # under pytest stdin is not a terminal: `auto` falls back to answer files
    assert type(choose("auto", tmp_path, 1.0, "ws")).__name__ == "FileApprover"
