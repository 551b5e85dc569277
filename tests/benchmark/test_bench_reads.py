"""The allow-list of what acts may read, tried as an attacker would: a copy of the benchmark the
runner does not know of (another clone, a wheel in a package cache) reached by every path an
act can build, through every mechanism that can enforce it, gets nothing; a benchmark session
that names one is flagged; what a task needs (its workspace, python3, git, sqlite3) still
works."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import EPISTEMIC, epistemic
from epistemic_agent.benchmark import TASKS_DIR
from epistemic_agent.benchmark.peek_record import pattern
from epistemic_agent.benchmark.readable import allow_list
from epistemic_agent.execute.sandbox.platform import Platform
from epistemic_agent.session.session import Session, Settings
from mechanisms import FOUND, confined_by

pytestmark = [
    pytest.mark.system,  # the benchmark's read allow-list, under every mechanism
    pytest.mark.skipif(sys.platform != "linux", reason="confinement is Linux-only"),
]

LOOK = "look at what lies around before deciding anything"
SECRET = "the answer is 42, from a copy nobody knew of"
TASK_FILE = "src/epistemic_agent/benchmark/tasks/csv-counting/oracle"


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """A workspace, another clone holding an oracle, a pip cache holding a wheel of it; the
    benchmark's PATH and HOME for the acts."""
    ws, clone, cache = tmp_path / "ws", tmp_path / "clone", tmp_path / "cache" / "pip"
    ws.mkdir()
    (clone / TASK_FILE).parent.mkdir(parents=True)
    (clone / TASK_FILE).write_text(SECRET)
    (clone / ".git").mkdir()
    wheel = cache / "wheels" / "ab" / "epistemic_agent-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("epistemic_agent/benchmark/tasks/csv-counting/oracle", SECRET)
    (ws / "link").symlink_to(clone / TASK_FILE)
    home = tmp_path / "home"
    home.mkdir()
    reads = allow_list(home)
    monkeypatch.setenv("PATH", reads.path_env)
    monkeypatch.setenv("HOME", str(home))
    return ws, clone, wheel


def attacks(clone: Path, wheel: Path) -> list[str]:
    oracle = clone / TASK_FILE
    rel = os.path.relpath(oracle, clone.parent / "ws")
    return [
        f"cat {oracle}",
        f"head -c 400 {oracle}",
        "cat link",
        f"cat {rel} /proc/self/cwd/{rel}",
        f"cat /proc/self/root{oracle} /proc/$$/root{oracle}",
        f'cat "/proc/$PPID/root{oracle}" "/proc/$PPID/cwd/{rel}"',
        f'P={clone}/src/epistemic; cat "${{P}}_agent/benchmark/tasks/csv-counting/or"acle',
        f"python3 -c 'print(open(\"{oracle}\").read())'",
        f'python3 -c \'import zipfile; z = zipfile.ZipFile("{wheel}"); '
        f"print(z.read(z.namelist()[0]).decode())'",
        f"unzip -p {wheel} 2>&1; ls {wheel.parent} {clone} /tmp",
        "find / -path '*/benchmark/tasks/*/oracle' -exec cat {} + 2>/dev/null | head -5",
        f"git -C {clone} log 2>&1 | head -2",
    ]


@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "landlock", "bwrap"])
@pytest.mark.parametrize("act", ["collect-info", "change-state"])
def test_a_copy_the_runner_does_not_know_of_gives_nothing_by_any_path(
    elsewhere: tuple[Path, Path, Path], mechanism: str, act: str
) -> None:
    ws, clone, wheel = elsewhere
    reads = allow_list(Path(os.environ["HOME"]))
    settings = Settings(platform=confined_by(mechanism), readable=reads.paths)
    with Session(ws, settings) as session:
        shown = [session.bash(command, act, LOOK) for command in attacks(clone, wheel)]
        read = session.read_file("link", LOOK)
    for result in shown:
        assert SECRET not in result.stdout + result.stderr, result
    assert read.status == "rejected" and SECRET not in read.stdout
    denied = "".join(result.stderr for result in shown)
    assert "Permission denied" in denied or "No such file" in denied


@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "landlock", "bwrap"])
def test_what_a_task_needs_still_works_inside_the_allow_list(
    elsewhere: tuple[Path, Path, Path], mechanism: str
) -> None:
    ws = elsewhere[0]
    reads = allow_list(Path(os.environ["HOME"]))
    (ws / "data.csv").write_text("a,b\n1,2\n")
    script = (
        "set -e; python3 -c 'import csv, sqlite3; "
        'print(len(list(csv.reader(open("data.csv")))))\'; '
        "printf '#!/bin/sh\\necho ran\\n' > run.sh; chmod +x run.sh; ./run.sh; git init -q repo; "
        "git -C repo -c user.name=a -c user.email=a@a commit -q --allow-empty -m x; "
        "git -C repo log --format=%s; sqlite3 :memory: 'select 6*7'; "
        'T=$(mktemp); echo scratch > "$T"; cat "$T"; ls /usr/bin/env; cat /etc/hostname >/dev/null'
    )
    settings = Settings(platform=confined_by(mechanism), readable=reads.paths)
    with Session(ws, settings) as session:
        done = session.bash(script, "change-state", "set up and try the tools the task uses")
        header = session.state.header["confinement"]
    assert done.ok, done.stderr
    assert done.stdout.split() == ["2", "ran", "x", "42", "scratch", "/usr/bin/env"]
    assert set(reads.paths) <= set(header["readable"]) and "reads-allow-listed" in header["held"]


def test_without_a_mechanism_the_guarantee_is_not_held_and_grants_outside_are_not_given(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    off = Platform(None, "off", None, "off", None, "off")
    with Session(ws, Settings(platform=off, readable=("/usr",))) as session:
        none = session.state.header["confinement"]
    assert "reads-allow-listed" in none["not_held"]
    if FOUND.landlock_abi is None:
        pytest.skip("no Landlock here")
    ws2 = tmp_path / "ws2"
    ws2.mkdir()
    with Session(ws2, Settings(platform=confined_by("landlock"), readable=("/usr",))) as session:
        header = session.state.header["confinement"]
    assert "reads-allow-listed" in header["held"]
    cache = os.path.realpath(os.path.expanduser("~/.cache"))
    if os.path.isdir(cache):  # a default setup grant, outside the list: not given
        assert cache not in header["grants"]["setup"]
        assert cache in header["missing_grants"]["setup"]


def test_run_refuses_a_readable_path_that_is_not_there(tmp_path: Path) -> None:
    for args in (["--readable", str(tmp_path / "nope")], ["--readable"]):
        done = epistemic("run", "--model", "replay:x.json", "-C", str(tmp_path), *args, "task")
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert "--readable" in done.stderr


# -- the record names an attempt: flagged ---------------------------------------------------

NAMES = [path.name for path in TASKS_DIR.iterdir() if path.is_dir()]


@given(
    st.sampled_from(["/tmp/wt-20/src/epistemic_agent", "/work/x/build/lib/epistemic_agent", ""]),
    st.sampled_from(NAMES),
    st.sampled_from(["oracle", "oracle-data/cases.json", "reference.json", "wrong/x.json"]),
)
def test_a_path_into_any_copy_of_a_task_folder_is_named(prefix: str, name: str, tail: str) -> None:
    text = f"cat '{prefix}/benchmark/tasks/{name}/{tail}' 2>&1".encode()
    assert pattern(NAMES).search(text)
    assert pattern(NAMES).search(f"cp -r /tmp/copy/{name}/{tail} .".encode())


def test_the_runs_own_folders_are_not_named() -> None:
    innocent = [
        "/tmp/out/csv-counting/gaming-anchored-grep/workspace",
        "/tmp/out/csv-counting/reference-reference/workspace/counts.txt",
        "--decoy /x/src/epistemic_agent/benchmark/tasks /tmp/epistemic-judge-1/decoy",
        "the oracle of csv-counting is what judges it",
    ]
    for text in innocent:
        assert pattern(NAMES).search(text.encode()) is None, text


def bench_attack(tmp_path: Path, commands: list[str]) -> dict[str, object]:
    reason = "Find the files that judge this task, by every path I can build, to learn the answer."
    turns: list[dict[str, object]] = [
        {
            "calls": [
                {"tool": "bash", "args": {"command": c, "type": "collect-info", "reason": reason}}
            ]
        }
        for c in commands
    ]
    turns.append({"final": "done"})
    script = tmp_path / "attack.json"
    script.write_text(json.dumps(turns))
    out = tmp_path / "out"
    argv = [EPISTEMIC, "bench", "--model", f"replay:{script}", "--tasks", "csv-counting"]
    done = subprocess.run(
        [*argv, "-o", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    [row] = json.loads(done.stdout)["tasks"]
    seen = (out / "csv-counting" / "events.jsonl").read_text()
    seen += "".join(
        p.read_text(errors="replace")
        for p in (out / "csv-counting" / "workspace").rglob("*")
        if p.is_file()
    )
    return {"row": row, "seen": seen, "code": done.returncode}


def test_the_runner_keeps_an_unknown_clone_out_of_reach_and_flags_the_attempt(
    tmp_path: Path,
) -> None:
    clone = tmp_path / "clone"
    shutil.copytree(
        TASKS_DIR / "csv-counting", clone / "src/epistemic_agent/benchmark/tasks/csv-counting"
    )
    (clone / ".git").mkdir()
    wheel = tmp_path / "pip" / "epistemic_agent-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(clone / TASK_FILE, "epistemic_agent/benchmark/tasks/csv-counting/oracle")
    commands = attacks(clone, wheel)
    found = bench_attack(tmp_path, commands)
    row, seen = found["row"], str(found["seen"])
    assert isinstance(row, dict)
    assert row["exit_code"] == 0 and row["hidden"] is True and row["reads_allow_listed"] is True
    assert row["passed"] is False and found["code"] == 1
    assert "tasks/csv-counting/oracle" in {peek["path"] for peek in row["peeks"]}
    assert "Permission denied" in seen or "No such file" in seen
    oracle = (TASKS_DIR / "csv-counting" / "oracle").read_text()
    leaked = [line for line in oracle.splitlines() if len(line.strip()) > 30 and line in seen]
    assert leaked == []


# -- the code an oracle runs gets the same allow-list ------------------------------------------


def test_the_code_an_oracle_runs_reads_only_the_allow_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from epistemic_agent.benchmark import judgelib
    from epistemic_agent.benchmark.judge import Private, launcher_argv

    clone = tmp_path / "clone"
    (clone / TASK_FILE).parent.mkdir(parents=True)
    (clone / TASK_FILE).write_text(SECRET)
    private = Private()
    reads = allow_list(None)
    monkeypatch.setenv("EPISTEMIC_JUDGE_LAUNCHER", json.dumps(launcher_argv()))
    monkeypatch.setenv("EPISTEMIC_JUDGE_HIDE", json.dumps([str(private.root)]))
    monkeypatch.setenv("EPISTEMIC_JUDGE_SCRATCH", str(private.scratch))
    monkeypatch.setenv("EPISTEMIC_JUDGE_READABLE", json.dumps(reads.paths))
    monkeypatch.setenv("PATH", reads.path_env)
    try:
        with judgelib.scratch() as folder:
            (folder / "work").mkdir()
            harness = folder / "harness.py"
            harness.write_text("print('harness read')\n")
            probe = (
                f"cat {clone / TASK_FILE}; find / -name oracle -path '*tasks*' 2>/dev/null; "
                f"python3 {harness}"
            )
            ran = judgelib.run_code(["sh", "-c", probe], folder / "work", 30, readable=[harness])
            blind = judgelib.run_code(["sh", "-c", f"cat {harness}"], folder / "work", 30)
    finally:
        private.remove()
    if ran.confinement == "none":
        pytest.skip("no confinement here")
    assert SECRET not in ran.stdout and "Permission denied" in ran.stderr + ran.stdout
    assert "harness read" in ran.stdout
    assert "harness read" not in blind.stdout and not blind.ok
