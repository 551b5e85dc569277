"""`epistemic bench` however the tool is installed and started: every reference session passes
its oracle, and the tasks' `python3` is the machine's, never the tool's own environment (which
the benchmark hides from the code it runs).

The layouts: this checkout's venv activated (its bin first on PATH, VIRTUAL_ENV set) and called
by path with a plain PATH; this checkout's wheel (tests/installs.py) in a fresh venv, activated;
pipx; uvx. Each row of the results names the interpreter the agent and the judge used. And
the folder bench is started from does not change what its sessions import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EPISTEMIC
from installs import BIN, Install, environment, make_install, wheel

pytestmark = [
    pytest.mark.system,  # the benchmark from real installs (pipx, uvx, venvs)
    pytest.mark.skipif(sys.platform != "linux", reason="the benchmark runs on Linux"),
]

PLAIN = "/usr/bin:/bin"
LAYOUTS = ["activated-venv", "venv-by-path", "activated-wheel-venv", "pipx", "uvx"]


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return wheel(tmp_path_factory)


def layout_of(
    name: str, wheelhouse: Path, tmp_path: Path
) -> tuple[list[str], dict[str, str], Path]:
    """How the human runs `epistemic` in this layout, with what environment, and the tool's own
    environment (its prefix)."""
    if name in ("activated-venv", "venv-by-path"):  # this checkout's venv, the tests' own
        (tmp_path / "home").mkdir()
        env, prefix = environment(tmp_path, tmp_path / "home"), Path(sys.prefix)
        env["PATH"] = f"{BIN}:{PLAIN}" if name == "activated-venv" else PLAIN
        if name == "activated-venv":
            env["VIRTUAL_ENV"] = str(prefix)
        return [EPISTEMIC], env, prefix
    install = make_install("venv-in-subfolder" if "wheel" in name else name, wheelhouse, tmp_path)
    prefix = tool_prefix(install)
    if name == "activated-wheel-venv":
        install.env |= {"PATH": f"{prefix / 'bin'}:{PLAIN}", "VIRTUAL_ENV": str(prefix)}
    else:
        install.env["PATH"] = f"{install.env['HOME']}/.local/bin:{PLAIN}"
    return install.command, install.env, prefix


def tool_prefix(install: Install) -> Path:
    """The environment holding the installed package: PREFIX/lib/python3.X/site-packages/."""
    return install.package.parents[3]


def inside(path: str, folder: Path) -> bool:
    """Whether `path`, as given or resolved, lies in `folder`."""
    real = folder.resolve()
    seen = (Path(os.path.abspath(path)), Path(path).resolve())
    return any(p == real or real in p.parents for p in seen)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_reference_passes_with_the_machines_python3_however_installed(
    wheelhouse: Path, tmp_path: Path, layout: str
) -> None:
    command, env, prefix = layout_of(layout, wheelhouse, tmp_path)
    out = tmp_path / "out"
    done = subprocess.run(
        [*command, "bench", "--model", "replay", "--jobs", "2", "-o", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
        cwd=env["HOME"],
        stdin=subprocess.DEVNULL,
    )
    rows = json.loads(done.stdout)["tasks"] if done.stdout.strip() else []
    failed = {row["task"]: row["verdict"] for row in rows if not row["passed"]}
    assert done.returncode == 0 and len(rows) == 8 and not failed, (failed, done.stderr[-2000:])
    used = {row["python3"] for row in rows}
    assert len(used) == 1, used
    (python,) = used
    assert os.access(python, os.X_OK) and not inside(python, prefix), (python, prefix)
    for row in rows:  # nor is the tool's environment among what the agent's acts could read
        journal = Path(row["workspace"]) / ".epistemic" / "journal.jsonl"
        header = json.loads(journal.read_text().splitlines()[0])
        readable = header["confinement"].get("readable") or []
        assert not [path for path in readable if inside(path, prefix)], (readable, prefix)


def test_the_folder_bench_is_started_from_is_not_on_the_sessions_import_path(
    tmp_path: Path,
) -> None:
    """Started from a folder holding TMPDIR (so the sessions' scratch folders), the agents still
    start: `python -m` would have put that folder on their import path, and a session whose
    scratch is importable refuses to start."""
    (tmp_path / "home").mkdir()
    env = environment(tmp_path, tmp_path / "home") | {"PATH": PLAIN}
    argv = [EPISTEMIC, "bench", "--model", "replay", "--tasks", "csv-counting"]
    done = subprocess.run([*argv, "-o", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=300, check=False, env=env, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
