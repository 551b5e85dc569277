"""This checkout as users install it, for the tests that run the installed tool.

The checkout is built into a wheel once per test process (from a copy of its sources; its
dependencies come from the test venv through a `.pth` file, so nothing is downloaded), then
installed the ways users install it (`make_install`): a virtualenv at the workspace's root or in
a subfolder, `pip install --user`, pipx, uvx (whose environments live in uv's cache), and with
the workspace being `$HOME` itself. Each install runs with HOME and TMPDIR on folders of the
test's own. A test module's session fixture returns `wheel(tmp_path_factory)`.
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

ROOT = Path(__file__).resolve().parents[1]
BASE_PYTHON = Path(getattr(sys, "_base_executable", sys.executable))
BIN = Path(sys.executable).parent  # the test venv's programs: pip, pipx, uv
_built: list[Path] = []  # the wheel, once built in this process


# -- the wheel, built once ---------------------------------------------------------------------


def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout as a wheel (built from a copy of its sources), without its requirements,
    with a `.pth` file that puts the test venv's site-packages after its own: built once per
    process, whichever modules ask for it."""
    if not _built:
        _built.append(build_wheel(tmp_path_factory))
    return _built[0]


def build_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
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
    entries = [f"{name},sha256={digest(data)},{len(data)}" for name, data in rows]
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as wheel:
        for name, data in rows:
            wheel.writestr(name, data)
        wheel.writestr(record, "\n".join([*entries, f"{record},,"]) + "\n")


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
