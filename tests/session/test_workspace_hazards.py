"""The session never blocks on what an act can leave in the workspace: a FIFO, a Unix socket,
a device node, a symlink loop or a sparse file of 4 GB at every name the session reads itself
(`.git`'s HEAD, packed-refs, config and refs with the trailers hook installed, the policy, the
allowed_signers file it names, RATIONALE.md, a file tool's path, the scratch file the hook
reads). Each call finishes, its outcome is in a journal that verifies, and what the session
would not read is said: in the outcome, the header, or one line of refusal."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import epistemic
from epistemic_agent.policy.file import load_policy
from epistemic_agent.policy.rules import PolicyError
from epistemic_agent.session.opening import scratch_path
from epistemic_agent.session.session import Session, Settings
from hazards import KINDS, WORDS, plant
from mechanisms import confined_by

pytestmark = pytest.mark.timeout(60)

CHANGE = "Write the file the task asks for; the change is the task itself, nothing more."
LOOK = "List the workspace to see that the session still answers after the last act."
IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")
MISSING = "0123456789abcdef0123456789abcdef01234567"


def git(ws: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=ws, check=True, capture_output=True, text=True
    )
    return done.stdout


@pytest.fixture(scope="module")
def hooked_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with one commit and the trailers hook: copied for each workspace."""
    ws = tmp_path_factory.mktemp("template") / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("a\n")
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    done = epistemic("git-hook", "install", "-C", str(ws))
    assert done.returncode == 0, done.stderr
    return ws


def fresh(template: Path, where: Path) -> Path:
    shutil.copytree(template, where, symlinks=True)
    return where


def records(ws: Path) -> list[dict[str, Any]]:
    lines = (ws / ".epistemic" / "journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def outcome(ws: Path, seq: int) -> dict[str, Any]:
    return next(r for r in records(ws) if r["kind"] == "outcome" and r["seq"] == seq)


def verified(ws: Path) -> None:
    done = epistemic("verify", str(ws), no_traceback=True)
    assert done.returncode == 0 and done.stdout.startswith("intact"), done.stdout + done.stderr


def two_calls(ws: Path) -> dict[str, Any]:
    """A mutating call and an observation through a real session; the first one's outcome."""
    with Session(ws) as session:
        first = session.bash("echo x > g.txt", "change-state", CHANGE)
        second = session.bash("ls", "collect-info", LOOK)
    assert first.status == "ran" and first.ok, first
    assert second.status == "ran" and second.ok and "g.txt" in second.stdout, second
    verified(ws)
    return outcome(ws, first.seq)


# -- .git, read by the session itself with the trailers hook installed ----------------------


PLACES = {
    "HEAD": ("HEAD", None),
    "a loose ref": ("refs/heads/main", None),
    "packed-refs": ("packed-refs", "ref: refs/heads/gone\n"),  # HEAD names a missing ref
}


@pytest.mark.system  # waits out git's time limit: end to end
@pytest.mark.parametrize("place", PLACES)
def test_a_hazard_in_git_leaves_every_call_recorded_and_says_what_was_not_read(
    hooked_repo: Path, tmp_path: Path, place: str
) -> None:
    name, head = PLACES[place]
    for kind in KINDS:
        ws = fresh(hooked_repo, tmp_path / kind)
        if head is not None:
            (ws / ".git" / "HEAD").write_text(head)
        plant(ws / ".git" / name, kind)
        done = two_calls(ws)
        unread = done.get("commits_unread", "")
        assert unread.startswith(f"before the call, .git/{name}: "), (kind, unread)
        assert WORDS[kind] in unread, (kind, unread)
        assert "commits" not in done


@pytest.mark.system  # waits out git's time limit: end to end
@pytest.mark.parametrize("place", ["HEAD", "packed-refs"])
def test_git_blocked_by_a_fifo_is_recorded_as_timed_out_in_the_header(
    hooked_repo: Path, tmp_path: Path, place: str
) -> None:
    ws = fresh(hooked_repo, tmp_path / "ws")
    if place == "packed-refs":
        (ws / ".git" / "HEAD").write_text("ref: refs/heads/gone\n")
    plant(ws / ".git" / place, "fifo")
    two_calls(ws)
    header = records(ws)[0]
    assert header["git_head"] is None
    assert header["git_head_unknown"] == "git rev-parse timed out after 5 s"


@pytest.mark.system  # waits out git's time limit: end to end
def test_a_hazard_at_git_config_leaves_every_call_recorded(
    hooked_repo: Path, tmp_path: Path
) -> None:
    """The session never reads .git/config itself; git does, under a timeout and a heap limit,
    and a FIFO there is recorded as git timing out."""
    for kind in KINDS:
        ws = fresh(hooked_repo, tmp_path / kind)
        plant(ws / ".git" / "config", kind)
        done = two_calls(ws)
        assert "commits" not in done
        header = records(ws)[0]
        assert header["git_head"] is None
        if kind == "fifo":
            assert header["git_head_unknown"] == "git rev-parse timed out after 5 s"


def test_the_workspace_git_config_cannot_make_the_sessions_git_run_a_program(
    hooked_repo: Path, tmp_path: Path, systmp: Path
) -> None:
    """A partial clone's promisor remote: git would fetch a missing commit through the ssh
    command the workspace's config names. The session's own git runs no transport."""
    ws = fresh(hooked_repo, tmp_path / "ws")
    with Session(ws) as session:
        ran = scratch_path(ws, session.session_id) / "ran"  # an act's git may write here
        for key, value in (
            ("core.repositoryformatversion", "1"),
            ("extensions.partialClone", "origin"),
            ("remote.origin.url", "ssh://example.invalid/repo"),
            ("remote.origin.promisor", "true"),
            ("remote.origin.partialclonefilter", "blob:none"),  # else git fetch writes it first
            ("core.sshCommand", f"touch {ran}; false"),
            ("core.fsmonitor", f"touch {ran}; false"),
        ):
            git(ws, "config", key, value)
        moved = session.bash(
            f"echo {MISSING} > .git/refs/heads/main", "change-state", CHANGE
        )  # a "commit" whose object is missing: git would fetch it
        assert moved.status == "ran" and moved.ok, moved
        assert session.bash("ls", "collect-info", LOOK).ok
    assert not ran.exists()
    assert "commits" not in outcome(ws, moved.seq)
    verified(ws)


# -- acts that plant the hazards ------------------------------------------------------------


PLANT_IN_AN_ACT = "echo 'ref: refs/heads/gone' > .git/HEAD && mkfifo .git/packed-refs"


def test_an_act_that_leaves_a_fifo_at_packed_refs_does_not_stop_the_next_call(
    hooked_repo: Path, tmp_path: Path
) -> None:
    ws = fresh(hooked_repo, tmp_path / "ws")
    with Session(ws) as session:
        planted = session.bash(PLANT_IN_AN_ACT, "change-state", CHANGE)
        assert planted.status == "ran" and planted.ok, planted
        after = session.bash("echo y > h.txt", "change-state", CHANGE)
        assert after.status == "ran" and after.ok, after
        assert session.bash("ls", "collect-info", LOOK).ok
    assert outcome(ws, planted.seq)["commits_unread"] == (
        ".git/packed-refs: not a regular file (a FIFO)"
    )
    assert outcome(ws, after.seq)["commits_unread"] == (
        "before the call, .git/packed-refs: not a regular file (a FIFO)"
    )
    verified(ws)


def test_through_exec_an_act_that_leaves_a_fifo_in_git_does_not_stop_a_call(
    hooked_repo: Path, tmp_path: Path
) -> None:
    ws = fresh(hooked_repo, tmp_path / "ws")
    for command in (PLANT_IN_AN_ACT, "echo y > h.txt"):
        done = epistemic(
            "exec", "-C", str(ws), "--type", "change-state", "--reason", CHANGE, "--", command,
            timeout=40, no_traceback=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    listed = epistemic(
        "exec", "-C", str(ws), "--type", "collect-info", "--reason", LOOK, "--", "ls"
    )
    assert listed.returncode == 0 and "h.txt" in listed.stdout, listed.stderr
    assert [r["seq"] for r in records(ws) if r["kind"] == "outcome"] == [1, 2, 3]
    verified(ws)


def test_an_act_cannot_make_the_session_write_through_the_file_it_leaves_for_the_hook(
    hooked_repo: Path, tmp_path: Path, systmp: Path
) -> None:
    """The hook's file lies in the scratch folder, which every act writes: a symlink there
    must not lead the session's write out of the act's reach, nor a FIFO stop it."""
    victim = tmp_path / "victim.txt"  # outside the workspace: no act may write it
    victim.write_text("kept\n")
    ws = fresh(hooked_repo, tmp_path / "ws")
    with Session(ws) as session:
        left = "$TMPDIR/epistemic-changes.json"
        for trap in (f"ln -sf {victim} {left}", f"rm -f {left} && mkfifo {left}"):
            assert session.bash(trap, "change-state", CHANGE).ok
            after = session.bash("echo y >> h.txt", "change-state", CHANGE)
            assert after.status == "ran" and after.ok, after
    assert victim.read_text() == "kept\n"
    verified(ws)


# -- the policy, the allowed_signers file it names, the workspace's report --------------------


def exec_in(ws: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return epistemic(
        "exec", "-C", str(ws), *options, "--type", "collect-info", "--reason", LOOK, "--", "ls",
        timeout=40, no_traceback=True,
    )  # fmt: skip


def test_a_policy_given_by_path_that_is_not_a_regular_file_is_refused_in_one_line(
    tmp_path: Path, ws: Path
) -> None:
    for kind in KINDS:
        path = tmp_path / f"{kind}.toml"
        plant(path, kind)
        done = exec_in(ws, "--policy", str(path))
        assert done.returncode == 2, (kind, done.stdout, done.stderr)
        [line] = done.stderr.strip().splitlines()
        assert line.startswith(f"epistemic: {path}") and WORDS[kind] in line, (kind, line)
        with pytest.raises(PolicyError, match=WORDS[kind]):
            Session(ws, policy=load_policy(path)).open()
    assert not (ws / ".epistemic").exists()


@pytest.mark.system  # end to end, slow for the default tier
def test_the_workspace_policy_and_report_not_regular_files_refuse_then_report_elsewhere(
    tmp_path: Path,
) -> None:
    """epistemic.toml is the policy whatever it is, so one that cannot be read refuses the
    session in one line (never: no policy); RATIONALE.md that is not a report is left alone."""
    for kind in KINDS:
        ws = tmp_path / kind
        ws.mkdir()
        plant(ws / "RATIONALE.md", kind)
        plant(ws / "epistemic.toml", kind)
        done = exec_in(ws)
        assert done.returncode == 2, (kind, done.stdout, done.stderr)
        [line] = done.stderr.strip().splitlines()
        assert "epistemic.toml" in line and WORDS[kind] in line, (kind, line)
        (ws / "epistemic.toml").unlink()
        done = exec_in(ws)
        assert done.returncode == 0, (kind, done.stderr)
        assert (ws / "RATIONALE.epistemic.md").is_file()
        verified(ws)


SIGNERS = "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIProtectedKey\n"
POLICY = 'default = "allow"\n[approval]\nallowed_signers = "allowed_signers"\n'


@pytest.mark.system  # end to end, slow for the default tier
def test_an_allowed_signers_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    for kind in KINDS:
        ws = tmp_path / kind
        ws.mkdir()
        (ws / "epistemic.toml").write_text(POLICY)
        plant(ws / "allowed_signers", kind)
        with pytest.raises(PolicyError) as refused:
            Session(ws).open()
        assert "allowed_signers 'allowed_signers' cannot be read" in str(refused.value), kind
        assert WORDS[kind] in str(refused.value), (kind, str(refused.value))
        done = exec_in(ws)
        assert done.returncode == 2 and "allowed_signers" in done.stderr, (kind, done.stderr)


@pytest.mark.system  # a loop there is refused as out of the agent's reach: confinement
def test_allowed_signers_swapped_after_the_policy_was_read_is_not_read(tmp_path: Path) -> None:
    """The session copies who may approve as it opens, and hashes it into its header; a
    symlink there (a loop) is refused at once: no act's view could keep it in place."""
    for kind in KINDS:
        ws = tmp_path / kind
        ws.mkdir()
        (ws / "epistemic.toml").write_text(POLICY)
        (ws / "allowed_signers").write_text(SIGNERS)
        policy = load_policy(ws / "epistemic.toml")
        plant(ws / "allowed_signers", kind)
        if kind == "loop":
            with pytest.raises(PolicyError, match="allowed_signers out of the agent's reach"):
                Session(ws, policy=policy).open()
            continue
        with Session(ws, policy=policy) as session:
            assert session.bash("ls", "collect-info", LOOK).ok
        signers = records(ws)[0]["policy"]["signers"]
        assert signers == {str(ws / "allowed_signers"): None}, kind
        verified(ws)


# -- the file tools ------------------------------------------------------------------------


def test_file_tools_on_a_hazard_fail_and_are_recorded(tmp_path: Path) -> None:
    for kind in KINDS:
        ws = tmp_path / kind
        ws.mkdir()
        plant(ws / "data.txt", kind)
        with Session(ws) as session:
            results = [
                session.read_file("data.txt", "Read the data file to see what it holds now."),
                session.str_replace_edit("data.txt", "a", "b", CHANGE),
                session.write_file("data.txt", "new\n", CHANGE),
            ]
        for result in results:
            assert result.status in ("ran", "rejected") and not result.ok, (kind, result)
        outcomes = [r for r in records(ws) if r["kind"] in ("outcome", "rejected")]
        assert len(outcomes) == 3, kind
        verified(ws)


# -- where acts reach the record (landlock alone, none) ------------------------------------

SWAP_CAPTURE = 'p=$(readlink /proc/$$/fd/1); rm "$p"; mkfifo "$p"; echo two > a.txt'
SWAP_PACK = (
    "python3 -c \"import os; p = '.epi' + 'stemic/baseline/pack'; os.remove(p); os.mkfifo(p)\""
    " && echo two > a.txt"
)


@pytest.mark.parametrize("mechanism", ["none", "landlock"])
def test_where_acts_reach_the_record_a_fifo_in_it_stops_no_call(
    tmp_path: Path, mechanism: str
) -> None:
    """Without record-protected, an act can swap its capture file, or the baseline's pack, for
    a FIFO: the output counts as lost, the before-version as unknown; nothing waits."""
    settings = (
        Settings(enforce=False)
        if mechanism == "none"
        else Settings(platform=confined_by("landlock"))
    )
    for name, command in (("capture", SWAP_CAPTURE), ("pack", SWAP_PACK)):
        ws = tmp_path / f"{mechanism}-{name}"
        ws.mkdir()
        (ws / "a.txt").write_text("one\n")
        with Session(ws, settings) as session:
            swapped = session.bash(command, "change-state", CHANGE)
            assert swapped.status == "ran" and swapped.ok, swapped
            again = session.bash("echo three > a.txt", "change-state", CHANGE)
            assert again.status == "ran" and again.ok, again
        if name == "capture":
            assert swapped.stdout.startswith("[output lost: the command deleted or replaced")
        assert [r["seq"] for r in records(ws) if r["kind"] == "outcome"] == [1, 2]
