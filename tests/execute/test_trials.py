"""`epistemic doctor` proves each guarantee by trying to break it here, and names the layouts it
cannot protect; a session refuses to start in one that its platform would otherwise protect.

The verdicts must come from the trials: with the pins taken away, or with Landlock alone, the
same machine must report what a trial managed, whatever the platform table says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import EPISTEMIC
from epistemic_agent.core.vocabulary import GUARANTEES
from epistemic_agent.execute import trials
from epistemic_agent.execute.sandbox import confinement as confine
from epistemic_agent.execute.sandbox import platform as confine_platform
from epistemic_agent.execute.sandbox.layouts import unprotected
from epistemic_agent.execute.sandbox.platform import Platform
from epistemic_agent.policy.rules import PolicyError
from epistemic_agent.session.session import Session, Settings
from mechanisms import FOUND, confined_by

pytestmark = [
    pytest.mark.system,  # the doctor's trials of confinement
    pytest.mark.skipif(sys.platform != "linux", reason="confinement is Linux-only"),
]

NONE = Platform(None, "off", None, "off", None, "off")
LOOK = "look at what the workspace holds before changing it"


@pytest.fixture(autouse=True)
def own_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The trials' throwaway folders go to a temp dir of the test's own, to be counted."""
    systmp = tmp_path / "systmp"
    systmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(systmp))
    monkeypatch.setenv("TMPDIR", str(systmp))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return systmp


def broken(platform: Platform) -> dict[str, str]:
    return trials.verdicts(trials.prove(platform))


@pytest.mark.parametrize("mechanism", ["landlock+namespaces", "bwrap"])
def test_every_guarantee_is_tried_and_holds_where_the_platform_gives_it(
    mechanism: str, own_temp: Path
) -> None:
    done = trials.prove(confined_by(mechanism))
    assert set(done) == set(GUARANTEES)
    assert all(done[key] for key in GUARANTEES), "a guarantee without a trial"
    assert trials.verdicts(done) == {}
    assert list(own_temp.iterdir()) == []  # the lab is gone


def test_an_older_landlock_is_tried_through_its_pid_namespace() -> None:
    if FOUND.landlock_abi is None or FOUND.namespaces is None:
        pytest.skip("needs Landlock and namespaces")
    assert broken(Platform(5, None, FOUND.namespaces, None, None, "not used")) == {}


def test_landlock_alone_breaks_what_the_table_says_it_cannot_hold() -> None:
    platform = confined_by("landlock")
    found = broken(platform)
    assert set(found) == set(platform.not_held())
    assert found["tool-protected"].startswith("tried here, a setup act could write the install")


def test_without_confinement_every_trial_breaks_its_guarantee() -> None:
    found = broken(NONE)
    assert set(found) == set(GUARANTEES)
    assert "the kernel delivered the signal" in found["processes-isolated"]  # and we live on
    assert "hidden key" in found["secrets-hidden"]


def test_the_verdict_comes_from_the_trials_not_from_the_platform_table(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the pins gone, an act can move a parent of a protected item aside and rebuild it:
    the doctor says so on a platform whose table claims every guarantee."""
    from epistemic_agent.cli import app as cli

    strong = confined_by("landlock+namespaces")
    assert strong.not_held() == {}
    monkeypatch.setattr(confine, "pins", lambda ends, writable: ())
    monkeypatch.setattr(confine_platform, "detect", lambda probe_bwrap=False: strong)
    ws = tmp_path / "ws"
    ws.mkdir()
    assert cli.main(["doctor", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "  NOT HELD  record-protected: tried here, a change-state act could move config " in out
    assert "  NOT HELD  tool-protected: tried here, a setup act could move " in out
    assert "  held      record-private:" in out
    assert cli.main(["doctor", "--json", "-C", str(ws)]) == 0
    data = json.loads(capsys.readouterr().out)["confinement"]["guarantees"]
    tool = data["tool-protected"]
    assert not tool["held"] and tool["why"].startswith("tried here")
    moved = [trial for trial in tool["trials"] if not trial["held"]]
    assert moved and all(trial["managed"].startswith("changed ") for trial in moved)
    assert data["secrets-hidden"]["held"] and data["secrets-hidden"]["trials"]


def test_doctor_names_a_tool_landlock_cannot_protect(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Landlock alone, the tool in a virtualenv in the workspace: not held, from the trial, and
    the layout is named with what to do instead."""
    from epistemic_agent.cli import app as cli

    ws = tmp_path / "ws"
    (ws / ".venv").mkdir(parents=True)
    weak = confined_by("landlock")
    monkeypatch.setattr(confine_platform, "detect", lambda probe_bwrap=False: weak)
    monkeypatch.setattr(confine, "tool_paths", lambda: (str(ws / ".venv"),))
    assert cli.main(["doctor", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "  NOT HELD  tool-protected: tried here, a setup act could write the installation" in out
    assert f"  {ws}/.venv: inside a writable folder, and Landlock alone" in out
    assert "    instead: install the tool outside the workspace and the grants" in out


def test_a_symlinked_policy_in_the_workspace_is_named_and_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`epistemic.toml -> conf/policy.toml`: the file is bound read-only, the symlink cannot
    be; an act could point it at a policy of its own for the next session."""
    from epistemic_agent.cli import app as cli

    strong = confined_by("landlock+namespaces")
    monkeypatch.setattr(confine_platform, "detect", lambda probe_bwrap=False: strong)
    ws = tmp_path / "ws"
    (ws / "conf").mkdir(parents=True)
    (ws / "conf" / "policy.toml").write_text('default = "allow"\n')
    (ws / "epistemic.toml").symlink_to("conf/policy.toml")
    assert cli.main(["doctor", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert f"  NOT HELD  record-protected: {ws}/epistemic.toml: a symlink in a writable" in out
    with pytest.raises(PolicyError) as refused:
        Session(ws, Settings(platform=strong)).open()
    assert str(refused.value).startswith(f"cannot keep {ws}/epistemic.toml out of the agent's")
    assert "\n" not in str(refused.value)
    assert not (ws / ".epistemic").exists()
    (ws / "epistemic.toml").unlink()
    (ws / "conf" / "policy.toml").rename(ws / "epistemic.toml")
    with Session(ws, Settings(platform=strong)) as session:  # a plain file: protected
        assert session.bash("true", "collect-info", LOOK).ok


def test_a_prefix_holding_the_workspace_leaves_its_precise_folders_protected(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A system interpreter (`/usr`) with the workspace in `/usr/src/app` and `/usr/local`
    granted: the prefix is not bound (it would blind both), the site-packages in the grant is,
    and the tool is protected."""
    prefix = tmp_path / "usr"
    site, ws = prefix / "local/lib/python3.11/site-packages", prefix / "src/app"
    for folder in (site, ws):
        folder.mkdir(parents=True)
    monkeypatch.setattr(confine, "tool_paths", lambda: (str(prefix), str(site)))
    monkeypatch.setattr(confine, "tool_prefixes", lambda: (str(prefix),))
    monkeypatch.setattr(confine, "tool_wanted", lambda: (str(site),))
    strong = confined_by("landlock+namespaces")
    made = confine.probe(strong, ws, {"setup": (str(prefix / "local"),)})
    assert made.tool == (str(site),) and made.exposed == []
    assert str(site) in made.view("setup").protected
    assert "tool-protected" not in made.not_held() and unprotected(made) is None


@pytest.mark.parametrize(
    ("name", "on_path", "exposed"),
    [("app", "ws", True), ("json", "parent", True), ("my-app", "parent", False),
     ("v1.2", "parent", False)],
)  # fmt: skip
def test_a_writable_folder_importable_by_the_tool_refuses_to_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, on_path: str, exposed: bool
) -> None:
    """`python -m` in the workspace puts it on sys.path; a folder on sys.path above a workspace
    whose name is a module name (`json/`) lets an act shadow that module. A folder above the
    workspace is otherwise harmless: nothing outside the workspace is writable."""
    ws = tmp_path / name
    ws.mkdir()
    entry = str(ws if on_path == "ws" else tmp_path)
    monkeypatch.setattr(confine, "tool_paths", lambda: (entry,))
    monkeypatch.setattr(confine, "tool_wanted", lambda: (entry,))
    made = confine.probe(confined_by("landlock+namespaces"), ws, None)
    problem = unprotected(made)
    assert (problem is not None) == exposed, problem
    if exposed:
        assert problem is not None and problem.startswith("cannot keep ")
        assert "tool-protected" in made.not_held()
    assert unprotected(confine.probe(confined_by("landlock"), ws, None)) is None  # not claimed


def test_doctor_takes_well_under_two_seconds(tmp_path: Path) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [EPISTEMIC, "doctor", "--json", "-C", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False, env=os.environ,
    )  # fmt: skip
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["confinement"]
    assert data["seconds"] < 2.0 and took < 4.0, (data["seconds"], took)
