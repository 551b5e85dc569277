"""The read-only workspace, enforced by the kernel: real commands, every available method."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from epistemic_agent.enforce import Sandbox, Support, detect, read_only_sandbox

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="kernel enforcement is Linux-only")

ORIGINAL = "original\n"


def support_for(method: str) -> Support:
    found = detect(full=True)
    if method == "landlock":
        if found.landlock_abi is None:
            pytest.skip(f"Landlock unavailable: {found.landlock_error}")
        return found
    if found.best() == "none" or found.bwrap is None or found.bwrap_error is not None:
        pytest.skip(f"bwrap unusable: {found.bwrap_error}")
    return Support(None, "forced off by the test", found.bwrap, found.bwrap_error)


def spawn(sandbox: Sandbox, command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A minimal stand-in for the executor: new session, cwd, the hook just before exec."""
    try:
        return subprocess.run(
            [*sandbox.argv_prefix, "bash", "-c", command],
            cwd=cwd,
            preexec_fn=sandbox.child_setup,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    finally:
        sandbox.close()


@dataclass
class Box:
    method: str
    support: Support
    ws: Path
    outside: Path

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        sandbox = read_only_sandbox(self.ws, (self.ws / "scratch",), self.support)
        assert sandbox.name == self.method
        return spawn(sandbox, command, self.ws)


def snapshot(root: Path) -> dict[str, str]:
    seen = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            seen[rel] = "link:" + os.readlink(path)
        elif path.is_dir():
            seen[rel] = "dir"
        else:
            seen[rel] = path.read_text()
    return seen


@pytest.fixture(params=["landlock", "bwrap"])
def box(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Box]:
    support = support_for(request.param)
    ws = tmp_path / "workspace"
    for directory in (ws / "scratch", ws / "emptydir", ws / "sub"):
        directory.mkdir(parents=True)
    (ws / "data.txt").write_text(ORIGINAL)
    (ws / "sub" / "deep.txt").write_text(ORIGINAL)
    (tmp_path / "sibling.txt").write_text(ORIGINAL)
    (tmp_path / "other").mkdir()
    outside = Path(tempfile.mkdtemp(prefix="enforce-outside-"))
    try:
        yield Box(request.param, support, ws, outside)
    finally:
        shutil.rmtree(outside)


PY = sys.executable
DENIED = {
    "create": "echo new > new.txt",
    "overwrite": "echo changed > data.txt",
    "append": "echo more >> data.txt",
    "truncate by redirect": ": > data.txt",
    "truncate command": "truncate -s 0 data.txt",
    "deep write": "echo more >> sub/deep.txt",
    "delete": "rm data.txt",
    "rmdir": "rmdir emptydir",
    "rename": "mv data.txt moved.txt",
    "move out": "mv data.txt ../moved.txt",
    "mkdir": "mkdir made",
    "symlink": "ln -s data.txt link",
    "hard link": "ln data.txt hard",
    "fifo": "mkfifo fifo",
    "sed in place": "sed -i s/original/changed/ data.txt",
    "grandchild": "bash -c 'bash -c \"echo more >> data.txt\"'",
    "background child": "(sleep 0.01; echo more >> data.txt) & wait $!",
    "python": f"{PY} -c \"open('data.txt', 'a').write('more')\"",
}


@pytest.mark.parametrize("command", DENIED.values(), ids=DENIED.keys())
def test_changes_to_the_workspace_fail(box: Box, command: str) -> None:
    before = snapshot(box.ws)
    result = box.run(command)
    assert result.returncode != 0, result
    assert snapshot(box.ws) == before  # "move out" may leave a copy outside: that is allowed


def test_reading_and_running_work(box: Box) -> None:
    result = box.run(f"cat data.txt sub/deep.txt && ls && {PY} -c 'print(6 * 7)'")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(ORIGINAL * 2) and result.stdout.endswith("42\n")


def test_outside_the_workspace_stays_writable(box: Box) -> None:
    out = box.outside / "out.txt"
    result = box.run(
        f"echo a > {out} && mkdir {box.outside}/d && mv {out} {box.outside}/d/ "
        "&& echo more >> ../sibling.txt && echo x > /dev/null"
    )
    assert result.returncode == 0, result.stderr
    assert (box.outside / "d" / "out.txt").read_text() == "a\n"
    assert (box.ws.parent / "sibling.txt").read_text() == ORIGINAL + "more\n"


def test_an_existing_file_beside_the_workspace_can_be_truncated(box: Box) -> None:
    result = box.run(": > ../sibling.txt")
    assert result.returncode == 0, result.stderr
    assert (box.ws.parent / "sibling.txt").read_text() == ""


def test_writable_dir_inside_the_workspace_stays_writable(box: Box) -> None:
    result = box.run(
        "echo a > scratch/a && mkdir scratch/d && mv scratch/a scratch/d/b && ln -s b scratch/d/c"
    )
    assert result.returncode == 0, result.stderr
    assert (box.ws / "scratch" / "d" / "c").read_text() == "a\n"
    assert (box.ws / "data.txt").read_text() == ORIGINAL


def test_the_parent_is_not_restricted(box: Box) -> None:
    box.run("true")
    (box.ws / "data.txt").write_text("parent wrote\n")
    assert (box.ws / "data.txt").read_text() == "parent wrote\n"


ESCAPES = {
    "remount": "mount -o remount,rw,bind . ; echo more >> data.txt",
    "new mount namespace": "unshare -m sh -c 'mount --bind . . ; mount -o remount,rw,bind . ;"
    " echo more >> data.txt'",
    "user namespace": "unshare -Urm sh -c 'mount -o remount,rw,bind . ; echo more >> data.txt'",
    "tmpfs over it": "unshare -m sh -c 'mount -t tmpfs none .. && echo more >> data.txt'",
}


@pytest.mark.skipif(os.geteuid() != 0, reason="checks what root can do")
@pytest.mark.parametrize("command", ESCAPES.values(), ids=ESCAPES.keys())
def test_root_cannot_undo_it(box: Box, command: str) -> None:
    if shutil.which(command.split()[0]) is None:
        pytest.skip(f"{command.split()[0]} not installed")
    result = box.run(command)
    assert result.returncode != 0, result
    assert (box.ws / "data.txt").read_text() == ORIGINAL


INNER = """
import pathlib, sys
from epistemic_agent.enforce import read_only_sandbox
sandbox = read_only_sandbox(pathlib.Path(sys.argv[1]))  # a ruleset that lets the workspace be
sandbox.child_setup()
open("data.txt", "a").write("more")
"""


def test_a_second_landlock_layer_cannot_lift_it(box: Box) -> None:
    if detect().landlock_abi is None:
        pytest.skip("needs Landlock for the inner layer")
    result = box.run(f"{PY} -c '{INNER}' {box.ws.parent / 'other'}")
    assert result.returncode != 0
    assert "PermissionError" in result.stderr or "Read-only" in result.stderr, result.stderr
    assert (box.ws / "data.txt").read_text() == ORIGINAL


def test_landlock_sets_no_new_privs(tmp_path: Path) -> None:
    sandbox = read_only_sandbox(tmp_path, support=support_for("landlock"))
    result = spawn(sandbox, "grep NoNewPrivs /proc/self/status", tmp_path)
    assert result.stdout.split() == ["NoNewPrivs:", "1"]


def test_landlock_ruleset_fd_does_not_reach_the_command(tmp_path: Path) -> None:
    sandbox = read_only_sandbox(tmp_path, support=support_for("landlock"))
    try:
        result = subprocess.run(
            ["bash", "-c", "ls -l /proc/$$/fd/"],
            preexec_fn=sandbox.child_setup,
            close_fds=False,  # a bare fork/exec closes nothing: close-on-exec must do it
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        sandbox.close()
    assert "landlock" not in result.stdout


def test_landlock_fails_closed_when_the_restriction_fails(tmp_path: Path) -> None:
    sandbox = read_only_sandbox(tmp_path, support=support_for("landlock"))
    assert sandbox.child_setup is not None
    sandbox.close()  # the ruleset fd is gone: landlock_restrict_self must fail
    with pytest.raises(subprocess.SubprocessError):
        subprocess.run(["touch", "ran"], cwd=tmp_path, preexec_fn=sandbox.child_setup, check=False)
    assert not (tmp_path / "ran").exists()


def test_landlock_limits_as_documented(tmp_path: Path) -> None:
    """Pinned so the module docstring stays true: metadata (mode, times, inode flags) is not
    governed, and no entry can be created directly in an ancestor of the workspace."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.txt").write_text(ORIGINAL)
    sandbox = read_only_sandbox(ws, support=support_for("landlock"))
    result = spawn(
        sandbox, "chmod 600 data.txt && touch -d 2001-01-01 data.txt && touch data.txt", ws
    )
    assert result.returncode == 0, result.stderr
    assert (ws / "data.txt").stat().st_mode & 0o777 == 0o600
    sandbox = read_only_sandbox(ws, support=support_for("landlock"))
    assert spawn(sandbox, "touch ../new.txt", ws).returncode != 0


def test_writable_must_not_contain_the_workspace(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="contains the workspace"):
        read_only_sandbox(tmp_path / ".", (tmp_path.parent,), support=support_for("landlock"))


def test_missing_paths_are_refused(tmp_path: Path) -> None:
    support = support_for("landlock")
    with pytest.raises(FileNotFoundError):
        read_only_sandbox(tmp_path / "absent", support=support)
    with pytest.raises(FileNotFoundError):
        read_only_sandbox(tmp_path, (tmp_path / "absent",), support=support)


def test_none_only_observes(tmp_path: Path) -> None:
    sandbox = read_only_sandbox(tmp_path, support=Support(None, "ENOSYS", None, "not installed"))
    assert (sandbox.name, sandbox.argv_prefix, sandbox.child_setup) == ("none", (), None)
    assert spawn(sandbox, "touch made", tmp_path).returncode == 0


def test_best_prefers_landlock_then_a_working_bwrap() -> None:
    bwrap = "/usr/bin/bwrap (bubblewrap 0.8.0)"
    assert Support(7, None, bwrap, None).best() == "landlock"
    assert Support(None, "ENOSYS", bwrap, None).best() == "bwrap"
    assert Support(None, "ENOSYS", bwrap, "setting up uid map: denied").best() == "none"
    assert Support(None, "ENOSYS", None, "not installed").best() == "none"
    assert Support(None, "x", bwrap, None).bwrap_path == "/usr/bin/bwrap"


def test_detect_reports_and_is_cached() -> None:
    found = detect()
    assert found is detect()
    assert (found.landlock_abi is None) != (found.landlock_error is None)
    if found.landlock_abi is not None:
        assert found.landlock_abi >= 1
        assert f"ABI {found.landlock_abi}" in found.lines()[1]
    assert found.to_json()["best"] == found.best()
    assert found.lines()[0].startswith("read-only workspace for non-mutating acts:")


def test_ctypes_is_imported_only_when_used() -> None:
    code = "import sys, epistemic_agent.enforce; assert 'ctypes' not in sys.modules"
    subprocess.run([PY, "-c", code], check=True)


def test_landlock_cost_per_call(tmp_path: Path) -> None:
    support = support_for("landlock")
    read_only_sandbox(tmp_path, support=support).close()  # warm: ctypes and libc loaded

    def plain() -> None:
        subprocess.run(["bash", "-c", "true"], check=True)

    def sandboxed() -> None:
        sandbox = read_only_sandbox(tmp_path, support=support)
        subprocess.run(["bash", "-c", "true"], preexec_fn=sandbox.child_setup, check=True)
        sandbox.close()

    def median_ms(call: object) -> float:
        times = []
        for _ in range(15):
            started = time.perf_counter()
            call()  # type: ignore[operator]
            times.append(time.perf_counter() - started)
        return statistics.median(times) * 1000

    base, with_landlock = median_ms(plain), median_ms(sandboxed)
    print(f"bash -c true: {base:.2f} ms; with Landlock: {with_landlock:.2f} ms")
    assert with_landlock - base < 100
