"""The real MCP clients the tests drive, from npm: the versions pinned in
tests/npm/package.json, installed under .venv/npm/ once (later calls find them there).
`scripts/setup --test` runs `python tests/npminstall.py`; tests/mcp/test_clients.py calls
`install()` and fails, saying why, when npm cannot install them.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tests" / "npm" / "package.json"
PREFIX = ROOT / ".venv" / "npm"
INSTALL_TIMEOUT = 900.0


class InstallError(Exception):
    """The clients could not be installed (npm missing, or the registry unreachable)."""


def pinned() -> dict[str, str]:
    dependencies: dict[str, str] = json.loads(PACKAGE.read_text())["dependencies"]
    return dependencies


def install(prefix: Path = PREFIX, env: dict[str, str] | None = None) -> Path:
    """The folder of the installed clients' executables; installs them when missing."""
    wanted = hashlib.sha256(PACKAGE.read_bytes()).hexdigest()
    stamp = prefix / ".installed"
    binaries = prefix / "node_modules" / ".bin"
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix.parent / f"{prefix.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install, however many test runs ask at once
        if stamp.is_file() and stamp.read_text() == wanted:
            return binaries
        npm = shutil.which("npm")
        if npm is None:
            raise InstallError("npm is not installed: the client tests need Node.js and npm")
        shutil.copyfile(PACKAGE, prefix / "package.json")
        command = [npm, "install", "--no-audit", "--no-fund", "--no-package-lock"]
        command += ["--loglevel=error", "--fetch-retries=1"]
        names = ", ".join(f"{name}@{version}" for name, version in pinned().items())
        try:
            done = subprocess.run(
                command,
                cwd=prefix,
                env=env,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            raise InstallError(
                f"npm install of {names} took over {INSTALL_TIMEOUT:.0f} s: "
                "is the npm registry reachable?"
            ) from None
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise InstallError(
                f"npm could not install {names} (exit {done.returncode}): is the npm "
                "registry reachable? npm said:\n" + "\n".join(said[:6])
            )
        stamp.write_text(wanted)
    return binaries


if __name__ == "__main__":  # scripts/setup --test
    try:
        print(f"test clients in {install()}")
    except InstallError as error:
        print(f"tests/npminstall.py: {error}", file=sys.stderr)
        sys.exit(1)
