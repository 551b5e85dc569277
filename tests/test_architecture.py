"""The import contract (pyproject.toml, [tool.importlinter]; docs/architecture.md): imports flow
one way through the layers, every module sits in one, and breaking a layer fails the check."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "epistemic_agent"
LINT = Path(sys.executable).with_name("lint-imports")


def layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["type"] == "layers")
    return [{name.strip() for name in layer.split(":")} for layer in contract["layers"]]


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        cwd=tree,
        env={"PYTHONPATH": str(tree / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_every_module_sits_in_exactly_one_layer() -> None:
    found = {f"epistemic_agent.{path.stem}" for path in PACKAGE.glob("*.py")}
    found |= {f"epistemic_agent.{path.parent.name}" for path in PACKAGE.glob("*/__init__.py")}
    found -= {"epistemic_agent.__init__"}
    listed = [name for layer in layers() for name in layer]
    assert len(listed) == len(set(listed)), "a module is in two layers"
    assert found == set(listed)


def test_the_contract_holds_and_breaking_a_layer_fails_it(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(PACKAGE, tree / "src" / "epistemic_agent")
    assert lint(tree).returncode == 0
    core = tree / "src" / "epistemic_agent" / "vocabulary.py"
    core.write_text(
        core.read_text() + "\n\ndef _late() -> object:\n    from . import cli\n\n    return cli\n"
    )
    broken = lint(tree)
    assert broken.returncode != 0
    assert "epistemic_agent.vocabulary -> epistemic_agent.cli" in broken.stdout
