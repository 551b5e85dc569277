"""Every rename or removal an act attempts on a protected path is seen, by whatever route.

A protected file lies a few folders down in the workspace (ws/a/b/c/protected.toml). Each
folder on the way is pinned by the mounts, so each attempt fails; here the record must also
*see* each attempt, from the shell, from interpreters, through libc calls no shell parse can
read, through the 32-bit system call table, and from children left running after their
parent has gone. Ordinary renames elsewhere are not reported, and nothing an act does can make
the watch hang it.
"""

from __future__ import annotations

import ctypes
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from epistemic_agent.execute.reaper import Reaper
from epistemic_agent.execute.sandbox import seccomp
from epistemic_agent.execute.sandbox import tripwire as tripwire_module
from epistemic_agent.execute.sandbox.confinement import Confinement, Launch
from epistemic_agent.execute.sandbox.platform import Platform, detect
from epistemic_agent.execute.shell import Execution, run_shell

pytestmark = [
    pytest.mark.system,  # the kernel's tripwire under confinement
    pytest.mark.skipif(sys.platform != "linux", reason="confinement is Linux-only"),
]

FOUND = detect(probe_bwrap=True)
ORIGINAL = 'default = "deny"\n'
PROTECTED = "a/b/c/protected.toml"
LEVELS = (PROTECTED, "a/b/c", "a/b", "a")
PY = shlex.quote(sys.executable)
CHANGE = "change-state"

#: Helper programs an attacker would write, kept outside the workspace.
EXCHANGE = """
import ctypes, os, sys
path = sys.argv[1]
if os.path.isdir(path):
    os.mkdir("decoy")
else:
    open("decoy", "w").write("FORGED")
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, path.encode(), -100, b"decoy", 2) != 0:  # RENAME_EXCHANGE
    sys.exit(os.strerror(ctypes.get_errno()))
"""
I386_RENAME = """
import ctypes, mmap, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long)
flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40  # MAP_32BIT: pointers int 0x80 can take
memory = libc.mmap(None, 4096, 7, flags, -1, 0)
old, new = sys.argv[1].encode() + b"\\0", sys.argv[2].encode() + b"\\0"
at_old, at_new = memory + 256, memory + 256 + len(old)
code = (b"\\x53\\xb8" + struct.pack("<I", 38)  # push rbx; mov eax, 38 (i386 rename)
        + b"\\xbb" + struct.pack("<I", at_old) + b"\\xb9" + struct.pack("<I", at_new)
        + b"\\xcd\\x80\\x5b\\xc3")  # int 0x80; pop rbx; ret
ctypes.memmove(memory, code, len(code))
ctypes.memmove(at_old, old, len(old))
ctypes.memmove(at_new, new, len(new))
result = ctypes.CFUNCTYPE(ctypes.c_int)(memory)()
print(result)
sys.exit(0 if result == 0 else 1)
"""

ROUTES = {
    "mv": "mv {path} moved",
    "rmdir": "rmdir {path}",
    "rm -rf": "rm -rf {path}",
    "python os.rename": PY + " -c 'import os, sys; os.rename(sys.argv[1], \"moved\")' {path}",
    "python os.rmdir": PY + " -c 'import os, sys; os.rmdir(sys.argv[1])' {path}",
    "perl rename": 'perl -e \'rename($ARGV[0], "moved") or die "$!\\n"\' {path}',
    "renameat2 exchange": PY + " {tools}/exchange.py {path}",
}


def platform(name: str) -> Platform:
    """The platform of one mechanism, from what this machine has (landlock+namespaces must
    work here: it fails rather than skips)."""
    assert FOUND.landlock_abi is not None, FOUND.landlock_error
    if name == "landlock":
        return Platform(FOUND.landlock_abi, None, None, "forced off", None, "forced off")
    if name == "bwrap":
        assert FOUND.bwrap is not None and FOUND.bwrap_error is None, FOUND.bwrap_error
        return Platform(None, "forced off", None, "forced off", FOUND.bwrap, None)
    assert FOUND.namespaces is not None, FOUND.namespaces_error
    return Platform(FOUND.landlock_abi, None, FOUND.namespaces, None, None, "not used")


@dataclass
class Box:
    """A workspace with a protected file three folders down, and the session's confinement."""

    ws: Path
    tools: Path
    scratch: Path
    confinement: Confinement

    def run(self, command: str, reaper: Reaper | None = None, timeout: float = 30) -> Execution:
        launch = self.confinement.launch(CHANGE)
        return run_shell(command, self.ws, timeout, self.scratch, launch=launch, reaper=reaper)

    @property
    def protected(self) -> Path:
        return self.ws / PROTECTED


def make_box(root: Path, mechanism: str = "landlock+namespaces", guarded: str = PROTECTED) -> Box:
    ws, tools = root / "ws", root / "tools"
    (ws / "a" / "b" / "c").mkdir(parents=True)
    tools.mkdir()
    (ws / PROTECTED).write_text(ORIGINAL)
    (ws / "a" / "b" / "c" / "notes.txt").write_text("the agent's own\n")
    (tools / "exchange.py").write_text(EXCHANGE)
    (tools / "i386_rename.py").write_text(I386_RENAME)
    confinement = Confinement(
        platform(mechanism), ws, root / "scratch", ws / ".epistemic", (ws / guarded,), secrets=()
    )
    return Box(ws, tools, root / "scratch", confinement)


@pytest.fixture
def box(tmp_path: Path) -> Box:
    return make_box(tmp_path)


def attempted(done: Execution) -> list[tuple[str, str]]:
    assert done.attempts is not None and done.attempts.unwatched is None, done.attempts
    return [(attempt.path, attempt.target) for attempt in done.attempts.kept]


# -- every route, at every level --------------------------------------------------------------


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "bwrap"])
def test_every_attempt_on_the_path_to_a_protected_file_fails_and_is_seen(
    tmp_path: Path, mechanism: str, level: str, route: str
) -> None:
    box = make_box(tmp_path, mechanism)
    done = box.run(ROUTES[route].format(path=level, tools=box.tools))
    assert done.returncode != 0, f"{route} {level}: {done.stderr.read_text()}"
    assert box.protected.read_text() == ORIGINAL, f"{route} {level} changed the file"
    path, target = str(box.ws / level), str(box.protected)
    seen = attempted(done)
    if route == "rm -rf":  # rm never gets to the folder: it stops at the protected file
        assert any(p == path or p.startswith(path + "/") for p, _ in seen), seen
    else:
        assert (path, target) in seen, f"{route} {level}: {seen}"
    assert all(t == target for _, t in seen), seen


def test_a_32_bit_system_call_is_seen_too(box: Box) -> None:
    """`int 0x80` from a 64-bit process goes through the i386 table: other numbers, another
    architecture in the filter's eyes."""
    if os.uname().machine != "x86_64":
        pytest.skip("the i386 table is x86_64's")
    bare = box.ws.parent / "plain"
    bare.mkdir()
    (bare / "q").touch()
    probe = run_shell(f"{PY} {box.tools}/i386_rename.py q r", bare, 30, box.scratch)
    if probe.returncode != 0 or not (bare / "r").exists():
        pytest.skip(f"no 32-bit system calls here: {probe.stderr.read_text()}")
    done = box.run(f"{PY} {box.tools}/i386_rename.py a moved")
    assert box.protected.read_text() == ORIGINAL
    assert (str(box.ws / "a"), str(box.protected)) in attempted(done)


def test_a_chrooted_act_is_seen_through_its_root(box: Box) -> None:
    """A root act may chroot (CAP_SYS_CHROOT is kept): its `..` stops at its new root, and an
    absolute path starts there; the folder it names is still the pinned one."""
    if os.geteuid() != 0:
        pytest.skip("chroot needs root")
    enter = "import os; os.chroot('a/b'); os.chdir('/'); "
    for rename in ("os.rename('/../c', '/x')", "os.rename('../../c/', 'y')"):
        done = box.run(f'{PY} -c "{enter}{rename}"')
        assert done.returncode != 0 and box.protected.read_text() == ORIGINAL
        assert (str(box.ws / "a/b/c"), str(box.protected)) in attempted(done), rename


def test_io_uring_is_not_a_way_around_the_watch(box: Box) -> None:
    """IORING_OP_RENAMEAT is no system call: a filter would not see it, so io_uring is not
    there for an act (as on a kernel built without it)."""
    setup = f"{PY} -c 'import ctypes; p = ctypes.create_string_buffer(120); " + (
        "l = ctypes.CDLL(None, use_errno=True); r = l.syscall(425, 4, p); "
        "print(r, ctypes.get_errno())'"
    )
    outside = run_shell(setup, box.ws, 30, box.scratch)
    if outside.stdout.read_text().split()[0] == "-1":
        pytest.skip(f"no io_uring on this machine: errno {outside.stdout.read_text()}")
    done = box.run(setup)
    assert done.stdout.read_text().split() == ["-1", "38"]  # ENOSYS


def test_removing_what_lies_inside_a_protected_folder_is_seen(tmp_path: Path) -> None:
    box = make_box(tmp_path, guarded="a/b")
    done = box.run("rm -rf a/b; rm -f a/b/c/notes.txt")
    assert box.protected.read_text() == ORIGINAL
    assert (box.ws / "a" / "b" / "c" / "notes.txt").exists()
    seen = attempted(done)
    assert (str(box.ws / "a/b/c/notes.txt"), str(box.ws / "a/b")) in seen, seen


def test_where_no_mount_stops_it_the_attempt_is_still_seen(tmp_path: Path) -> None:
    """Under Landlock alone nothing pins the folders: the rename happens, and is recorded."""
    box = make_box(tmp_path, mechanism="landlock")
    done = box.run("mv a moved")
    assert done.returncode == 0 and (box.ws / "moved" / "b" / "c" / "protected.toml").exists()
    assert (str(box.ws / "a"), str(box.protected)) in attempted(done)


# -- what is not an attempt -------------------------------------------------------------------


@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "landlock", "bwrap"])
def test_ordinary_renames_work_and_are_not_reported(tmp_path: Path, mechanism: str) -> None:
    box = make_box(tmp_path, mechanism)
    done = box.run(
        "git init -q && echo x > f && git add f && "
        "git -c user.name=t -c user.email=t@t commit -qm one && mv f g && "
        "mkdir d && mv d e && rmdir e && mv a/b/c/notes.txt a/b/c/kept.txt && "
        "rm -rf .git && rm g"
    )
    assert done.returncode == 0, done.stderr.read_text()
    assert (box.ws / "a" / "b" / "c" / "kept.txt").exists()
    assert not (box.ws / ".git").exists()
    assert attempted(done) == []


def test_attempts_kept_are_bounded_and_the_rest_counted(box: Box) -> None:
    loop = "import os\nfor _ in range(130):\n    try: os.rename('a', 'b')\n    except OSError: pass"
    done = box.run(f"{PY} -c {shlex.quote(loop)}")
    assert done.attempts is not None
    assert len(done.attempts.kept) == tripwire_module.MAX_KEPT
    assert done.attempts.more == 130 - tripwire_module.MAX_KEPT


# -- the watch follows every process of the call, and never hangs one -------------------------


def test_a_child_renaming_after_its_parent_exited_is_seen(box: Box) -> None:
    done = box.run(
        "sh -c '(sleep 0.3; mv a moved) >/dev/null 2>&1 &'; "  # sh exits: the child is orphaned
        "setsid sh -c 'sleep 0.3; rmdir a/b' >/dev/null 2>&1 & "  # out of the group as well
        "sleep 1.5",
        reaper=Reaper(),
    )
    assert box.protected.read_text() == ORIGINAL
    seen = attempted(done)
    assert (str(box.ws / "a"), str(box.protected)) in seen, seen
    assert (str(box.ws / "a/b"), str(box.protected)) in seen, seen


def test_a_process_left_after_the_call_gets_enosys_not_a_hang(tmp_path: Path) -> None:
    """Under Landlock alone a process that left the call's group outlives it (with a PID
    namespace the call's warden kills it): its watched calls fail, they never wait."""
    box = make_box(tmp_path, "landlock")
    status = box.ws / "status"
    late = (
        "import os, time\nos.setsid()\nopen('started', 'w').close()\ntime.sleep(0.5)\n"
        "try: os.rename('a/b/c/notes.txt', 'a/b/c/later.txt')\n"
        "except OSError as e: open('status', 'w').write(str(e.errno))\n"
        "else: open('status', 'w').write('0')"
    )
    escape = f"{PY} -c {shlex.quote(late)} >/dev/null 2>&1 & until [ -e started ]; do :; done"
    done = box.run(escape)  # no reaper: nothing stops it when the call ends
    assert done.returncode == 0 and attempted(done) == []
    deadline = time.monotonic() + 10
    while not status.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert status.read_text() == "38"  # ENOSYS: nobody listens any more, nothing waits


def test_a_failing_listener_turns_watched_calls_into_errors(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: object, listener: object, call: object) -> list[object]:
        raise RuntimeError("the listener broke")

    monkeypatch.setattr(tripwire_module.Tripwire, "_examine", broken)
    code = (
        "import os\nfor old, new in (('f', 'g'), ('g', 'f')):\n"
        "    try: os.rename(old, new); print(0)\n    except OSError as e: print(e.errno)"
    )
    done = box.run(f"touch f && {PY} -c {shlex.quote(code)}", timeout=10)
    assert not done.timed_out
    assert done.stdout.read_text().split() == ["0", "38"]  # the first went on, then ENOSYS
    assert done.attempts is not None and "the listener broke" in (done.attempts.unwatched or "")


def test_an_answer_the_kernel_refuses_fails_the_call_rather_than_hang_it(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seccomp, "IOCTL_NOTIF_SEND", 0xC0182199)  # no such request
    code = "import os\ntry: os.rename('f', 'g'); print(0)\nexcept OSError as e: print(e.errno)"
    done = box.run(f"touch f && {PY} -c {shlex.quote(code)}", timeout=10)
    assert not done.timed_out and done.stdout.read_text().split() == ["38"]
    assert done.attempts is not None and "seccomp answer" in (done.attempts.unwatched or "")


def test_a_kernel_that_cannot_let_a_call_go_on_gets_no_filter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = os.uname()
    for release, expected in (("5.4.0-42-generic", None), ("5.5.0", real.machine)):
        fake = os.uname_result((*real[:2], release, *real[3:]))
        monkeypatch.setattr(seccomp.os, "uname", lambda fake=fake: fake)
        assert seccomp.host() == (expected if real.machine in seccomp.WATCHED else None)


def test_a_confine_run_that_no_one_listens_to_installs_no_filter(box: Box) -> None:
    """The benchmark's supervisor runs `confine` itself: with no listener, no call may wait."""
    confine = box.confinement.launch(CHANGE).confine
    done = run_shell("mv a/b/c/notes.txt x", box.ws, 10, box.scratch, launch=Launch(confine))
    assert done.returncode == 0 and not done.timed_out and done.attempts is None


def test_a_host_without_a_filter_says_the_calls_were_not_watched(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seccomp, "host", lambda: None)
    done = box.run("mv a moved")
    assert done.returncode != 0 and box.protected.read_text() == ORIGINAL
    assert done.attempts is not None and done.attempts.kept == ()
    assert "no seccomp filter" in (done.attempts.unwatched or "")


@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "bwrap"])
def test_a_filter_the_kernel_refuses_leaves_the_act_running_unwatched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mechanism: str
) -> None:
    """As with a setuid bwrap and no CAP_SYS_ADMIN (seccomp then wants no_new_privs, which
    that bwrap cannot run under): the act runs, and the execution says it was not watched."""

    def refused(machine: str) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(seccomp, "install", refused)
    box = make_box(tmp_path, mechanism)
    done = box.run("touch f && mv f g && mv a moved")
    assert done.returncode != 0 and (box.ws / "g").exists()
    assert box.protected.read_text() == ORIGINAL
    assert done.attempts is not None and done.attempts.kept == ()
    assert done.attempts.unwatched == "seccomp refused the filter: Permission denied"


def test_the_filter_is_small_and_ends_in_its_own_returns() -> None:
    for machine in seccomp.WATCHED:
        program = seccomp.program(machine)
        assert len(program) < 64
        for index, (code, jt, jf, _) in enumerate(program):
            if code == 0x15:
                assert index + 1 + max(jt, jf) < len(program)
    assert ctypes.sizeof(seccomp._Notif) == 80 and ctypes.sizeof(seccomp._Resp) == 24


# -- a session without root -------------------------------------------------------------------

AS_NOBODY = """
import json, sys
from pathlib import Path
from epistemic_agent.execute.sandbox.confinement import Confinement
from epistemic_agent.execute.sandbox.platform import Platform, detect
from epistemic_agent.execute.shell import run_shell
ws, scratch, mechanism, abi = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
found = detect() if mechanism == "landlock+namespaces" else None
platform = found or Platform(int(abi), None, None, "off", None, "off")
guarded = (ws / "a/b/c/protected.toml",)
confinement = Confinement(platform, ws, scratch, ws / ".epistemic", guarded, secrets=())
hide = "import ctypes, os; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)"  # PR_SET_DUMPABLE 0
move = f"{hide}; os.rename('a/b', 'x'); os.rename('x', 'a/b')"
done = run_shell(f'/usr/bin/python3 -c "{move}"', ws, 10, scratch,
                 launch=confinement.launch("change-state"))
seen = done.attempts
print(json.dumps({"mechanism": platform.mechanism(), "unread": seen.unread,
                  "kept": [[a.path, a.target] for a in seen.kept]}))
"""


AS_USER_NOBODY = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--")


@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "landlock"])
def test_a_session_without_root_watches_too(tmp_path: Path, mechanism: str) -> None:
    """As nobody, a process that makes itself non-dumpable to hide its memory: in a user
    namespace the session may still read it; without one, its calls are counted as unread,
    never taken for attempts on anything."""
    if os.geteuid() != 0:
        pytest.skip("switching to another user needs root")
    base = Path(tempfile.mkdtemp(prefix="epistemic-nobody-"))
    try:
        base.chmod(0o755)
        package = Path(tripwire_module.__file__).parents[2]
        unused = shutil.ignore_patterns("*.pyc", "benchmark", "demo")
        shutil.copytree(package, base / "lib" / "epistemic_agent", ignore=unused)
        box = make_box(base / "box")
        for path in (base / "box", *(base / "box").rglob("*")):
            os.chown(path, 65534, 65534)
        args = [str(box.ws), str(box.scratch), mechanism, str(FOUND.landlock_abi)]
        done = subprocess.run(
            [*AS_USER_NOBODY, "/usr/bin/python3", "-c", AS_NOBODY, *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(base / "lib"), "HOME": str(base)},
        )
        assert done.returncode == 0, done.stderr
        found = json.loads(done.stdout)
        assert found["mechanism"] == mechanism
        if mechanism == "landlock+namespaces":
            assert [str(box.ws / "a/b"), str(box.protected)] in found["kept"], found
            assert found["unread"] == 0
        else:  # no pins: the renames happened, and could not be read
            assert found == {"mechanism": "landlock", "unread": 2, "kept": []}
        assert box.protected.read_text() == ORIGINAL
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_calls_side_by_side_are_each_watched_by_the_one_listening_thread(box: Box) -> None:
    """An MCP client may run calls side by side: each call's attempts are its own, both are
    answered while the other runs (neither waits for the other's end), and the session
    listens with one thread for all calls, not one more per call."""
    import threading

    from epistemic_agent.execute.sandbox.tripwire_hub import HUB

    box.run("true")  # the listening thread runs from the first call on
    before = threading.active_count()
    release = box.scratch / "release"
    results: dict[str, Execution] = {}

    def call(name: str, command: str) -> None:
        results[name] = box.run(command)

    slow = f"mv a/b moved-slow; while [ ! -e {release} ]; do sleep 0.01; done"
    quick = "mv a/b/c moved-quick"
    first = threading.Thread(target=call, args=("slow", slow))
    first.start()
    second = threading.Thread(target=call, args=("quick", quick))
    second.start()
    second.join(20)  # the quick call ends while the slow one still runs
    assert not second.is_alive() and first.is_alive()
    release.touch()
    first.join(20)
    slow_seen = [path for path, _ in attempted(results["slow"])]
    quick_seen = [path for path, _ in attempted(results["quick"])]
    assert str(box.ws / "a/b") in slow_seen and str(box.ws / "a/b") not in quick_seen
    assert str(box.ws / "a/b/c") in quick_seen and str(box.ws / "a/b/c") not in slow_seen
    for _ in range(5):
        box.run("true")
    assert threading.active_count() == before
    assert HUB._thread is not None and HUB._thread.is_alive()
