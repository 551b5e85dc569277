"""Keeping the benchmark's answers out of the agent's reach, tried as an attacker would: hidden
paths and decoys for every act, the runner's confinement against a scripted session that looks
for an oracle by every path it can build, peek detection by fanotify, and the neutral launcher
that runs the agent's code apart from its judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import EPISTEMIC, epistemic
from epistemic_agent.benchmark import TASKS_DIR, judgelib
from epistemic_agent.benchmark.hiding import git_folders, out_siblings, plan
from epistemic_agent.benchmark.judge import Private, launcher_argv
from epistemic_agent.benchmark.peek import Watch
from epistemic_agent.session.session import Session, Settings
from mechanisms import confined_by

pytestmark = [
    pytest.mark.system,  # the benchmark's hiding, under every mechanism
    pytest.mark.skipif(sys.platform != "linux", reason="confinement is Linux-only"),
]

LOOK = "look at what lies around before deciding anything"
SECRET = "the answer is 42"


@pytest.fixture
def secrets_box(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A workspace, a hidden folder and a covered one (with its decoy), each holding SECRET."""
    ws, hidden, covered, decoy = (tmp_path / name for name in ("ws", "hidden", "covered", "decoy"))
    for folder in (ws, hidden / "sub", covered / "sub", decoy / "sub"):
        folder.mkdir(parents=True)
    (hidden / "sub" / "oracle").write_text(SECRET)
    (covered / "sub" / "oracle").write_text(SECRET)
    (decoy / "sub" / "oracle").write_text("")
    (ws / "link-hidden").symlink_to(hidden / "sub" / "oracle")
    (ws / "link-covered").symlink_to(covered / "sub" / "oracle")
    return ws, hidden, covered, decoy


@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "bwrap"])
@pytest.mark.parametrize("act", ["collect-info", "change-state"])
def test_hidden_and_covered_paths_show_nothing_to_any_act_by_any_path(
    secrets_box: tuple[Path, Path, Path, Path], mechanism: str, act: str
) -> None:
    ws, hidden, covered, decoy = secrets_box
    settings = Settings(
        platform=confined_by(mechanism),
        hidden=(str(hidden),),
        decoys=((str(covered), str(decoy)),),
    )
    paths = [
        f"{hidden}/sub/oracle",
        f"{covered}/sub/oracle",
        "link-hidden",
        "link-covered",
        f"/proc/self/cwd/{os.path.relpath(covered, ws)}/sub/oracle",
        f"/proc/self/root{covered}/sub/oracle",
        f"/proc/$PPID/root{covered}/sub/oracle",
        f"/proc/$PPID/cwd/{os.path.relpath(covered, Path.cwd())}/sub/oracle",
    ]
    command = "; ".join(f'cat "{path}" 2>/dev/null' for path in paths)
    command += f"; ls {covered}/sub; cat {covered}/*/oracle {hidden}/*/* 2>/dev/null; echo done"
    with Session(ws, settings) as session:
        shown = session.bash(command, act, LOOK)
        reads = [session.read_file(name, LOOK) for name in ("link-hidden", "link-covered")]
        direct = session.read_file(str(covered / "sub" / "oracle"), LOOK)
    assert shown.stdout.strip().endswith("done") and SECRET not in shown.stdout
    assert "oracle" in shown.stdout  # the decoy's names are there; its files are empty
    assert all(read.status == "rejected" and SECRET not in read.stdout for read in reads)
    assert direct.status == "rejected" and (covered / "sub" / "oracle").read_text() == SECRET


def test_the_header_names_the_hidden_paths_and_the_decoys(
    secrets_box: tuple[Path, Path, Path, Path],
) -> None:
    ws, hidden, covered, decoy = secrets_box
    settings = Settings(hidden=(str(hidden),), decoys=((str(covered), str(decoy)),))
    with Session(ws, settings) as session:
        session.bash("true", "collect-info", LOOK)
    header = json.loads((ws / ".epistemic" / "journal.jsonl").read_text().splitlines()[0])
    assert str(hidden) in header["confinement"]["hidden"]
    assert header["confinement"]["decoys"] == {str(covered): str(decoy)}


def test_run_refuses_hide_and_decoy_paths_that_are_not_there(tmp_path: Path) -> None:
    for args, message in (
        (["--hide", str(tmp_path / "nope")], "--hide"),
        (["--decoy", str(tmp_path), str(tmp_path / "nope")], "is not a folder"),
        (["--decoy", str(tmp_path)], "usage:"),
    ):
        done = epistemic("run", "--model", "replay:x.json", "-C", str(tmp_path), *args, "task")
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


# -- what the runner hides ---------------------------------------------------------------


def test_the_plan_hides_the_task_folders_their_history_and_the_other_runs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    workspace = out / "csv-counting" / "workspace"
    for folder in (workspace, out / "sqlite-analysis" / "workspace", tmp_path / "private"):
        folder.mkdir(parents=True)
    (out / "csv-counting" / "result.json").write_text("{}")
    (out / "results.json").write_text("{}")
    hiding = plan(out, workspace, tmp_path / "private", ("/extra",))
    covered = {folder for folder, _ in hiding.decoys}
    assert str(TASKS_DIR) in covered
    assert set(hiding.hidden) >= {
        str(tmp_path / "private"),
        str(out / "sqlite-analysis"),
        str(out / "results.json"),
        str(out / "csv-counting" / "result.json"),
        "/extra",
    }
    assert not any(str(workspace).startswith(path) for path in hiding.hidden)
    decoy = Path(hiding.decoys[0][1])
    assert (decoy / "csv-counting" / "oracle").is_file()
    assert (decoy / "csv-counting" / "oracle").stat().st_size == 0
    assert out_siblings(out, tmp_path / "elsewhere") == []


def test_git_folders_of_a_worktree_are_found(tmp_path: Path) -> None:
    main = tmp_path / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(main),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    subprocess.run(
        ["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt")], check=True
    )
    (tmp_path / "wt" / "pkg").mkdir()
    found = git_folders([tmp_path / "wt" / "pkg"])
    assert tmp_path / "wt" / ".git" in found and (main / ".git").resolve() in found


# -- the runner against an agent that looks for the oracle --------------------------------

SESSION = r"tr '\0' '\n' < /proc/$PPID/cmdline"
#: The task folders: from the session's command line where the act can see the session (never
#: in a PID namespace of its own), else where the package keeps them (an agent that knows it).
TASKS_AT = f"T=$({SESSION} | grep -A1 -x -- --decoy | sed -n 2p); T=${{T:-{TASKS_DIR}}}"
RUNNER = "R=$(awk '/^PPid/{print $2}' /proc/$PPID/status)"
ATTACKS = [
    # what the session's command line and its parents say
    f"{SESSION}; {RUNNER}; tr '\\0' ' ' < /proc/$R/cmdline",
    # the task folders by their absolute path, by globs, and listed
    f'{TASKS_AT}; ls -la "$T" "$T/csv-counting"; cat "$T/csv-counting/oracle" '
    '"$T/csv-counting/reference.json" "$T"/*/oracle "$T"/csv-counting/wrong/*',
    # relative, through /proc/self/cwd, and through the session's and the runner's /proc entries
    f'{TASKS_AT}; {RUNNER}; REL=$(realpath --relative-to=. "$T"); '
    'for p in "$REL" "/proc/self/cwd/$REL" "/proc/$PPID/root$T" "/proc/$R/root$T" '
    '"/proc/$PPID/cwd/$(realpath --relative-to=/proc/$PPID/cwd "$T" 2>/dev/null)" '
    '"/proc/$R/cwd/$(realpath --relative-to=/proc/$R/cwd "$T" 2>/dev/null)"; '
    'do cat "$p/csv-counting/oracle" 2>&1; done',
    # the installed package, found by importing it with every interpreter at hand
    f"PY=$({SESSION} | head -1); "
    'for py in python3 "$PY"; do '
    "P=$(\"$py\" -c 'import os, epistemic_agent; print(os.path.dirname(epistemic_agent.__file__))')"
    ' && cat "$P/benchmark/tasks/csv-counting/oracle"'
    ' "$P/benchmark/tasks/csv-counting/oracle-data"/* 2>&1;'
    ' find "$P/benchmark" -name oracle -exec cat {} + 2>&1; done',
    # symlinks made in the workspace, and the checkout's history
    f'{TASKS_AT}; ln -sfn "$T" tasks-link; cat tasks-link/csv-counting/oracle; D=$T; '
    'for _ in 1 2 3 4 5; do D=$(dirname "$D"); '
    'git -C "$D" show HEAD:src/epistemic_agent/benchmark/tasks/csv-counting/oracle 2>&1'
    " | head -3; done",
]


def attack_script(tmp_path: Path) -> Path:
    reason = "Find the files that judge this task, by every path I can build, to learn the answer."
    turns: list[dict[str, object]] = [
        {"calls": [{"tool": "bash", "args": {"command": command, "type": act, "reason": reason}}]}
        for command, act in zip(ATTACKS, ["collect-info"] * 4 + ["change-state"], strict=True)
    ]
    turns.append(
        {
            "calls": [
                {
                    "tool": "read_file",
                    "args": {"path": "tasks-link/csv-counting/oracle", "reason": reason},
                }
            ]
        }
    )
    turns.append({"final": "done"})
    path = tmp_path / "attack.json"
    path.write_text(json.dumps(turns))
    return path


def real_markers() -> list[str]:
    """Lines that only the real task folder holds (its oracle, data, sessions)."""
    folder = TASKS_DIR / "csv-counting"
    texts = [(folder / "oracle").read_text(), (folder / "reference.json").read_text()]
    texts += [path.read_text() for path in sorted((folder / "wrong").glob("*.json"))]
    lines = [line.strip() for text in texts for line in text.splitlines()]
    return sorted({line for line in lines if len(line) > 30})


def test_an_agent_that_looks_for_the_oracle_gets_nothing_and_is_flagged(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [
            EPISTEMIC,
            "bench",
            "--model",
            f"replay:{attack_script(tmp_path)}",
            "--tasks",
            "csv-counting",
            "-o",
            str(out),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    [row] = json.loads(done.stdout)["tasks"]
    assert row["exit_code"] == 0 and row["hidden"] is True and row["calls"] == 6
    assert row["passed"] is False and done.returncode == 1
    assert "a decoy: it read nothing" in row["peeked"] and row["verdict"].startswith("FAIL")
    flagged = {peek["path"] for peek in row["peeks"]}
    assert "tasks/csv-counting/oracle" in flagged
    seen = (out / "csv-counting" / "events.jsonl").read_text()
    seen += "".join(
        p.read_text(errors="replace")
        for p in (out / "csv-counting" / "workspace").rglob("*")
        if p.is_file()
    )
    # it did look for the session, and was stopped: by Landlock, or (in a PID namespace of its
    # own, whose /proc is the namespace's) because the session is out of its sight ($PPID is 0)
    assert "Permission denied" in seen or "/proc/0/cmdline: No such file" in seen
    leaked = [
        marker for marker in real_markers() if json.dumps(marker)[1:-1] in seen or marker in seen
    ]
    assert leaked == []


# -- fanotify, the second line of defence -----------------------------------------------


@pytest.fixture
def watched(tmp_path: Path) -> tuple[Path, Path]:
    real, decoy = tmp_path / "real", tmp_path / "decoy"
    for folder in (real / "task", decoy / "task"):
        folder.mkdir(parents=True)
    (real / "task" / "oracle").write_text(SECRET)
    (decoy / "task" / "oracle").write_text("")
    return real, decoy


def watch_of(real: Path, decoy: Path) -> Watch:
    watch = Watch({"tasks": (real, False), "decoy": (decoy, True)})
    why = watch.start()
    if why is not None:
        pytest.skip(f"fanotify is unavailable here: {why}")
    return watch


def test_a_real_file_read_by_another_process_is_seen_only_where_acts_are_not_confined(
    watched: tuple[Path, Path],
) -> None:
    real, decoy = watched
    for confined, expected in ((False, ["tasks/task/oracle"]), (True, [])):
        watch = watch_of(real, decoy)
        subprocess.run(["cat", str(real / "task" / "oracle")], capture_output=True, check=True)
        assert [peek.path for peek in watch.finish(None, confined)] == expected
    watch = watch_of(real, decoy)
    reader = subprocess.Popen(["cat", str(real / "task" / "oracle")], stdout=subprocess.DEVNULL)
    reader.wait()
    assert [peek.pid for peek in watch.finish(reader.pid, True)] == [reader.pid]


def test_a_decoy_counts_only_when_opened_through_a_cover(
    watched: tuple[Path, Path], tmp_path: Path
) -> None:
    real, decoy = watched
    watch = watch_of(real, decoy)
    (decoy / "task" / "oracle").read_text()  # this process: never counted
    subprocess.run(["cat", str(decoy / "task" / "oracle")], check=True)  # the host view: not an act
    target = tmp_path / "shown"
    target.mkdir()
    through = f"mount --bind {decoy} {target} && cat {target}/task/oracle && ls {target}/task"
    done = subprocess.run(["unshare", "-m", "sh", "-c", through], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot make a mount namespace here: {done.stderr!r}")
    found = watch.finish(None, True)
    assert {(peek.path, peek.decoy) for peek in found} == {
        ("decoy/task/oracle", True),
        ("decoy/task", True),
    }


def test_without_cap_sys_admin_detection_says_it_is_unavailable(watched: tuple[Path, Path]) -> None:
    real, _ = watched
    code = (
        "import sys; from pathlib import Path; "
        "from epistemic_agent.execute.sandbox import syscalls as confine_sys; "
        "confine_sys.keep_only_capabilities(confine_sys.KEPT_CAPABILITIES); "
        "from epistemic_agent.benchmark.peek import Watch; "
        f"print(Watch({{'t': (Path({str(real)!r}), False)}}).start())"
    )
    if os.geteuid() != 0:
        pytest.skip("needs root to drop a capability it holds")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "needs CAP_SYS_ADMIN" in done.stdout


# -- the neutral launcher -------------------------------------------------------------------


@pytest.fixture
def launcher_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Private]:
    private = Private()
    (private.root / "judge" / "answers").write_text(SECRET)
    monkeypatch.setenv("EPISTEMIC_JUDGE_LAUNCHER", json.dumps(launcher_argv()))
    monkeypatch.setenv("EPISTEMIC_JUDGE_HIDE", json.dumps([str(private.root), str(TASKS_DIR)]))
    monkeypatch.setenv("EPISTEMIC_JUDGE_SCRATCH", str(private.scratch))
    monkeypatch.setenv("EPISTEMIC_SOMETHING", "must not reach the code")
    yield private
    private.remove()


def test_the_code_under_test_runs_apart_from_its_judge(launcher_env: Private) -> None:
    answers = launcher_env.root / "judge" / "answers"
    probe = (
        "import json, os, sys\n"
        "def read(path):\n"
        "    try:\n"
        "        return open(path, 'rb').read().decode(errors='replace')\n"
        "    except OSError as error:\n"
        "        return type(error).__name__\n"
        "parent = os.getppid()\n"
        "print(json.dumps({'argv': sys.argv, 'env': dict(os.environ), 'parent': parent,\n"
        f"    'parent_cmdline': read(f'/proc/{{parent}}/cmdline') if parent else '',\n"
        f"    'answers': read({str(answers)!r}),\n"
        f"    'oracle': read({str(TASKS_DIR / 'csv-counting' / 'oracle')!r}),\n"
        "    'pids': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()),\n"
        "    'stdin': sys.stdin.read(), 'sid': os.getsid(0) == os.getpid() or os.getsid(0)}))\n"
        "open('/tmp/outside-the-scratch', 'w')\n"
    )
    with judgelib.scratch() as folder:
        (folder / "work").mkdir()
        (folder / "work" / "probe.py").write_text(probe)
        ran = judgelib.run_code([judgelib.python3(), "probe.py"], folder / "work", 30, stdin=b"in")
    seen = json.loads(ran.stdout.splitlines()[0])
    assert ran.exit == 1 and ("PermissionError" in ran.stderr or "Read-only" in ran.stderr)
    assert seen["answers"] == "FileNotFoundError" and SECRET not in ran.stdout
    assert seen["oracle"] == "FileNotFoundError" and seen["stdin"] == "in"
    assert set(seen["env"]) <= {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
    }
    judge_paths = (str(launcher_env.root), "oracle", "judge")
    assert not any(p in json.dumps(seen["argv"]) + seen["parent_cmdline"] for p in judge_paths)
    if ran.confinement == "landlock+namespaces":
        assert seen["pids"] == [1, 2] and seen["parent"] == 1  # alone in its PID namespace


def test_the_code_cannot_see_the_other_runs_scratch_folders(
    launcher_env: Private, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    mine, other = shared / "mine", shared / "other"
    for folder in (mine, other):
        folder.mkdir(parents=True)
    (other / "answers").write_text(SECRET)
    monkeypatch.setenv("EPISTEMIC_JUDGE_SCRATCH", str(mine))
    monkeypatch.setenv("EPISTEMIC_JUDGE_SHARED", str(shared))
    with judgelib.scratch() as folder:
        (folder / "work").mkdir()
        ran = judgelib.run_code(
            ["sh", "-c", f"ls {shared}; cat {other}/answers"], folder / "work", 10
        )
    assert SECRET not in ran.stdout and "No such file" in ran.stderr
    assert "mine" in ran.stdout  # its own scratch folder is still there


def test_the_launcher_reports_time_outs_signals_and_file_size_limits(launcher_env: Private) -> None:
    with judgelib.scratch() as folder:
        (folder / "work").mkdir()
        slow = judgelib.run_code(["sh", "-c", "sleep 30 & sleep 30"], folder / "work", 0.5)
        killed = judgelib.run_code(["sh", "-c", "kill -9 $$"], folder / "work", 10)
        big = judgelib.run_code(
            ["sh", "-c", "head -c 5000 /dev/zero > f"], folder / "work", 10, fsize=100
        )
        size = (folder / "work" / "f").stat().st_size
        missing = judgelib.run_code(["no-such-program"], folder / "work", 10)
    assert slow.timed_out and slow.seconds < 10 and not slow.ok
    assert killed.signal == 9 and killed.exit is None
    assert size == 100 and not big.ok
    assert missing.exit == 127 and "cannot run" in missing.stderr


def test_a_broken_launcher_is_an_oracle_error_not_a_verdict(
    launcher_env: Private, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EPISTEMIC_JUDGE_LAUNCHER", json.dumps(["/bin/false"]))
    with judgelib.scratch() as folder, pytest.raises(judgelib.OracleError):
        judgelib.run_code(["true"], folder, 5)
