"""A judging environment that cannot judge is an environment error, never a verdict on the agent:
no `python3` but the tool's own, a `python3` that dies of a PermissionError, one that runs by hand
but not where the agent's code runs, one that hangs. `epistemic bench` then runs no agent, shows
ENV ERROR, says why, and exits 3; an oracle whose runs of the agent's code fail because the
interpreter cannot start says so too (judgerun.check_environment)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import EPISTEMIC
from epistemic_agent.benchmark import TASKS_DIR, interpreter, judgelib, judgerun
from epistemic_agent.benchmark.judge import Private, launcher_argv, verdict_of
from epistemic_agent.benchmark.readable import allow_list
from installs import BASE_PYTHON, BIN
from mechanisms import FOUND

pytestmark = [
    pytest.mark.system,  # the judging environment: real interpreters, confined
    pytest.mark.skipif(sys.platform != "linux", reason="the benchmark runs on Linux"),
]

TOOL = str(Path(sys.prefix).resolve())  # this checkout's venv: the tool's own environment
#: What a venv's interpreter printed when the benchmark's confinement could not read its venv.
DENIED = (
    "Traceback (most recent call last):\n"
    '  File "<frozen getpath>", line 353, in <module>\n'
    f"PermissionError: [Errno 13] Permission denied: '{TOOL}/pyvenv.cfg'\n"
)


def bench(env: dict[str, str], out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [EPISTEMIC, "bench", "--model", "replay", "--tasks", "test-authoring", "-o", str(out)]
    return subprocess.run([*argv, *args], capture_output=True, text=True, timeout=600,
                          check=False, env=env, stdin=subprocess.DEVNULL)  # fmt: skip


def activated(path: str) -> dict[str, str]:
    """This checkout's venv activated (its bin first), with `path` after it."""
    env = {key: value for key, value in os.environ.items() if key != "EPISTEMIC_MODEL"}
    return env | {"PATH": f"{BIN}:{path}", "VIRTUAL_ENV": TOOL, "COLUMNS": "300"}


def programs_but_python(folder: Path) -> Path:
    """A folder with every program of /usr/bin but Python's."""
    folder.mkdir()
    for program in Path("/usr/bin").iterdir():
        if not program.name.startswith(("python", "pydoc", "idle")):
            (folder / program.name).symlink_to(program)
    return folder


def fake_python3(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "python3"
    script.write_text(body)
    script.chmod(0o755)
    return script


def assert_environment_error(done: subprocess.CompletedProcess[str], out: Path, why: str) -> None:
    """Exit 3, no verdict, ENV ERROR in the table, the reason said, nothing run."""
    row = json.loads((out / "test-authoring" / "result.json").read_text())
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    assert row["passed"] is False and row["complete"] is False, row
    assert row["verdict"].startswith("ERROR: the judging environment: "), row["verdict"]
    assert why in row["environment_error"] and row["verdict"].endswith(row["environment_error"])
    assert "ENV ERROR" in done.stdout and "FAIL" not in done.stdout + done.stderr
    assert "0 passed, 0 failed, 1 not judged (environment error)" in done.stdout
    assert f"test-authoring: {row['verdict']}" in done.stderr and "Traceback" not in done.stderr
    assert not (out / "test-authoring" / "events.jsonl").exists()  # no agent ran for nothing


def test_no_python3_but_the_tools_own_is_an_environment_error(tmp_path: Path) -> None:
    env = activated(str(programs_but_python(tmp_path / "bin")))
    done = bench(env, tmp_path / "out")
    assert_environment_error(done, tmp_path / "out", "no python3 on PATH but this tool's own")
    assert f"{TOOL}/bin/python3" in done.stderr
    checked = bench(env, tmp_path / "check", "--check-oracles", "--json")
    plays = json.loads(checked.stdout)["plays"]
    assert checked.returncode == 3 and plays and not any(play["ok"] for play in plays)
    assert all(play["verdict"].startswith("ERROR: the judging environment") for play in plays)


def test_a_python3_that_dies_of_a_permission_error_is_an_environment_error(
    tmp_path: Path,
) -> None:
    fake = fake_python3(tmp_path / "bin", f"#!/bin/sh\ncat >&2 <<'END'\n{DENIED}END\nexit 1\n")
    done = bench(activated(f"{fake.parent}:/usr/bin:/bin"), tmp_path / "out")
    why = f"python3 ({fake}) does not run: PermissionError: [Errno 13] Permission denied"
    assert_environment_error(done, tmp_path / "out", why)


@pytest.mark.skipif(FOUND.landlock_abi is None, reason="the agent's code reads an allow-list")
def test_a_python3_that_runs_by_hand_but_not_where_the_code_runs_is_an_environment_error(
    tmp_path: Path,
) -> None:
    """A wrapper outside every folder the agent's code may read: it answers when asked by hand,
    and cannot even be started where the oracle runs the agent's code."""
    body = '#!/bin/bash\nexec -a "$0" /usr/bin/python3 "$@"\n'
    fake = fake_python3(tmp_path / "wrapper" / "bin", body)
    done = bench(activated(f"{fake.parent}:/usr/bin:/bin"), tmp_path / "out")
    why = f"python3 ({fake}) cannot run a one-line script where the agent's code runs"
    assert_environment_error(done, tmp_path / "out", why)


def test_a_python3_that_hangs_is_an_environment_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_python3(tmp_path / "bin", "#!/bin/sh\nexec sleep 60\n")
    monkeypatch.setattr(interpreter, "ASK_TIMEOUT", 1.0)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    with pytest.raises(interpreter.Unusable, match=r"\(.*/bin/python3\) did not answer within 1 s"):
        interpreter.machine_python()


SEE = [
    {
        "calls": [
            {
                "tool": "bash",
                "args": {
                    "command": "env > seen.env; python3 -c 'import sys; print(sys.executable)'"
                    " > seen.python",
                    "type": "change-state",
                    "reason": "Write down what this folder's programs will run with.",
                },
            }
        ]
    },
    {"final": "done"},
]
PASS = (
    "import sys\nfrom pathlib import Path\n"
    "sys.path.insert(0, str(Path(__file__).resolve().parent))\nimport judgelib as j\n"
    "j.main(lambda ws: 'looked')\n"
)


def test_the_agents_python3_is_the_recorded_one_and_no_variable_points_at_the_tool(
    tmp_path: Path,
) -> None:
    task = tmp_path / "tasks" / "look"
    (task / "workspace").mkdir(parents=True)
    (task / "task.md").write_text("Look around.\n")
    (task / "oracle").write_text(PASS)
    (task / "reference.json").write_text(json.dumps(SEE))
    (tmp_path / "lib").mkdir()  # on the tool's own path: the session imports nothing from it
    env = activated("/usr/bin:/bin") | {"PYTHONPATH": str(tmp_path / "lib"), "PYTHONUSERBASE": TOOL}
    argv = [EPISTEMIC, "bench", "--model", "replay", "--tasks-dir", str(tmp_path / "tasks")]
    done = subprocess.run([*argv, "-o", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=300, check=False, env=env)  # fmt: skip
    row = json.loads((tmp_path / "out" / "look" / "result.json").read_text())
    assert done.returncode == 0 and row["passed"], (row["verdict"], done.stderr)
    ws = Path(row["workspace"])
    seen = dict(
        line.split("=", 1) for line in (ws / "seen.env").read_text().splitlines() if "=" in line
    )
    assert not {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONUSERBASE"} & set(seen), seen
    assert str(BIN) not in seen["PATH"].split(":")
    agents = (ws / "seen.python").read_text().strip()
    assert os.path.realpath(agents) == os.path.realpath(row["python3"]), (agents, row["python3"])
    assert not os.path.realpath(agents).startswith(TOOL + "/")


# -- in the oracle: a run of the agent's code that fails because python3 cannot start ---------


@pytest.fixture
def judge_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Private]:
    """The oracle's environment as the runner sets it (the agent's allow-list in force)."""
    private = Private()
    reads = allow_list(None)
    monkeypatch.setenv("EPISTEMIC_JUDGE_LAUNCHER", json.dumps(launcher_argv()))
    monkeypatch.setenv("EPISTEMIC_JUDGE_HIDE", json.dumps([str(private.root), str(TASKS_DIR)]))
    monkeypatch.setenv("EPISTEMIC_JUDGE_SCRATCH", str(private.scratch))
    monkeypatch.setenv("EPISTEMIC_JUDGE_READABLE", json.dumps(reads.paths))
    monkeypatch.setattr(judgerun, "_sound", False)
    monkeypatch.setattr(judgerun, "_python3", reads.python)
    yield private
    private.remove()


def run_script(source: str) -> judgelib.Ran:
    with judgelib.scratch() as folder:
        (folder / "work").mkdir()
        (folder / "work" / "solution.py").write_text(source)
        return judgelib.run_code([judgelib.python3(), "solution.py"], folder / "work", 30)


@pytest.mark.skipif(FOUND.landlock_abi is None, reason="the agent's code reads an allow-list")
def test_a_venv_python3_the_code_cannot_read_is_the_environments_fault(
    judge_env: Private, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The defect as it was: the interpreter given to the oracle is a venv's, and the agent's
    code (confined to the allow-list) cannot read its pyvenv.cfg. That is no verdict."""
    venv = tmp_path / "venv"
    subprocess.run([str(BASE_PYTHON), "-m", "venv", "--without-pip", str(venv)], check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    monkeypatch.setattr(judgerun, "_python3", str(venv / "bin" / "python3"))
    with pytest.raises(judgelib.EnvironmentFault, match=r"pyvenv\.cfg") as fault:
        run_script("print('right')\n")
    assert f"python3 ({venv}/bin/python3) cannot run a one-line script" in str(fault.value)


@pytest.mark.skipif(FOUND.landlock_abi is None, reason="the agent's code reads an allow-list")
def test_code_that_fails_in_a_sound_environment_is_the_codes_failure(judge_env: Private) -> None:
    ran = run_script("import sys\nsys.exit('PermissionError: my own words')\n")
    assert ran.exit == 1 and "my own words" in ran.stderr and judgerun._sound is True


def test_an_oracle_that_reports_an_environment_error_gives_no_verdict() -> None:
    said = verdict_of(4, "ENVIRONMENT ERROR: python3 (/x/python3) does not run: nope\n", "")
    assert said.passed is False and said.error is None
    assert said.environment == "python3 (/x/python3) does not run: nope"
    assert said.line == "ERROR: the judging environment: python3 (/x/python3) does not run: nope"
    assert verdict_of(1, "ENVIRONMENT ERROR: forged\n", "").environment is None  # exit 4 only
