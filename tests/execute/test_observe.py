"""Change observation: both methods must report the same changes for the same command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from epistemic_agent.execute.observe import fanotify as observe_fanotify
from epistemic_agent.execute.observe import fanotify_kernel
from epistemic_agent.execute.observe.base import (
    DEFAULT_IGNORE,
    Changes,
    Observer,
    SnapshotObserver,
)
from epistemic_agent.execute.observe.fanotify import FanotifyObserver
from epistemic_agent.execute.observe.registry import OBSERVERS, best_observer, observer_class

PY = sys.executable


def _fanotify_missing() -> str | None:
    if os.geteuid() != 0:
        return "fanotify file-system marks need root (CAP_SYS_ADMIN); not running as root"
    if not fanotify_kernel.available(Path(tempfile.gettempdir())):
        return "fanotify refused (no CAP_SYS_ADMIN, kernel < 5.17, or no file handles on this fs)"
    return None


MISSING = _fanotify_missing()
needs_fanotify = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
METHODS = ["snapshot", pytest.param("fanotify", marks=needs_fanotify)]


def observer(method: str, ws: Path, ignore: tuple[str, ...] = DEFAULT_IGNORE) -> Observer:
    kind = FanotifyObserver if method == "fanotify" else SnapshotObserver
    return kind(ws, ignore)


def run(watch: Observer, ws: Path, command: str) -> Changes:
    watch.start()
    subprocess.run(["bash", "-c", command], cwd=ws, check=True, stdin=subprocess.DEVNULL)
    return watch.finish()


def triple(changes: Changes) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    return changes.created, changes.modified, changes.deleted


def populate(ws: Path) -> Path:
    """a.txt b.txt z, d/{g, sub/f}, empty/, .git/HEAD — then let the clock tick past them."""
    (ws / "d" / "sub").mkdir(parents=True)
    (ws / "d" / "sub" / "f").write_text("f\n")
    (ws / "d" / "g").write_text("g\n")
    for name in ("a.txt", "b.txt", "z"):
        (ws / name).write_text(name + "\n")
    (ws / "empty").mkdir()
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    time.sleep(0.02)  # files written within the current clock tick would look just-modified
    return ws


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return populate(tmp_path / "ws")


D_TREE = ("d", "d/g", "d/sub", "d/sub/f")


def under(prefix: str, tree: tuple[str, ...] = D_TREE) -> tuple[str, ...]:
    return tuple(sorted(prefix + path[1:] for path in tree))


SCENARIOS = {
    "create": ("echo hi > new.txt", ["new.txt"], [], []),
    "append": ("echo more >> a.txt", [], ["a.txt"], []),
    "same size rewrite": ("printf 'A.txt\\n' > a.txt", [], ["a.txt"], []),
    "chmod": ("chmod +x a.txt", [], ["a.txt"], []),
    "touch existing": ("touch a.txt", [], ["a.txt"], []),
    "delete": ("rm a.txt", [], [], ["a.txt"]),
    "rename": ("mv a.txt c.txt", ["c.txt"], [], ["a.txt"]),
    "rename over existing": ("mv a.txt b.txt", [], ["b.txt"], ["a.txt"]),
    "sed -i": ("sed -i s/a/A/ a.txt", [], ["a.txt"], []),
    "rename then unlink": (
        f"{PY} -c \"import os; os.rename('a.txt', 'c'); os.unlink('z')\"",
        ["c"],
        [],
        ["a.txt", "z"],
    ),
    "rename then link": (
        f"{PY} -c \"import os; os.rename('a.txt', 'c'); os.link('b.txt', 'h')\"",
        ["c", "h"],
        [],
        ["a.txt"],
    ),
    "rename then chmod dir": (
        f"{PY} -c \"import os; os.rename('a.txt', 'c'); os.chmod('d', 0o700)\"",
        ["c"],
        ["d"],
        ["a.txt"],
    ),
    "rename over, then create": (
        f"{PY} -c \"import os; os.rename('a.txt', 'b.txt'); open('n', 'w').close()\"",
        ["n"],
        ["b.txt"],
        ["a.txt"],
    ),
    "mkdir": ("mkdir newdir", ["newdir"], [], []),
    "rmdir": ("rmdir empty", [], [], ["empty"]),
    "chmod dir": ("chmod 700 d", [], ["d"], []),
    "nested new": ("mkdir -p x/y && touch x/y/z", ["x", "x/y", "x/y/z"], [], []),
    "rm -rf tree": ("rm -rf d", [], [], list(D_TREE)),
    "move dir": ("mv d e", list(under("e")), [], list(D_TREE)),
    "move subdir": ("mv d/sub d/sub2", ["d/sub2", "d/sub2/f"], [], ["d/sub", "d/sub/f"]),
    "move dir then change it": (
        "mv d e && touch e/new && rm e/g",
        ["e", "e/new", "e/sub", "e/sub/f"],
        [],
        list(D_TREE),
    ),
    "change dir then move it": (
        "touch d/new && mv d e",
        [*under("e"), "e/new"],
        [],
        list(D_TREE),
    ),
    "move dir over empty dir": (
        f"{PY} -c \"import os; os.rename('d', 'empty')\"",
        ["empty/g", "empty/sub", "empty/sub/f"],
        ["empty"],
        list(D_TREE),
    ),
    "replace dir by its subdir": (
        "mv d/sub . && rm -rf d && mv sub d",
        ["d/f"],
        ["d"],
        ["d/g", "d/sub", "d/sub/f"],
    ),
    "move dir into new dirs": (
        "mkdir -p n1/n2 && mv d n1/n2/ && touch n1/n2/d/x",
        ["n1", "n1/n2", *under("n1/n2/d"), "n1/n2/d/x"],
        [],
        list(D_TREE),
    ),
    "copy tree": ("cp -r d d2 && rm -rf d2/sub", ["d2", "d2/g"], [], []),
    "create then delete": (
        "touch t && rm t && mkdir q && touch q/r && rm -rf q",
        [],
        [],
        [],
    ),
    "delete then create": ("rm a.txt && echo new > a.txt", [], ["a.txt"], []),
    "moved away and back": ("mv a.txt tmp && mv tmp a.txt", [], [], []),
    "symlink": ("ln -s a.txt link && ln -s nowhere dangling", ["dangling", "link"], [], []),
    "hard link": ("ln a.txt hard", ["hard"], [], []),
    "odd names": ("touch 'sp ace' $'new\\nline' é", ["new\nline", "sp ace", "é"], [], []),
    "opened for writing, unchanged": (
        f"{PY} -c \"open('a.txt', 'r+').close()\"",
        [],
        [],
        [],
    ),
    "written through mmap only": (
        f"{PY} -c \"import mmap; f = open('a.txt', 'r+b'); m = mmap.mmap(f.fileno(), 0); "
        "m[0:1] = b'A'; m.close(); f.close()\"",
        [],
        ["a.txt"],
        [],
    ),
    "ignored dirs": (
        "mkdir -p __pycache__ d/__pycache__ .epistemic/tmp && touch __pycache__/m.pyc "
        "d/__pycache__/n.pyc .epistemic/tmp/out .git/index && rm .git/HEAD && "
        "mkdir .pytest_cache && mv .pytest_cache .mypy_cache",
        [],
        [],
        [],
    ),
    "read only": (
        "cat a.txt d/g > /dev/null && ls -R > /dev/null && git status || true",
        [],
        [],
        [],
    ),
}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_scenario(method: str, scenario: str, ws: Path) -> None:
    command, created, modified, deleted = SCENARIOS[scenario]
    changes = run(observer(method, ws), ws, command)
    assert triple(changes) == tuple(tuple(sorted(paths)) for paths in (created, modified, deleted))
    assert changes.method == method and changes.complete


@pytest.mark.parametrize("method", METHODS)
def test_writes_outside_are_not_reported(method: str, tmp_path: Path) -> None:
    ws = populate(tmp_path / "ws")
    (tmp_path / "ws-other").mkdir()  # shares the workspace's path as a prefix
    command = "touch ../ws-other/x ../wsx && mkdir ../ws2 && rm ../ws-other/x && touch /tmp/obs-$$"
    changes = run(observer(method, ws), ws, command + " && rm /tmp/obs-$$")
    assert changes.empty


@pytest.mark.parametrize("method", METHODS)
def test_workspace_directly_under_tmp(method: str) -> None:
    ws = Path(tempfile.mkdtemp(prefix="obs-ws-", dir="/tmp"))
    sibling = Path(tempfile.mkdtemp(prefix=ws.name, dir="/tmp"))
    try:
        populate(ws / "inner")
        command = f"touch inner/new {sibling}/x /tmp/{ws.name}-y && rm /tmp/{ws.name}-y"
        changes = run(observer(method, ws), ws, command)
        assert triple(changes) == (("inner/new",), (), ())
    finally:
        shutil.rmtree(ws)
        shutil.rmtree(sibling)


@pytest.mark.parametrize("method", METHODS)
def test_two_observers_at_once_see_only_their_own(method: str, tmp_path: Path) -> None:
    one, two = populate(tmp_path / "one"), populate(tmp_path / "two")
    first, second = observer(method, one), observer(method, two)
    first.start()
    second.start()
    script = "for i in $(seq 20); do echo $i > {0}$i; done; rm a.txt"
    procs = [
        subprocess.Popen(["bash", "-c", script.format(prefix)], cwd=cwd)
        for prefix, cwd in (("left", one), ("right", two))
    ]
    assert [proc.wait() for proc in procs] == [0, 0]
    seen_two, seen_one = second.finish(), first.finish()
    assert seen_one.created == tuple(sorted(f"left{i}" for i in range(1, 21)))
    assert seen_two.created == tuple(sorted(f"right{i}" for i in range(1, 21)))
    assert seen_one.deleted == seen_two.deleted == ("a.txt",)


@pytest.mark.parametrize("method", METHODS)
def test_reused_observer_reports_each_call_alone(method: str, ws: Path) -> None:
    watch = observer(method, ws)
    assert run(watch, ws, "touch one").created == ("one",)
    (ws / "between").write_text("written by a file tool between calls\n")
    (ws / "a.txt").unlink()
    time.sleep(0.02)
    second = run(watch, ws, "touch two")
    assert triple(second) == (("two",), (), ())
    assert run(watch, ws, "true").empty


@pytest.mark.parametrize("method", METHODS)
def test_custom_ignore(method: str, ws: Path) -> None:
    watch = observer(method, ws, ignore=("build",))
    changes = run(watch, ws, "mkdir -p build/x && touch build/x/o && mkdir __pycache__")
    assert triple(changes) == (("__pycache__",), (), ())


@pytest.mark.parametrize("method", METHODS)
def test_many_files_all_read(method: str, ws: Path) -> None:
    command = f"{PY} -c \"[open(f'm{{i}}', 'w').write('x') for i in range(3000)]\""
    changes = run(observer(method, ws), ws, command)
    assert len(changes.created) == 3000 and changes.complete


@pytest.mark.system  # end to end, slow for the default tier
@needs_fanotify
def test_queue_overflow_falls_back_to_ctime_scan(ws: Path) -> None:
    watch = FanotifyObserver(ws, unlimited_queue=False)  # the default queue: 16384 events
    command = (
        f"{PY} -c \"import os; os.mkdir('many'); "
        "[open(f'many/{i}', 'w').close() for i in range(20000)]\" && echo more >> a.txt && rm z"
    )
    changes = run(watch, ws, command)
    assert not changes.complete and changes.method == "fanotify+ctime"
    assert changes.to_json()["complete"] is False
    reported = set(changes.created) | set(changes.modified)
    assert {f"many/{i}" for i in range(20000)} | {"many", "a.txt"} <= reported
    assert "z" not in reported  # deletions after the overflow may be missing, never invented
    assert run(watch, ws, "touch after").created == ("after",)  # the next call is whole


@needs_fanotify
def test_fanotify_falls_back_to_snapshot_when_marking_fails(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(group: int, action: int, workspace: Path) -> None:
        raise PermissionError(1, "fanotify_mark: Operation not permitted")

    monkeypatch.setattr(observe_fanotify, "mark", refuse)
    changes = run(FanotifyObserver(ws), ws, "touch new && rm a.txt")
    assert triple(changes) == (("new",), (), ("a.txt",))
    assert changes.method == "snapshot"


@needs_fanotify
def test_fanotify_ignores_this_process_own_writes(ws: Path) -> None:
    watch = FanotifyObserver(ws)
    watch.start()
    (ws / "from-a-file-tool").write_text("the session's own write, on another thread\n")
    subprocess.run(["touch", "from-command"], cwd=ws, check=True)
    assert watch.finish().created == ("from-command",)


@needs_fanotify
def test_workspace_deleted_by_the_command(tmp_path: Path) -> None:
    ws = populate(tmp_path / "ws")
    changes = run(FanotifyObserver(ws), tmp_path, "rm -rf ws")
    assert changes.method == "fanotify"  # nothing to name: the workspace itself is gone
    populate(ws)
    assert run(FanotifyObserver(ws), ws, "touch x").created == ("x",)


def test_best_observer(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = SnapshotObserver if MISSING else FanotifyObserver
    assert type(best_observer(ws)) is expected
    monkeypatch.setattr(fanotify_kernel, "available", lambda workspace: False)
    assert type(best_observer(ws)) is SnapshotObserver


@pytest.mark.parametrize("method", METHODS)
def test_finish_without_start(method: str, ws: Path) -> None:
    with pytest.raises(RuntimeError):
        observer(method, ws).finish()


def test_changes_json_and_empty() -> None:
    changes = Changes.of({"b", "a"}, {"m"}, set(), "fanotify")
    assert changes.to_json() == {
        "created": ["a", "b"],
        "modified": ["m"],
        "deleted": [],
        "method": "fanotify",
        "complete": True,
    }
    assert not changes.empty and Changes(method="snapshot").empty


def test_default_ignore() -> None:
    assert {".git", ".epistemic", "__pycache__", ".pytest_cache"} <= set(DEFAULT_IGNORE)


def test_import_is_light() -> None:
    code = (
        "import sys; import epistemic_agent.execute.observe.base, "
        "epistemic_agent.execute.observe.fanotify; "
        "print('ctypes' in sys.modules)"
    )
    done = subprocess.run([PY, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.fixture(autouse=True)
def _no_leaked_marks() -> Iterator[None]:
    """Every group back in the pool has no mark left: nothing queues between calls."""
    yield
    probe = Path(tempfile.gettempdir()) / f"obs-probe-{os.getpid()}"
    probe.write_text("written after the test: no group may still be watching\n")
    probe.unlink()
    for groups in fanotify_kernel.idle.values():
        for group in groups:
            assert fanotify_kernel.drain(group) == b""


def test_every_registered_observer_loads_and_an_unknown_name_is_refused(tmp_path: Path) -> None:
    for name in OBSERVERS:
        found = observer_class(name)
        assert isinstance(found(tmp_path), Observer) and found.method == name
    assert not isinstance(object(), Observer)
    with pytest.raises(KeyError, match="known: fanotify, snapshot, ctime"):
        observer_class("inotify")
