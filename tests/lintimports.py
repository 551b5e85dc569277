"""lint-imports run on a copy of the package: the import contracts' tests break a copy and
check that the contract says so."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "epistemic_agent"
LINT = Path(sys.executable).with_name("lint-imports")


def copy_package(tmp_path: Path) -> Path:
    """A copy of the package, as `tree/src/epistemic_agent`; returns `tree`."""
    tree = tmp_path / "tree"
    shutil.copytree(PACKAGE, tree / "src" / "epistemic_agent")
    return tree


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """The project's contracts checked on the copy in `tree`."""
    return subprocess.run(
        [str(LINT), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        cwd=tree,
        env={"PYTHONPATH": str(tree / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
