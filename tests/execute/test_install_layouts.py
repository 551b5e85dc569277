"""The tool as users install it, attacked by its own agent's acts.

This checkout is built into a wheel and installed the ways users install it (tests/installs.py):
a virtualenv at the workspace's root or in a subfolder, `pip install --user`, pipx, uvx (whose
environments live in uv's cache, inside setup's default grant `~/.cache`), and with the
workspace being `$HOME` itself. For each, a session is started with that install's `epistemic`
(HOME and TMPDIR on folders of the test's own), and an act of every mutating type runs a script
that moves every folder above the tool's package aside, up to the writable folder it lies in,
rebuilds it with a payload, and replaces the console script. Each attempt must fail, and the
next `epistemic exec` must run the human's tool: no payload ran. A layout that cannot be
protected makes the session refuse to start, in one line (exit 2).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from installs import Install, environment, make_install, run, venv_install, wheel
from mechanisms import FOUND

pytestmark = [
    pytest.mark.system,  # real installs (pip, pipx, uv) under confinement
    pytest.mark.skipif(sys.platform != "linux", reason="confinement is Linux-only"),
    pytest.mark.skipif(
        FOUND.landlock_abi is None or FOUND.namespaces is None,
        reason="these layouts are protected with Landlock and mount namespaces",
    ),
]

MUTATING = ("change-state", "setup", "revert", "cleanup")
REASON = "make the change the next step of the task needs here"
LOOK = "look at what the workspace holds before changing it"


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return wheel(tmp_path_factory)


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
