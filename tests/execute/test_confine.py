"""Every act confined by the kernel, tried as an attacker would.

The static gate is blinded for these tests (every command classifies as `unknown`, which it
lets through): what stops each attack here is the kernel, not the parse. Each attack is tried
from a mutating and an observation act, under every mechanism that claims the guarantee, and
afterwards nothing of the record may have changed but what the session itself appended.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC, eventually, running_below
from epistemic_agent.core.vocabulary import GUARANTEES
from epistemic_agent.effects.cache import EffectCache
from epistemic_agent.effects.classify import Effect
from epistemic_agent.execute.sandbox import confinement as confine
from epistemic_agent.execute.sandbox.platform import Platform, detect
from epistemic_agent.journal.log import JournalError
from epistemic_agent.journal.verify import verify_journal
from epistemic_agent.session.session import Session, Settings

pytestmark = [
    pytest.mark.system,  # each guarantee of confinement, attacked under every mechanism
    pytest.mark.skipif(sys.platform != "linux", reason="confinement is Linux-only"),
]

FOUND = detect(probe_bwrap=True)
MARK = b"FORGED"  # never written literally by a command: each builds it from two halves
PAYLOAD = "FOR''GED"  # bash joins the halves: the command text never holds the mark
CHANGE = "make the change that is part of the deliverable here"
LOOK = "look at what is in the workspace before changing it"
HYPOTHESIS = "I believe the report stays out of reach; if a write lands, that is refuted"
POLICY = 'default = "allow"\n'
OFF = "forced off by the test"


def platform(name: str) -> Platform:
    """The platform for one mechanism, built from what this machine has (fail, not skip, where
    the machine should have it: bubblewrap is installed by the test setup)."""
    landlock = name in ("landlock+namespaces", "pid-namespace", "landlock")
    if landlock and FOUND.landlock_abi is None:
        pytest.skip(f"this kernel has no Landlock: {FOUND.landlock_error}")
    if name == "landlock+namespaces":
        assert FOUND.namespaces is not None, FOUND.namespaces_error
        return Platform(FOUND.landlock_abi, None, FOUND.namespaces, None, None, "not used")
    if name == "pid-namespace":  # an older kernel: Landlock without signal scopes
        assert FOUND.namespaces is not None, FOUND.namespaces_error
        return Platform(5, None, FOUND.namespaces, None, None, "not used")
    if name == "bwrap":
        assert FOUND.bwrap is not None and FOUND.bwrap_error is None, FOUND.bwrap_error
        return Platform(None, OFF, None, OFF, FOUND.bwrap, None)
    if name == "landlock":
        return Platform(FOUND.landlock_abi, None, None, OFF, None, OFF)
    return Platform(None, OFF, None, OFF, None, OFF)


STRONG = ["landlock+namespaces", "pid-namespace", "bwrap"]


@pytest.fixture(autouse=True)
def blind_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    unknown = Effect("unknown", dynamic=True, reasons=("the test hides the command",))
    monkeypatch.setattr(EffectCache, "classify", lambda self, command: unknown)


@dataclass
class Box:
    """A workspace with a policy file, a session's record, a home and a system temp of its own."""

    ws: Path
    home: Path
    systmp: Path
    platform: Platform
    short: Path  # a folder with a short path, for sockets (conftest's short_tmp)

    def session(self, **settings: object) -> Session:
        return Session(self.ws, Settings(platform=self.platform, **settings))  # type: ignore[arg-type]

    @property
    def record(self) -> Path:
        return self.ws / ".epistemic"


@pytest.fixture
def make_box(tmp_path: Path, short_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    def make(mechanism: str) -> Box:
        root = tmp_path / mechanism.replace("+", "-")
        ws, home, systmp = root / "ws", root / "home", root / "systmp"
        for folder in (ws / "src", home / ".cache", systmp):
            folder.mkdir(parents=True)
        (ws / "epistemic.toml").write_text(POLICY)
        (ws / "src" / "app.py").write_text("print('app')\n")
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("TMPDIR", str(systmp))
        short = short_tmp / mechanism.replace("+", "-")
        short.mkdir()
        return Box(ws, home, systmp, platform(mechanism), short)

    yield make


# -- what "intact" means ---------------------------------------------------------------------


def record_files(box: Box) -> list[Path]:
    found = [p for p in box.record.rglob("*") if p.is_file() and not p.is_symlink()]
    return [*found, box.ws / "RATIONALE.md", box.ws / "epistemic.toml"]


REWRITTEN = (
    "journal.jsonl",
    "head.json",
    "RATIONALE.md",
)
TURNED = ("tmp", "report")  # capture files, and the pages and checkpoint a page turn rewrites


@dataclass
class Snapshot:
    journal: bytes
    journal_inode: int
    stable: dict[Path, tuple[int, int, int]]  # inode, size, mtime of files no call rewrites
    policy: bytes


def snapshot(box: Box) -> Snapshot:
    journal = box.record / "journal.jsonl"
    stable = {}
    for path in record_files(box):
        if path.name not in REWRITTEN and path.parent.name not in TURNED:
            info = path.stat()
            stable[path] = (info.st_ino, info.st_size, info.st_mtime_ns)
    policy = (box.ws / "epistemic.toml").read_bytes()
    return Snapshot(journal.read_bytes(), journal.stat().st_ino, stable, policy)


def foreign(line: bytes) -> bool:
    """A journal line the session did not write (its records carry its pid, or none)."""
    try:
        record = json.loads(line)
    except ValueError:
        return True
    return not isinstance(record, dict) or record.get("pid") not in (None, os.getpid())


def assert_intact(box: Box, before: Snapshot, what: str) -> None:
    """Only the session's own appends changed the record since `before`."""
    journal = box.record / "journal.jsonl"
    info = journal.lstat()
    assert stat.S_ISREG(info.st_mode) and info.st_nlink == 1, what
    assert info.st_ino == before.journal_inode, f"{what}: the journal was replaced"
    data = journal.read_bytes()
    assert data.startswith(before.journal), f"{what}: the journal's past changed"
    new = data[len(before.journal) :]
    assert MARK not in new and not any(foreign(line) for line in new.splitlines()), what
    for name in ("RATIONALE.md", ".epistemic/head.json"):
        path = box.ws / name
        assert path.is_file() and not path.is_symlink(), f"{what}: replaced {name}"
        assert path.stat().st_nlink == 1 and MARK not in path.read_bytes(), f"{what}: {name}"
    assert (box.ws / "epistemic.toml").read_bytes() == before.policy, f"{what}: the policy"
    for path, (inode, size, mtime) in before.stable.items():
        assert path.is_file() and not path.is_symlink(), f"{what}: deleted {path}"
        info = path.stat()
        assert (info.st_ino, info.st_size, info.st_mtime_ns) == (inode, size, mtime), (
            f"{what}: changed {path}"
        )
        assert info.st_nlink == 1, f"{what}: {path} has another hard link"
    pending = box.record / "pending"
    assert not pending.exists() or not list(pending.iterdir()), f"{what}: wrote {pending}"
    assert not list(box.ws.glob("hardlink*")), f"{what}: made a hard link"


def assert_verifies(box: Box) -> None:
    result = verify_journal(box.record / "journal.jsonl", box.record / "head.json")
    assert result.status == "intact", result
    for path in record_files(box):
        assert MARK not in path.read_bytes(), f"wrote into {path}"


# -- the attacks -------------------------------------------------------------------------------


def spellings(target: str, ws: Path) -> dict[str, str]:
    """Ways to name one record path that a parse of the command cannot see through."""
    head, _, tail = target.partition("/")
    split = max(1, len(head) // 2)
    return {
        "relative": target,
        "variable": f'p="{head[:split]}"; p="${{p}}{head[split:]}{"/" + tail if tail else ""}"; '
        '"$p"',
        "glob": target[:2] + "?" + target[3:],
        "absolute": f"$PWD/{target}",
        "proc-cwd": f"/proc/self/cwd/{target}",
        "parent": f"../{ws.name}/{target}",
        "dot-dot": f"./src/../{target}",
        "session-cwd": f"/proc/{os.getpid()}/cwd/{target}",
        "session-root": f"/proc/{os.getpid()}/root{ws}/{target}",
    }


def operations(path: str) -> dict[str, str]:
    """What an attacker does with a path (the variable spelling ends in a quoted "$p")."""
    name = path if not path.endswith('"$p"') else '"$p"'
    setup = path[: -len('"$p"')] if path.endswith('"$p"') else ""
    return {
        "append": f"{setup}printf '%s\\n' {PAYLOAD} >> {name}",
        "overwrite": f"{setup}printf '%s' {PAYLOAD} > {name}",
        "truncate": f"{setup}truncate -s 0 {name}",
        "delete": f"{setup}rm -f {name}",
        "rename": f"{setup}mv -f {name} {name}.moved 2>/dev/null || mv -f {name} moved",
        "hard link": f"{setup}ln -f {name} hardlink && printf '%s' {PAYLOAD} >> hardlink",
        "symlink swap": f"{setup}ln -sf /tmp/elsewhere {name}",
        "python": f'{setup}python3 -c "import os,sys; fd=os.open(sys.argv[1], '
        f"os.O_WRONLY|os.O_APPEND); os.write(fd, b'FOR' + b'GED')\" {name}",
        "chmod": f"{setup}chmod 000 {name}",
    }


TARGETS = [
    ".epistemic/journal.jsonl",
    ".epistemic/head.json",
    ".epistemic/report/checkpoint.json",
    "RATIONALE.md",
    "epistemic.toml",
]


def attacks(box: Box) -> Iterator[tuple[str, str]]:
    """Every operation on every record path, and every spelling of every path (for one
    operation each, in turn: the spellings and operations are independent)."""
    blob = next((p for p in (box.record / "evidence").rglob("*") if p.is_file()), None)
    targets = [*TARGETS, *([str(blob.relative_to(box.ws))] if blob is not None else [])]
    for number, target in enumerate(targets):
        named = spellings(target, box.ws)
        names = list(named)
        for index, operation in enumerate(operations(target)):
            spelling = names[(number + index) % len(names)]
            yield f"{operation} {target} ({spelling})", operations(named[spelling])[operation]
        for index, spelling in enumerate(names):
            operation = list(operations(target))[(number + index) % 3]  # append/overwrite/trunc
            yield f"{operation} {target} ({spelling})", operations(named[spelling])[operation]
    pending = ".epistemic/pending"
    yield "answer an approval", f"mkdir -p {pending}; printf '%s' {PAYLOAD} > {pending}/1.answer"
    yield "forge evidence", f"printf '%s' {PAYLOAD} > .epistemic/evidence/forged"
    yield "replace the record folder", "mv .epistemic gone; mkdir .epistemic"
    yield "delete the record folder", "rm -rf .epistemic"
    yield "bind over it", "mount --bind /tmp .epistemic"
    yield "unmount its cover", "umount .epistemic; umount RATIONALE.md"
    yield "new mount namespace", "unshare -m sh -c 'umount .epistemic; rm -f .epistemic/head.json'"
    yield "user namespace", "unshare -Urm sh -c 'umount -l .epistemic; rm -rf .epistemic'"
    yield "setns to the session's", f"nsenter -t {os.getpid()} -m rm -f .epistemic/head.json"
    yield "capture file link", "ln -L /proc/self/fd/1 hardlink-out"
    yield (
        "journal fd of the session",
        (f"for fd in /proc/{os.getpid()}/fd/*; do printf '%s' {PAYLOAD} >> $fd; done"),
    )
    yield "remount the root", f"mount -o remount,rw /; printf '%s' {PAYLOAD} >> RATIONALE.md"
    kind, handle = file_handle(box.record / "journal.jsonl")
    yield "open the journal by handle", f"{BY_HANDLE} {kind} {handle}"


#: Open a file by its handle (learnt beforehand) through the workspace's mount, past every
#: cover mounted on its path, and append to it: needs CAP_DAC_READ_SEARCH.
BY_HANDLE = (
    'python3 -c "import ctypes,os,sys; l=ctypes.CDLL(None,use_errno=True); '
    "t,h=int(sys.argv[1]),bytes.fromhex(sys.argv[2]); "
    "raw=len(h).to_bytes(4,'little')+t.to_bytes(4,'little',signed=True)+h; "
    "fd=l.open_by_handle_at(os.open('.',os.O_RDONLY),ctypes.c_char_p(raw),"
    "os.O_WRONLY|os.O_APPEND); sys.exit(1) if fd<0 else os.write(fd,b'FOR'+b'GED')\""
)


def file_handle(path: Path) -> tuple[int, str]:
    """name_to_handle_at(2) of a path: its handle type and bytes (hex)."""
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(8 + 128)
    ctypes.memmove(buffer, (128).to_bytes(4, "little"), 4)
    mount = ctypes.c_int()
    found = libc.name_to_handle_at(-100, os.fsencode(path), buffer, ctypes.byref(mount), 0)
    assert found == 0, os.strerror(ctypes.get_errno())
    size = int.from_bytes(buffer.raw[:4], "little")
    kind = int.from_bytes(buffer.raw[4:8], "little", signed=True)
    return kind, buffer.raw[8 : 8 + size].hex()


def run_attacks(box: Box, act: str) -> list[str]:
    """Every attack from one act type; the ones that left a trace, by name."""
    broken = []
    reason = CHANGE if act in ("change-state", "setup", "revert", "cleanup") else LOOK
    with box.session() as session:
        session.bash("echo seeding the evidence store", "collect-info", LOOK)
        for what, command in attacks(box):
            before = snapshot(box)
            try:
                result = session.bash(command, act, reason)
            except JournalError as error:  # the session refuses a journal an attack broke
                broken.append(f"{what}: {error}")
                break
            assert result.status == "ran", (what, result)
            try:
                assert_intact(box, before, what)
            except AssertionError as error:
                broken.append(f"{what}: {error}")
                break
    if not broken:
        assert_verifies(box)
    return broken


RECORD_CASES = [
    *((mechanism, act) for mechanism in STRONG for act in ("change-state", "collect-info")),
    ("landlock+namespaces", "setup"),
    ("landlock+namespaces", "verify"),
]


@pytest.mark.parametrize(("mechanism", "act"), RECORD_CASES)
def test_no_act_can_touch_the_record(make_box: object, mechanism: str, act: str) -> None:
    box = make_box(mechanism)  # type: ignore[operator]
    assert run_attacks(box, act) == []


def test_the_attacks_do_break_an_unconfined_record(make_box: object) -> None:
    """The same attacks without confinement do damage: the checks above can fail."""
    box = make_box("none")  # type: ignore[operator]
    broken = run_attacks(box, "change-state")
    assert broken and broken[0].startswith("append .epistemic/journal.jsonl (relative)")


# -- what acts may write -----------------------------------------------------------------------


def write_probe(targets: dict[str, Path]) -> str:
    return "; ".join(
        f"(printf x > {path} 2>/dev/null && echo {name}:wrote || echo {name}:refused)"
        for name, path in targets.items()
    )


def outcomes(stdout: str) -> dict[str, str]:
    return dict(line.split(":", 1) for line in stdout.splitlines() if ":" in line)


def places(box: Box, session: Session, other: Path) -> dict[str, Path]:
    site = Path(sys.prefix) / "lib"
    return {
        "workspace": box.ws / "src" / "new.py",
        "scratch": session.scratch_dir() / "s",
        "systmp": box.systmp / "outside",
        "home": box.home / "dotfile",
        "cache": box.home / ".cache" / "pip-download",
        "parent": box.ws.parent / "beside",
        "other-scratch": other / "s",
        "tool": site / "evil.pth",
        "shm": Path("/dev/shm") / f"epistemic-test-{os.getpid()}",
    }


@pytest.mark.parametrize("mechanism", STRONG)
def test_what_each_act_may_write(make_box: object, mechanism: str) -> None:
    box = make_box(mechanism)  # type: ignore[operator]
    other = box.systmp / "epistemic" / "another-session"
    other.mkdir(parents=True)
    allowed = {
        "collect-info": {"scratch", "shm"},
        "verify": {"scratch", "shm"},
        "test-hypothesis": {"scratch", "shm"},
        "change-state": {"workspace", "scratch", "shm"},
        "revert": {"workspace", "scratch", "shm"},
        "cleanup": {"workspace", "scratch", "shm"},
        "setup": {"workspace", "scratch", "shm", "cache"},
    }
    with box.session() as session:
        where = places(box, session, other)
        for act, expected in allowed.items():
            reason = LOOK if act in ("collect-info", "verify") else CHANGE
            if act == "test-hypothesis":
                reason = "I believe nothing is writable here; a write that lands refutes it"
            result = session.bash(write_probe(where), act, reason)
            seen = outcomes(result.stdout)
            assert {name for name, verdict in seen.items() if verdict == "wrote"} == expected, act
            for name in ("systmp", "home", "parent", "tool", "other-scratch"):
                assert not where[name].exists(), (act, name)
            for name in ("workspace", "cache"):
                where[name].unlink(missing_ok=True)
    host_shm = where["shm"]
    assert not host_shm.exists(), "the act's /dev/shm is its own"


def test_policy_grants_are_named_and_recorded(make_box: object, tmp_path: Path) -> None:
    box = make_box("landlock+namespaces")  # type: ignore[operator]
    granted = tmp_path / "granted"
    granted.mkdir()
    (box.ws / "epistemic.toml").write_text(
        POLICY + f'[sandbox]\nwritable = {{ change-state = ["{granted}"] }}\n'
    )
    with box.session() as session:
        done = session.bash(f"printf x > {granted}/made", "change-state", CHANGE)
        setup = session.bash(f"printf x > {granted}/by-setup", "setup", CHANGE)
        header = session.state.header["confinement"]
    assert done.ok and (granted / "made").read_text() == "x"
    assert not setup.ok and not (granted / "by-setup").exists()
    assert header["grants"]["change-state"] == [str(granted)]
    assert header["grants"]["setup"] == [str(box.home / ".cache")]  # the default stays


def test_what_a_setup_act_changes_outside_is_recorded(make_box: object) -> None:
    box = make_box("landlock+namespaces")  # type: ignore[operator]
    cache = box.home / ".cache"
    with box.session() as session:
        done = session.bash(
            "mkdir -p ~/.cache/pip && printf x > ~/.cache/pip/wheel", "setup", CHANGE
        )
        quiet = session.bash("printf x > src/made.py", "setup", CHANGE)
        journal = [
            json.loads(line) for line in (box.record / "journal.jsonl").read_text().splitlines()
        ]
    assert done.ok, done
    outside = next(r for r in journal if r["kind"] == "outcome" and r["seq"] == done.seq)["outside"]
    seen = outside[str(cache)]
    assert "pip/wheel" in seen["created"] + seen["modified"]
    assert seen["method"] in ("fanotify", "ctime")
    calm = next(r for r in journal if r["kind"] == "outcome" and r["seq"] == quiet.seq)
    assert "outside" not in calm  # nothing changed out there: nothing to say


# -- metadata, signals ------------------------------------------------------------------------

METADATA = {
    "chmod": "chmod 777 src/app.py",
    "chown": "chown 1:1 src/app.py",
    "touch": "touch -d 2001-01-01 src/app.py",
    "touch dir": "touch -d 2001-01-01 src",
    "xattr": "python3 -c \"import os; os.setxattr('src/app.py', 'user.x', b'1')\"",
    "utime": "python3 -c \"import os; os.utime('src/app.py', (0, 0))\"",
    "chmod workspace": "chmod 700 .",
}


@pytest.mark.parametrize("mechanism", STRONG)
@pytest.mark.parametrize("act", ["collect-info", "test-hypothesis", "verify"])
def test_observations_cannot_change_metadata(make_box: object, mechanism: str, act: str) -> None:
    box = make_box(mechanism)  # type: ignore[operator]
    target = box.ws / "src" / "app.py"
    before = (target.stat(), (box.ws / "src").stat())
    workspace = box.ws.stat()  # its mtime moves with the session's own report swaps
    reason = "I believe the file's metadata is fixed; a change that lands refutes it"
    with box.session() as session:
        for what, command in METADATA.items():
            result = session.bash(command, act, reason if act == "test-hypothesis" else LOOK)
            assert result.returncode != 0, (what, result)
    after = (target.stat(), (box.ws / "src").stat())
    assert (box.ws.stat().st_mode, box.ws.stat().st_uid) == (workspace.st_mode, workspace.st_uid)
    for old, new in zip(before, after, strict=True):
        assert (old.st_mode, old.st_uid, old.st_mtime_ns) == (
            new.st_mode,
            new.st_uid,
            new.st_mtime_ns,
        )
    assert os.listxattr(target) == []


DRIVER = textwrap.dedent(
    """
    import json, os, sys
    from epistemic_agent.execute.sandbox.platform import Platform
    from epistemic_agent.effects.classify import Effect
    from epistemic_agent.effects.cache import EffectCache
    from epistemic_agent.session.session import Session, Settings
    EffectCache.classify = lambda self, command: Effect("unknown", dynamic=True)  # blind gate
    ws, spec, act, command = sys.argv[1:5]
    platform = Platform(*json.loads(spec))
    with Session(ws, Settings(platform=platform, timeout=20)) as session:
        result = session.bash(command.replace("SESSION", str(os.getpid())), act,
                              "try what a command may do to the process recording it")
    print(json.dumps(result.to_json()))
    """
)

SIGNALS = {
    "stop": "kill -STOP SESSION",
    "kill": "kill -KILL SESSION",
    "term": "kill -TERM SESSION",
    "python kill": "python3 -c 'import os; os.kill(SESSION, 9)'",
    "runner": "kill -0 RUNNER",
    "anyone": 'found=""; for p in /proc/[0-9]*; do q=${p#/proc/}; [ "$q" = "$$" ] && continue; '
    '[ "$(cat /proc/$q/comm 2>/dev/null)" = bwrap ] && continue; '  # bwrap's own init
    '[ "$q" = 1 ] && continue; '  # the act's own PID namespace's first process: its warden
    'kill -0 "$q" 2>/dev/null && found="$found $q"; done; [ -n "$found" ] && echo "$found" '
    "&& exit 0; exit 1",
    "ptrace": 'python3 -c "import ctypes,sys; l=ctypes.CDLL(None, use_errno=True); '
    'sys.exit(0 if l.ptrace(16, SESSION, 0, 0) == 0 else 1)"',
    "mem": "python3 -c \"open('/proc/SESSION/mem', 'r+b')\"",
    "environ": "cat /proc/SESSION/environ",
}


@pytest.mark.parametrize("mechanism", STRONG)
@pytest.mark.parametrize("act", ["change-state", "collect-info"])
@pytest.mark.parametrize("attack", SIGNALS, ids=list(SIGNALS))
def test_no_act_can_signal_or_trace_the_session(
    make_box: object, mechanism: str, act: str, attack: str
) -> None:
    box = make_box(mechanism)  # type: ignore[operator]
    p = box.platform
    spec = json.dumps(
        [p.landlock_abi, p.landlock_error, p.namespaces, p.namespaces_error, p.bwrap, p.bwrap_error]
    )
    command = SIGNALS[attack].replace("RUNNER", str(os.getpid()))
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(box.ws), spec, act, command],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr  # the session lived to record the outcome
    result = json.loads(done.stdout)
    assert result["status"] == "ran"
    assert result["returncode"] != 0, result  # refused, every one
    assert "TMPDIR" not in result["stdout"]  # the session's environment stays unread


@pytest.mark.parametrize("mechanism", STRONG)
def test_no_act_can_reach_the_machines_sysv_ipc(make_box: object, mechanism: str) -> None:
    """Shared memory made by another process on the machine is out of an act's sight: an
    act cannot list, read or remove it (its IPC namespace is its own)."""
    box = make_box(mechanism)  # type: ignore[operator]
    made = subprocess.run(["ipcmk", "-M", "4096"], capture_output=True, text=True, check=True)
    shmid = made.stdout.split()[-1]
    try:
        with box.session() as session:
            listed = session.bash("ipcs -m", "collect-info", LOOK)
            removed = session.bash(f"ipcrm -m {shmid}", "cleanup", CHANGE)
        assert listed.ok and f" {shmid} " not in f" {listed.stdout} ", listed.stdout
        assert not removed.ok, removed
        still = subprocess.run(["ipcs", "-m", "-i", shmid], capture_output=True, check=False)
        assert still.returncode == 0, "the act removed the machine's shared memory"
    finally:
        subprocess.run(["ipcrm", "-m", shmid], capture_output=True, check=False)


def plant_secrets(box: Box, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An operator's home: an SSH key, cloud credentials, a listening SSH agent socket."""
    (box.home / ".ssh").mkdir()
    (box.home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY\n")
    (box.home / ".aws").mkdir()
    (box.home / ".aws" / "credentials").write_text("aws_secret_access_key = AKIAX\n")
    (box.home / ".netrc").write_text("machine example.org password hunter2\n")
    agent = box.short / "ssh-agent" / "agent.1"  # a socket's path must fit in 107 bytes
    agent.parent.mkdir()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(agent))
    listener.listen(1)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
    monkeypatch.setenv("SSH_AGENT_PID", "4242")
    return agent


PEEK = (
    "cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc 2>/dev/null; "
    "echo sock=${SSH_AUTH_SOCK:-unset} pid=${SSH_AGENT_PID:-unset}; "
    'python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); '
    "print('connected')\" SOCKET_PATH 2>/dev/null || echo refused"
)


@pytest.mark.parametrize("mechanism", [*STRONG, "landlock", "none"])
@pytest.mark.parametrize("act", ["collect-info", "setup"])
def test_no_act_can_see_the_operators_keys(
    make_box: object, monkeypatch: pytest.MonkeyPatch, mechanism: str, act: str
) -> None:
    box = make_box(mechanism)  # type: ignore[operator]
    agent = plant_secrets(box, monkeypatch)
    reason = LOOK if act == "collect-info" else CHANGE
    with box.session() as session:
        seen = session.bash(PEEK.replace("SOCKET_PATH", str(agent)), act, reason)
        header = session.state.header["confinement"]
    assert "sock=unset pid=unset" in seen.stdout, seen.stdout  # on every platform
    if mechanism in STRONG:
        assert "secrets-hidden" in header["held"]
        for secret in ("PRIVATE-KEY", "AKIAX", "hunter2", "connected"):
            assert secret not in seen.stdout, (secret, seen.stdout)
        assert str(box.home / ".ssh") in header["hidden"]
    else:
        assert "secrets-hidden" in header["not_held"]
        assert "PRIVATE-KEY" in seen.stdout  # the check above can fail: here it would


def test_a_policy_names_what_is_hidden(make_box: object, monkeypatch: pytest.MonkeyPatch) -> None:
    box = make_box("landlock+namespaces")  # type: ignore[operator]
    plant_secrets(box, monkeypatch)
    (box.home / "vault").mkdir()
    (box.home / "vault" / "token").write_text("VAULT-TOKEN\n")
    (box.ws / "epistemic.toml").write_text(POLICY + '[sandbox]\nhidden = ["~/vault", "/"]\n')
    with box.session() as session:
        seen = session.bash("cat ~/vault/token ~/.ssh/id_ed25519", "collect-info", LOOK)
        header = session.state.header["confinement"]
    assert "VAULT-TOKEN" not in seen.stdout and "PRIVATE-KEY" in seen.stdout  # it replaces
    assert header["not_hidden"] == {"/": "it holds the workspace or the scratch folder"}


# -- honest about weaker platforms -------------------------------------------------------------


@pytest.mark.parametrize("mechanism", ["landlock", "none"])
def test_weaker_platforms_say_what_does_not_hold(make_box: object, mechanism: str) -> None:
    box = make_box(mechanism)  # type: ignore[operator]
    with box.session() as session:
        session.bash("true", "collect-info", LOOK)
        header = session.state.header["confinement"]
    assert header["mechanism"] == mechanism
    assert "record-protected" in header["not_held"]
    assert set(header["held"]) | set(header["not_held"]) == set(GUARANTEES)
    if mechanism == "none":
        assert header["held"] == []
    else:
        assert "observations-write-scratch-only" in header["held"]
        assert "mutations-confined" in header["held"]
    report = (box.ws / "RATIONALE.md").read_text()
    assert "⚠ Confinement" in report and "record-protected" in report


def test_landlock_alone_keeps_observations_to_the_scratch_dir(make_box: object) -> None:
    box = make_box("landlock")  # type: ignore[operator]
    with box.session() as session:
        result = session.bash(
            f"printf x > $TMPDIR/s; printf x > {box.systmp}/outside; printf x > src/new.py",
            "collect-info",
            LOOK,
        )
        scratch = session.scratch_dir()
    assert not (box.systmp / "outside").exists() and not (box.ws / "src" / "new.py").exists()
    assert (scratch / "s").read_text() == "x"
    assert result.flags == ("blocked-write",)


def test_a_policy_can_require_confinement(make_box: object) -> None:
    from epistemic_agent.policy.rules import PolicyError

    box = make_box("landlock")  # type: ignore[operator]
    (box.ws / "epistemic.toml").write_text(POLICY + "[sandbox]\nrequire_confinement = true\n")
    with pytest.raises(PolicyError, match="record-protected") as caught:
        box.session().open()
    assert "epistemic doctor" in str(caught.value)
    assert not box.record.exists()  # refused before anything was written
    (box.ws / "epistemic.toml").write_text(
        POLICY + '[sandbox]\nrequire_confinement = ["mutations-confined"]\n'
    )
    with box.session() as session:  # what Landlock alone holds is enough for this policy
        assert session.bash("true", "collect-info", LOOK).ok


# -- file tools, and the tool's own installation ----------------------------------------------


@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "pid-namespace"])
def test_file_tools_run_confined(make_box: object, mechanism: str) -> None:
    box = make_box(mechanism)  # type: ignore[operator]
    with box.session() as session:
        journal = box.record / "journal.jsonl"

        def sneaky() -> None:
            with open(journal, "ab") as handle:
                handle.write(MARK)

        with pytest.raises(OSError):
            session.confinement.run("change-state", sneaky)
        with pytest.raises(OSError):
            session.confinement.run("collect-info", lambda: (box.record / "head.json").read_bytes())
        assert session.write_file("src/new.py", "x = 1\n", CHANGE).ok
    assert MARK not in journal.read_bytes()
    assert (box.ws / "src" / "new.py").read_text() == "x = 1\n"


def test_the_tool_is_protected_inside_the_workspace(
    make_box: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = make_box("landlock+namespaces")  # type: ignore[operator]
    venv = box.ws / ".venv" / "lib" / "site-packages"
    venv.mkdir(parents=True)
    monkeypatch.setattr(confine, "tool_paths", lambda: (str(box.ws / ".venv"),))
    with box.session() as session:
        command = "d=.ve; printf x > $d''nv/lib/site-packages/evil.pth"
        result = session.bash(command, "setup", CHANGE)
        held = session.state.header["confinement"]["held"]
    assert not result.ok and not (venv / "evil.pth").exists()
    assert "tool-protected" in held


@pytest.mark.parametrize("mechanism", STRONG)
def test_the_programs_the_session_runs_are_protected_inside_a_grant(
    make_box: object, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mechanism: str
) -> None:
    """A setup act granted the folder that holds the ssh-keygen the session checks approvals
    with cannot replace it (else it could forge every signature check that follows)."""
    box = make_box(mechanism)  # type: ignore[operator]
    tools = tmp_path / "tools"
    tools.mkdir()
    keygen = tools / "ssh-keygen"
    keygen.write_text('#!/bin/sh\nexec /usr/bin/ssh-keygen "$@"\n')
    keygen.chmod(0o755)
    monkeypatch.setenv("EPISTEMIC_SSH_KEYGEN", str(keygen))
    (box.ws / "epistemic.toml").write_text(POLICY + f'[sandbox]\nwritable = ["{tools}"]\n')
    with box.session() as session:
        command = f"printf 'exit 0' > {tools}/ssh-key''gen; printf x > {tools}/other"
        result = session.bash(command, "setup", CHANGE)
    assert keygen.read_text().startswith("#!/bin/sh\nexec /usr/bin/ssh-keygen"), result
    assert (tools / "other").read_text() == "x"  # the grant itself holds


# -- an unprivileged session -------------------------------------------------------------------

UNPRIVILEGED = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    from epistemic_agent.execute.sandbox.confinement import Confinement
    from epistemic_agent.execute.sandbox.platform import detect
    from epistemic_agent.execute.shell import bounded_text, run_shell
    ws, scratch, parent = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    record = ws / ".epistemic"
    platform = detect()
    guarded = (ws / "RATIONALE.md",)
    confinement = Confinement(platform, ws, scratch, record, guarded)
    commands = {
        "change-state": "printf x > made; r=RATIONALE; printf x >> $r.md; ls -A .epistemic; "
        "f=.epis; printf x >> $f''temic/journal.jsonl; printf x > ../outside; exit 0",
        "collect-info": "printf x > made2; printf x > $TMPDIR/s; kill -0 " + parent,
    }
    results = {}
    for act, command in commands.items():
        env = {**os.environ, "TMPDIR": str(scratch)}
        done = run_shell(command, ws, 10, scratch, launch=confinement.launch(act), env=env)
        out, err = bounded_text(done.stdout, 2000), bounded_text(done.stderr, 2000)
        results[act] = [done.returncode, out, err]
    print(json.dumps({"platform": platform.to_json(), "not_held": confinement.not_held(),
                      "uid": os.geteuid(), "results": results}))
    """
)
NOBODY = 65534


def test_an_unprivileged_session_is_confined_through_a_user_namespace(tmp_path: Path) -> None:
    """As a user without privileges (nobody), through the Debian interpreter nobody can run:
    the process enters a user namespace of its own and gets the same guarantees."""
    if os.geteuid() != 0:
        pytest.skip("switching to another user needs root")
    python = "/usr/bin/python3"
    assert os.access(python, os.X_OK), "scripts/setup --test installs Debian's python3"
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="epistemic-nobody-"))
    try:
        base.chmod(0o755)
        source = Path(confine.__file__).parents[2]  # the epistemic_agent package
        shutil.copytree(
            source,
            base / "lib" / "epistemic_agent",
            ignore=shutil.ignore_patterns("*.pyc", "benchmark", "demo"),
        )
        ws, scratch = base / "ws", base / "scratch"
        for folder in (ws / ".epistemic", scratch):
            folder.mkdir(parents=True)
        for name in (
            "RATIONALE.md",
            ".epistemic/journal.jsonl",
        ):
            (ws / name).write_text("the record\n")
        for path in (ws, *ws.rglob("*"), scratch, base):
            os.chown(path, NOBODY, NOBODY)
        done = subprocess.run(
            [
                "setpriv",
                f"--reuid={NOBODY}",
                f"--regid={NOBODY}",
                "--clear-groups",
                "--",
                python,
                "-c",
                UNPRIVILEGED,
                str(ws),
                str(scratch),
                str(os.getpid()),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(base / "lib"), "HOME": str(base)},
        )
        assert done.returncode == 0, done.stderr
        found = json.loads(done.stdout)
        assert found["uid"] == NOBODY
        assert found["platform"]["mechanism"] == "landlock+namespaces", found["platform"]
        assert found["platform"]["namespaces"] == "user"
        assert found["not_held"] == {}
        change, look = found["results"]["change-state"], found["results"]["collect-info"]
        assert (ws / "made").read_text() == "x"
        assert change[1] == ""  # the record folder is empty in the act's view
        for name in ("RATIONALE.md", ".epistemic/journal.jsonl"):
            assert (ws / name).read_text() == "the record\n", change
        assert not (base / "outside").exists()
        assert not (ws / "made2").exists() and (scratch / "s").read_text() == "x"
        assert look[0] != 0, look  # the signal to a process outside was refused
    finally:
        shutil.rmtree(base, ignore_errors=True)


# -- two calls at once in one workspace --------------------------------------------------------


@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "none"])
def test_concurrent_calls_are_not_blamed_for_each_others_writes(
    make_box: object, mechanism: str
) -> None:
    import threading

    box = make_box(mechanism)  # type: ignore[operator]
    box.session().open().close()  # the session exists: both below continue it
    results: dict[str, object] = {}

    def other() -> None:  # while the first session's `ls` runs
        eventually(lambda: running_below(os.getpid(), "sleep 1.5; ls"), "the first call")
        with box.session() as session:
            results["other"] = session.bash("printf x > other.txt", "change-state", CHANGE)

    thread = threading.Thread(target=other)
    with box.session() as session:
        thread.start()
        looked = session.bash("sleep 1.5; ls", "collect-info", LOOK)
        thread.join()
        (box.ws / "mine.txt").write_text("made by the session earlier\\n")
        reverted = session.bash("sleep 1.5; rm -f mine.txt", "revert", CHANGE)
    assert (box.ws / "other.txt").exists()
    assert looked.flags == ("concurrent",), looked
    journal = [json.loads(x) for x in (box.record / "journal.jsonl").read_text().splitlines()]
    flags = next(r for r in journal if r["kind"] == "outcome" and r["seq"] == looked.seq)["flags"]
    other_seq = results["other"].seq  # type: ignore[attr-defined]
    assert f"call(s) {other_seq} ran" in flags[0]["message"]
    assert "undeclared-write" not in reverted.flags


def test_an_observation_that_cannot_write_blames_no_one_it_knows(make_box: object) -> None:
    """A write by a process outside every session (a human's editor) during an observation
    the kernel kept from writing: it cannot have been the observation."""
    box = make_box("landlock+namespaces")  # type: ignore[operator]
    with box.session() as session:
        editor = subprocess.Popen(["sh", "-c", "sleep 0.4; echo typed > edited.txt"], cwd=box.ws)
        looked = session.bash("sleep 1.5; ls", "collect-info", LOOK)
        editor.wait()
    assert looked.flags == ("concurrent",), looked
    journal = [json.loads(x) for x in (box.record / "journal.jsonl").read_text().splitlines()]
    done = next(r for r in journal if r["kind"] == "outcome" and r["seq"] == looked.seq)
    assert "kept from writing" in done["flags"][0]["message"]


def test_who_may_approve_and_the_clients_settings_are_out_of_reach(make_box: object) -> None:
    """The allowed_signers file, and an agent client's own settings (what would give it a
    shell back), are as protected as the policy."""
    box = make_box("landlock+namespaces")  # type: ignore[operator]
    signers = "alice@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIProtectedKey\n"
    (box.ws / "allowed_signers").write_text(signers)
    (box.ws / "epistemic.toml").write_text(
        POLICY + '[approval]\nallowed_signers = "allowed_signers"\n'
    )
    settings = box.ws / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"permissions": {"deny": ["Bash"]}}\n')
    attacks = [
        "a=allowed; echo 'mallory ssh-ed25519 AAAA' >> ${a}_signers",
        "c=.cla; printf '{}' > ${c}ude/settings.json",
        "c=.cla; printf '{}' > ${c}ude/settings.local.json",
        "c=.cla; rm -rf ${c}ude",
    ]
    with box.session() as session:
        for command in attacks:
            result = session.bash(command, "change-state", CHANGE)
            assert result.returncode != 0, (command, result)
    assert (box.ws / "allowed_signers").read_text() == signers
    assert settings.read_text() == '{"permissions": {"deny": ["Bash"]}}\n'
    assert not (box.ws / ".claude" / "settings.local.json").exists()


def test_exec_and_doctor_say_what_does_not_hold(
    make_box: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from epistemic_agent.cli import app as cli
    from epistemic_agent.execute.sandbox import platform as confine_platform
    from epistemic_agent.session import opening as session_module

    box = make_box("landlock")  # type: ignore[operator]
    weak = box.platform
    monkeypatch.setattr(session_module, "detect", lambda probe_bwrap=False: weak)
    monkeypatch.setattr(confine_platform, "detect", lambda probe_bwrap=False: weak)
    code = cli.main(
        ["exec", "-C", str(box.ws), "--type", "collect-info", "--reason", LOOK, "--", "true"]
    )
    err = capsys.readouterr().err
    assert code == 0
    assert "epistemic: confinement landlock:" in err and "record-protected" in err
    code = cli.main(["doctor", "-C", str(box.ws)])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("confinement of every act: landlock\n")
    assert "  NOT HELD  record-protected: tried here, a change-state act could append to" in out
    assert "  held      mutations-confined:" in out


def test_what_a_killed_session_captured_is_kept_scrubbed_and_its_leftovers_removed(
    make_box: object,
) -> None:
    box = make_box("landlock+namespaces")  # type: ignore[operator]
    secret = "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    driver = textwrap.dedent(
        f"""
        import sys
        from epistemic_agent.session.session import Session
        session = Session(sys.argv[1]).open()
        session.bash("echo '{secret}'; sleep 60", "change-state", "make the change here now")
        """
    )
    process = subprocess.Popen([sys.executable, "-c", driver, str(box.ws)])
    tmp = box.record / "tmp"
    deadline = time.monotonic() + 30
    while not any(p.stat().st_size for p in tmp.glob("call-*.out")) if tmp.exists() else True:
        assert time.monotonic() < deadline, "the call never wrote its output"
        time.sleep(0.05)
    (tmp / "call-999999-deadbeef.out").write_text("a stray capture file\n")  # no such process
    process.kill()
    process.wait()
    with box.session() as session:
        session.bash("true", "collect-info", LOOK)
    journal = [json.loads(x) for x in (box.record / "journal.jsonl").read_text().splitlines()]
    recovered = next(r for r in journal if r.get("recovered"))
    blob = (box.record / "evidence").rglob(recovered["evidence"]["stdout"]["sha256"])
    kept = next(blob).read_text()
    assert "wJalrXUtnFEMI" not in kept and "[REDACTED" in kept
    assert not list(tmp.glob("call-999999-*"))
    for path in box.record.rglob("*"):
        if path.is_file():
            assert b"wJalrXUtnFEMI" not in path.read_bytes(), path


def test_an_alert_hook_the_agent_rewrote_runs_confined(make_box: object, tmp_path: Path) -> None:
    """A hook whose program lives in the workspace: the agent may rewrite the program, but
    what it then runs is confined like an observation, and nothing it starts outlives it."""
    box = make_box("landlock+namespaces")  # type: ignore[operator]
    (box.ws / "notify.sh").write_text("#!/bin/sh\ncat > /dev/null\n")
    (box.ws / "notify.sh").chmod(0o755)
    outside = tmp_path / "escaped"
    policy = tmp_path / "team.toml"  # outside the workspace, named by the operator
    policy.write_text(
        f'default = "allow"\n[[hook]]\non = ["rejection"]\ncommand = "{box.ws}/notify.sh"\n'
    )
    from epistemic_agent.policy.file import load_policy

    evil = (
        "#!/bin/sh\n"
        f"id > {outside}; echo x >> {box.record}/journal.jsonl;"
        f" setsid sh -c 'sleep 3; id > {outside}.later' & echo started\n"
    )
    with Session(box.ws, Settings(platform=box.platform), policy=load_policy(policy)) as session:
        written = session.write_file("notify.sh", evil, CHANGE)
        assert written.ok
        rejected = session.bash("true", "collect-info", "short")  # a rejection: the hook fires
        assert rejected.status == "rejected"
    time.sleep(3.5)
    assert not outside.exists() and not Path(f"{outside}.later").exists()
    assert verify_journal(box.record / "journal.jsonl", box.record / "head.json").status == "intact"
    alert = [json.loads(x) for x in (box.record / "journal.jsonl").read_text().splitlines()][-1]
    assert alert["kind"] == "alert" and alert["hooks"][0]["via"] == "command"


def test_hard_links_made_before_no_longer_reach_the_record(make_box: object) -> None:
    """Links to the journal and its anchor made while something could reach the record (an
    unconfined process): verify names them, and a session continuing it moves its files to
    names of their own before appending, so writes through the old links change nothing."""
    box = make_box("landlock+namespaces")  # type: ignore[operator]
    with box.session() as session:
        session.bash("echo seeded", "collect-info", LOOK)
    journal, head = box.record / "journal.jsonl", box.record / "head.json"
    os.link(journal, box.ws / "old-journal")
    os.link(head, box.ws / "old-head")
    checked = cli_verify(box)
    assert checked["status"] == "tampered" and "record-linked" in checked["checks"], checked
    with box.session() as session:
        session.bash("true", "collect-info", LOOK)
    with open(box.ws / "old-journal", "ab") as handle:
        handle.write(b'{"forged": true}\n')
    assert journal.stat().st_nlink == 1 and head.stat().st_nlink == 1
    assert b"forged" not in journal.read_bytes()
    relinked = [json.loads(x) for x in journal.read_text().splitlines() if '"relinked"' in x]
    assert relinked and set(relinked[0]["files"]) == {"journal.jsonl", "head.json"}
    assert cli_verify(box)["status"] == "intact"


def cli_verify(box: Box) -> dict[str, Any]:
    done = subprocess.run(
        [EPISTEMIC, "verify", str(box.ws), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    found: dict[str, Any] = json.loads(done.stdout)
    found["checks"] = [problem["check"] for problem in found.get("problems", [])]
    return found


# -- a session killed with its act running -----------------------------------------------------

KILLED_DRIVER = textwrap.dedent(
    """
    import json, sys
    from epistemic_agent.execute.sandbox.platform import Platform
    from epistemic_agent.session.session import Session, Settings
    ws, spec, command = sys.argv[1:4]
    with Session(ws, Settings(platform=Platform(*json.loads(spec)))) as session:
        session.bash(command, "change-state", "start the build and its helpers, then wait")
    """
)
#: A command, a background job and a process that left the act's group: each writes a file
#: once the session has been killed.
SURVIVORS = (
    "(sleep 1; touch late-job) & setsid -f sh -c 'sleep 1; touch late-escaped'; "
    "touch started; sleep 1; touch late-command"
)


@pytest.mark.parametrize("mechanism", [*STRONG, "landlock", "none"])
def test_an_act_dies_with_its_session(make_box: object, mechanism: str) -> None:
    """Where namespaces hold, the act's whole tree dies with a session killed outright (its PID
    namespace goes with its warden, or bwrap's with bwrap); without them, its process group
    does, and only what left the group runs on (docs/security.md)."""
    box = make_box(mechanism)  # type: ignore[operator]
    p = box.platform
    spec = json.dumps(
        [p.landlock_abi, p.landlock_error, p.namespaces, p.namespaces_error, p.bwrap, p.bwrap_error]
    )
    driver = subprocess.Popen([sys.executable, "-c", KILLED_DRIVER, str(box.ws), spec, SURVIVORS])
    deadline = time.monotonic() + 30
    while not (box.ws / "started").exists():
        assert driver.poll() is None and time.monotonic() < deadline, "the act never started"
        time.sleep(0.01)
    driver.kill()
    driver.wait()
    time.sleep(2)  # what survived has written its file by now
    late = sorted(path.name for path in box.ws.glob("late-*"))
    assert late == ([] if mechanism in STRONG else ["late-escaped"]), late


# -- the report re-rendered while a command runs --------------------------------------------


@pytest.mark.parametrize("mechanism", STRONG)
def test_the_report_a_command_outlasts_a_render_of_stays_read_only(
    make_box: object, mechanism: str
) -> None:
    """RATIONALE.md is re-rendered half a second into a command (to show it as running): the
    report swapped in is one the command's view already holds read-only, so writing, moving
    or replacing it after that render fails as before it."""
    box = make_box(mechanism)  # type: ignore[operator]
    with box.session() as session:
        session.bash("true", "collect-info", LOOK)
        attempts = "; ".join(operations("RATIONALE.md")[name] for name in ("append", "python"))
        command = (
            "sleep 1.5; grep -q 'running: no outcome yet' RATIONALE.md && echo seen; "
            f"{attempts}; mv -f RATIONALE.md moved; exit 0"
        )
        result = session.bash(command, "change-state", CHANGE)
        assert result.stdout.startswith("seen\n"), result  # it saw the render
    report = (box.ws / "RATIONALE.md").read_bytes()
    assert MARK not in report and not (box.ws / "moved").exists()
    assert_verifies(box)


@pytest.mark.parametrize("mechanism", [*STRONG, "landlock"])
@pytest.mark.parametrize("act", ["collect-info", "test-hypothesis", "verify"])
def test_a_report_rendered_while_a_read_only_act_runs_is_beyond_its_reach(
    make_box: object, mechanism: str, act: str
) -> None:
    """A read-only act's call is not rendered before it runs: the render half a second into it
    swaps in a report file its view never bound. Its view lets it write nothing in the
    workspace, so that file is as far out of its reach as the one before: appending, writing
    through an open descriptor, moving and removing it all fail."""
    box = make_box(mechanism)  # type: ignore[operator]
    with box.session() as session:
        session.bash("true", "collect-info", LOOK)
        attempts = "; ".join(
            operations("RATIONALE.md")[name] for name in ("append", "python", "overwrite")
        )
        command = (
            "sleep 1.5; grep -q 'running: no outcome yet' RATIONALE.md && echo seen; "
            f"{attempts}; mv -f RATIONALE.md moved; rm -f RATIONALE.md; exit 0"
        )
        reason = HYPOTHESIS if act == "test-hypothesis" else LOOK
        result = session.bash(command, act, reason)
        assert result.stdout.startswith("seen\n"), result  # the render happened as it ran
    report = (box.ws / "RATIONALE.md").read_bytes()
    assert MARK not in report and not (box.ws / "moved").exists()
    assert_verifies(box)
