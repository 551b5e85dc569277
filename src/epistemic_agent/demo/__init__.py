"""The offline demo: a scripted model fixes a small buggy script, then an oracle judges it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..agent import Agent, JsonEvents, LiveEvents
from ..policy import SupervisorSpec
from ..providers import ReplayProvider
from ..session import Session
from ..supervisor import make_supervisor

HERE = Path(__file__).parent
TASK = HERE / "task"
SCRIPT = HERE / "session.json"
SUPERVISOR = HERE / "supervisor.json"  # a scripted second opinion on the calls


def prepare_workspace(out: Path | None) -> Path:
    """A fresh copy of the bundled task (a new temporary directory unless `out` is given)."""
    if out is None:
        workspace = Path(tempfile.mkdtemp(prefix="epistemic-demo-"))
    else:
        if out.exists() and any(out.iterdir()):
            raise FileExistsError(f"{out} is not empty; the demo needs a fresh directory")
        workspace = out
    shutil.copytree(
        TASK, workspace, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    return workspace


def run_oracle(workspace: Path) -> tuple[bool, str]:
    """The task's own check, run outside the gate: it is the judge, not an act of the agent."""
    done = subprocess.run(
        [sys.executable, "check.py"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode == 0, (done.stdout + done.stderr).strip()


def run_demo(out: Path | None, json_events: bool = False, color: bool | None = None) -> int:
    workspace = prepare_workspace(out)
    task = (workspace / "task.md").read_text(encoding="utf-8").strip()
    events = JsonEvents() if json_events else LiveEvents(color=color)
    events.notice(f"A scripted model plays this session (no real model, no API key): {SCRIPT}")
    events.notice(f"workspace: {workspace}")
    events.notice(f"A scripted supervisor reviews its tests, changes and reverts: {SUPERVISOR}")
    provider = ReplayProvider(SCRIPT)
    supervisor = make_supervisor(SupervisorSpec(f"replay:{SUPERVISOR}"))
    header = {"task": task, "model": f"replay:{SCRIPT}"}
    with Session(workspace, header=header, supervisor=supervisor) as session:
        if isinstance(events, LiveEvents):
            events.follow(session)
        agent = Agent(session, provider, events=events)
        stop = agent.run(task)
        session.end()  # the demo owns its session, as `run` does: it is closed, not open
        events.summary(session, stop)
    passed, verdict = run_oracle(workspace)
    if isinstance(events, JsonEvents):
        events.emit("oracle", passed=passed, output=verdict, report=str(session.layout.report))
    else:
        events.notice(f"oracle (check.py): {'PASS' if passed else 'FAIL'}: {verdict}")
        events.notice(f"RATIONALE.md: {session.layout.report}")
        events.notice("scripted model: every call above was played from the bundled script")
    return 0 if passed and stop.reason == "finished" else 1
