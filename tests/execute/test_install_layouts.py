"""The tool as users install it, attacked by its own agent's acts.

This checkout is built into a wheel once per test session (its dependencies come from the test
venv through a `.pth` file, so nothing is downloaded), then installed the ways users install
it: a virtualenv at the workspace's root or in a subfolder, `pip install --user`, pipx, uvx
(whose environments live in uv's cache, inside setup's default grant `~/.cache`), and with the
workspace being `$HOME` itself. For each, a session is started with that install's `epistemic`
(HOME and TMPDIR on folders of the test's own), and an act of every mutating type runs a script
that moves every folder above the tool's package aside, up to the writable folder it lies in,
rebuilds it with a payload, and replaces the console script. Each attempt must fail, and the
next `epistemic exec` must run the human's tool: no payload ran. A layout that cannot be
protected makes the session refuse to start, in one line (exit 2).
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from mechanisms import FOUND

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="confinement is Linux-only"),
    pytest.mark.skipif(
        FOUND.landlock_abi is None or FOUND.namespaces is None,
        reason="these layouts are protected with Landlock and mount namespaces",
    ),
]

ROOT = Path(__file__).resolve().parents[2]
BASE_PYTHON = Path(getattr(sys, "_base_executable", sys.executable))
BIN = Path(sys.executable).parent  # the test venv's programs: pip, pipx, uv
MUTATING = ("change-state", "setup", "revert", "cleanup")
REASON = "make the change the next step of the task needs here"
LOOK = "look at what the workspace holds before changing it"


# -- the wheel, built once ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout as a wheel (built from a copy of its sources), without its requirements,
    with a `.pth` file that puts the test venv's site-packages after its own."""
    build = tmp_path_factory.mktemp("build")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, build / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "src", build / "src", ignore=ignore)
    built = tmp_path_factory.mktemp("built")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", str(build), "-w", str(built)], cwd=build)  # fmt: skip
    (original,) = built.glob("epistemic_agent-*.whl")
    house = tmp_path_factory.mktemp("wheelhouse")
    site = sysconfig.get_paths()["purelib"]
    repack(original, house / original.name, site)
    return house / original.name


def repack(source: Path, target: Path, site: str) -> None:
    """The wheel without Requires-Dist, plus `zz_epistemic_test_deps.pth`, its RECORD redone."""
    rows: list[tuple[str, bytes]] = []
    with zipfile.ZipFile(source) as wheel:
        for info in wheel.infolist():
            data = wheel.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                record = info.filename
                continue
            if info.filename.endswith(".dist-info/METADATA"):
                lines = data.splitlines(keepends=True)
                data = b"".join(line for line in lines if not line.startswith(b"Requires-Dist:"))
            rows.append((info.filename, data))
    rows.append(("zz_epistemic_test_deps.pth", f"{site}\n".encode()))
    lines = [f"{name},sha256={digest(data)},{len(data)}" for name, data in rows]
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as wheel:
        for name, data in rows:
            wheel.writestr(name, data)
        wheel.writestr(record, "\n".join([*lines, f"{record},,"]) + "\n")


def digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL, **kwargs)  # type: ignore[call-overload]  # fmt: skip
    assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return done  # type: ignore[no-any-return]


# -- the layouts -------------------------------------------------------------------------------


@dataclass
class Install:
    """One install of the tool, and the workspace a session runs in."""

    command: list[str]  # how the human runs this install's `epistemic`
    package: Path  # the installed epistemic_agent/
    script: Path  # the console script the human runs (for uvx: the one in its environment)
    ws: Path
    root: Path  # the folder the attack moves parents aside up to (a writable one, or $HOME)
    env: dict[str, str]
    marker: Path  # what the payload would write
    links: tuple[Path, ...] = ()  # other names of the package's files (hard links)

    def epistemic(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.command, *args], capture_output=True, text=True,
                              timeout=120, check=False, env=self.env, cwd=self.ws,
                              stdin=subprocess.DEVNULL)  # fmt: skip


def environment(tmp_path: Path, home: Path) -> dict[str, str]:
    systmp = tmp_path / "systmp"
    systmp.mkdir(exist_ok=True)
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_CACHE_DIR", "XDG_CACHE_HOME")
    env = {key: value for key, value in os.environ.items() if key not in drop}
    env |= {"HOME": str(home), "TMPDIR": str(systmp), "PIPX_HOME": str(home / ".local/pipx")}
    env |= {"PIPX_BIN_DIR": str(home / ".local/bin")}
    return env


def venv_install(wheel: Path, venv: Path, env: dict[str, str]) -> Path:
    run([str(BASE_PYTHON), "-m", "venv", "--without-pip", str(venv)], env=env)
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
         "--no-index", str(wheel)], env=env)  # fmt: skip
    return venv / "bin" / "epistemic"


def site_packages(prefix: Path) -> Path:
    (found,) = prefix.glob("lib/python3*/site-packages")
    return found


def make_install(layout: str, wheel: Path, tmp_path: Path) -> Install:
    home = tmp_path / "home"
    (home / ".cache").mkdir(parents=True)
    ws = home if layout.startswith("home-") else tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    env = environment(tmp_path, home)
    marker = tmp_path / "FORGED"
    if layout in ("venv-at-root", "venv-in-subfolder"):
        venv = ws / (".venv" if layout == "venv-at-root" else "app/.venv")
        script = venv_install(wheel, venv, env)
        return Install([str(script)], site_packages(venv) / "epistemic_agent", script, ws, ws,
                       env, marker)  # fmt: skip
    if layout in ("user-site", "home-user-site"):
        run([str(BASE_PYTHON), "-m", "pip", "install", "-q", "--user", "--no-deps",
             "--no-index", "--no-warn-script-location", str(wheel)], env=env)  # fmt: skip
        script = home / ".local/bin/epistemic"
        (package,) = home.glob(".local/lib/python3*/site-packages/epistemic_agent")
        return Install([str(script)], package, script, ws, home, env, marker)
    if layout in ("pipx", "home-pipx"):
        run([str(BIN / "pipx"), "install", "--python", str(BASE_PYTHON),
             "--pip-args=--no-deps --no-index", str(wheel)], env=env)  # fmt: skip
        script = home / ".local/bin/epistemic"
        (package,) = home.glob(".local/pipx/venvs/*/lib/python3*/site-packages/epistemic_agent")
        return Install([str(script)], package, script, ws, home, env, marker)
    assert layout == "uvx", layout
    uvx = [str(BIN / "uvx"), "--offline", "--no-index", "--find-links", str(wheel.parent),
           "--python", str(BASE_PYTHON), "--from", "epistemic-agent", "epistemic"]  # fmt: skip
    install = Install(uvx, Path(), Path(), ws, home / ".cache", env, marker)
    where = install.epistemic("types")  # the first run builds its environment in the cache
    assert where.returncode == 0, where.stderr
    (package,) = home.glob(".cache/uv/archive-v0/*/lib/python3*/site-packages/epistemic_agent")
    install.package, install.script = package, package.parents[3] / "bin" / "epistemic"
    # uv hard-links the environment's files from the wheel it unpacked in its cache
    install.links = tuple(home.glob(".cache/uv/archive-v0/*/epistemic_agent/__init__.py"))
    assert (
        install.links and install.links[0].stat().st_ino == (package / "__init__.py").stat().st_ino
    )
    return install


# -- the attack --------------------------------------------------------------------------------


def attack_script(install: Install) -> str:
    """Move every folder above the package aside (up to the root), rebuild it with a payload;
    write the package and replace the console script directly."""
    init = install.package / "__init__.py"
    payload = f"import pathlib; pathlib.Path('{install.marker}').write_text('forged')"
    lines = ["#!/bin/bash"]
    folder = install.package
    while folder != install.root and install.root in folder.parents:
        lines.append(
            f"mv '{folder}' '{folder}.aside' 2>/dev/null && cp -a '{folder}.aside' '{folder}' "
            f"&& printf '%s\\n' \"{payload}\" >> '{init}' && echo moved {folder.name}"
        )
        folder = folder.parent
    for path in (init, *install.links):
        lines.append(f"printf '%s\\n' \"{payload}\" >> '{path}' && echo wrote {path}")
    script = install.script
    lines.append(
        f"rm -f '{script}' 2>/dev/null; printf '#!/bin/sh\\necho > {install.marker}\\n' "
        f"> '{script}' && chmod +x '{script}' && echo replaced the script"
    )
    lines.append("echo attacked")
    return "\n".join(lines) + "\n"


def assert_humans_tool_runs(install: Install, before: bytes, what: str) -> None:
    assert not install.marker.exists(), f"{what}: a payload ran"
    assert (install.package / "__init__.py").read_bytes() == before, f"{what}: package changed"
    done = install.epistemic("exec", "--type", "collect-info", "--reason", LOOK, "--", "echo fine")
    assert done.returncode == 0 and done.stdout.startswith("fine"), (what, done.stderr)
    assert not install.marker.exists(), f"{what}: the next exec ran a payload"


LAYOUTS = ["venv-at-root", "venv-in-subfolder", "user-site", "pipx", "uvx", "home-user-site",
           "home-pipx"]  # fmt: skip


@pytest.mark.parametrize("layout", LAYOUTS)
def test_no_act_can_replace_the_installed_tool(
    wheelhouse: Path, tmp_path: Path, layout: str
) -> None:
    install = make_install(layout, wheelhouse, tmp_path)
    before = (install.package / "__init__.py").read_bytes()
    (install.ws / ".attack.sh").write_text(attack_script(install))
    assert_humans_tool_runs(install, before, "installed")
    for act in MUTATING:  # the script hides the paths: the gate lets every act type through
        done = install.epistemic("exec", "--type", act, "--reason", REASON, "--", "bash .attack.sh")
        assert "attacked" in done.stdout, (act, done.stdout, done.stderr)
        assert "moved" not in done.stdout and "wrote" not in done.stdout, (act, done.stdout)
        assert "replaced" not in done.stdout, (act, done.stdout)
        assert_humans_tool_runs(install, before, act)
    assert not list(install.root.rglob("*.aside"))


def test_the_attack_works_on_an_unconfined_install(wheelhouse: Path, tmp_path: Path) -> None:
    """The same script, run by hand outside any session, replaces the tool: the checks above
    can fail."""
    install = make_install("venv-in-subfolder", wheelhouse, tmp_path)
    (install.ws / ".attack.sh").write_text(attack_script(install))
    done = run(["bash", ".attack.sh"], cwd=install.ws, env=install.env)
    assert "moved epistemic_agent" in done.stdout
    install.epistemic("exec", "--type", "collect-info", "--reason", LOOK, "--", "true")
    assert install.marker.exists()


# -- layouts that cannot be protected ----------------------------------------------------------


def test_a_tool_reached_through_a_symlink_in_the_workspace_refuses_to_start(
    wheelhouse: Path, tmp_path: Path
) -> None:
    """`ws/tools -> /elsewhere/venv`: the venv is read-only for acts, but the symlink is not
    (a symlink cannot be bound), and an act could point it at a venv of its own."""
    home = tmp_path / "home"
    home.mkdir()
    env = environment(tmp_path, home)
    script = venv_install(wheelhouse, tmp_path / "venv", env)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "tools").symlink_to(tmp_path / "venv")
    command = ["tools/bin/epistemic", "exec", "--type", "collect-info", "--reason", LOOK, "--"]
    done = subprocess.run([*command, "true"], capture_output=True, text=True, cwd=ws, env=env,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and f"{ws}/tools" in done.stderr, done.stderr
    assert "a symlink in a writable folder" in done.stderr
    assert not (ws / ".epistemic").exists()  # refused before anything was written
    done = subprocess.run([str(script), *command[1:], "true"], capture_output=True, text=True,
                          cwd=ws, env=env, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr  # by its real path, the same install starts
