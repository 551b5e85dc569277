"""A Session does nothing at construction: `open()` (or `with`) does the I/O, `close()`
releases it, and a session used before it is open says so (SessionNotOpen), whatever is used."""

from __future__ import annotations

from pathlib import Path

import pytest

from epistemic_agent import Session
from epistemic_agent.policy.rules import PolicyError
from epistemic_agent.session.session import SessionNotOpen, Settings

LOOK = "see which files the workspace holds now"


def test_constructing_touches_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "not-there"
    session = Session(missing)  # no error yet: nothing is read
    assert not missing.exists()
    Session(tmp_path)
    assert list(tmp_path.iterdir()) == []  # no record, no report, no lock
    with pytest.raises(NotADirectoryError):
        session.open()


@pytest.mark.parametrize(
    "use",
    [
        lambda s: s.bash("ls", "collect-info", LOOK),
        lambda s: s.read_file("f.txt", LOOK),
        lambda s: s.call("bash", {"command": "ls", "type": "collect-info", "reason": LOOK}),
        lambda s: s.event("text", text="hello"),
        lambda s: s.end(),
        lambda s: s.session_id,
        lambda s: s.scratch_dir(),
        lambda s: s.capture_files,
        lambda s: s.journal,
        lambda s: s.report,
        lambda s: s.confinement,
    ],
)
def test_a_session_used_before_open_says_so(tmp_path: Path, use: object) -> None:
    session = Session(tmp_path)
    with pytest.raises(SessionNotOpen, match=r"not open: call open\(\) first"):
        use(session)  # type: ignore[operator]
    assert not (tmp_path / ".epistemic").exists()
    session.close()  # nothing to release
    assert not session.closed


def test_an_unknown_attribute_is_still_an_attribute_error(tmp_path: Path) -> None:
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        Session(tmp_path).nonsense  # type: ignore[attr-defined]  # noqa: B018


def test_open_returns_the_session_and_with_accepts_an_open_one(tmp_path: Path) -> None:
    session = Session(tmp_path).open()
    with session as same:
        assert same is session
        assert same.bash("ls", "collect-info", LOOK).status == "ran"
    assert session.closed
    with pytest.raises(SessionNotOpen, match="already closed"):
        session.open()
    with pytest.raises(SessionNotOpen, match="closed"):
        session.bash("ls", "collect-info", LOOK)  # the journal is not reached again
    with Session(tmp_path) as again:  # a new object continues the session
        assert again.bash("ls", "collect-info", LOOK).seq == 2


def test_opening_twice_is_refused(tmp_path: Path) -> None:
    with Session(tmp_path) as session, pytest.raises(SessionNotOpen, match="already open"):
        session.open()


def test_a_refused_open_leaves_the_session_closed(tmp_path: Path) -> None:
    with Session(tmp_path) as session:  # an act writes a policy: no new session takes it
        write = "open('epistemic' + '.toml', 'w').write('default = \\'allow\\'\\n')"
        assert session.bash(f'python3 -c "{write}"', "setup", LOOK).returncode == 0
    session = Session(tmp_path, Settings(session="new"))
    with pytest.raises(PolicyError, match="not put in force: call 1 of session"):
        session.open()
    assert session.closed
    with pytest.raises(SessionNotOpen):
        session.bash("ls", "collect-info", LOOK)


def test_an_ended_session_leaves_no_empty_scratch_folder_but_keeps_one_with_files(
    tmp_path: Path,
) -> None:
    """Each session's commands get a scratch folder outside the workspace ($TMPDIR). Once the
    session has ended no process runs its commands again: left empty, the folder goes (a
    machine that runs many sessions would keep thousands); with an act's files in it, it
    stays, files and all. A session that did not end (`exec` continues it) keeps it."""
    folders = []
    for keep in (False, True):
        workspace = tmp_path / f"ws-{keep}"
        workspace.mkdir()
        with Session(workspace, Settings(owns_session=True)) as session:
            command = 'echo kept > "$TMPDIR/note"' if keep else "ls"
            act = "change-state" if keep else "collect-info"
            assert session.bash(command, act, LOOK).ok
            folder = session.scratch_dir()
            assert folder.is_dir()
        folders.append(folder)
    assert not folders[0].exists()
    assert (folders[1] / "note").read_text() == "kept\n"
    workspace = tmp_path / "ws-open"
    workspace.mkdir()
    with Session(workspace, Settings(owns_session=False)) as session:
        assert session.bash("ls", "collect-info", LOOK).ok
        folder = session.scratch_dir()
    assert folder.is_dir()
