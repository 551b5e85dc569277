"""What confining every act costs per call, side by side with a bare `bash -c true`, in one run.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_confine.py            # full run (about a minute)
    .venv/bin/python bench/bench_confine.py --quick    # smoke run (seconds)

Timed round-robin (one of each per round, so the machine's noise falls on all alike):

1. `bash -c true` through subprocess.run: the bare spawn everything is compared with;
2. the executor's spawn of `true` without confinement;
3. the executor's spawn confined for an observation act and for a mutating act, with each
   mechanism this machine has (Landlock + namespaces; Landlock alone; bubblewrap);
4. the whole per-call cost through `Session.bash` (gate, journal, report, confinement,
   observation of what changed) for `true` as collect-info and as change-state, confined and
   not (Settings(enforce=False)), and confined in a workspace holding protected items a few
   folders down (a git repository, a policy in a subfolder, a client's settings), whose
   paths each act's view pins.

The target: the whole per-call cost, spawn included, within 4x the bare spawn. Everything is
written under a temporary directory that is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from epistemic_agent.execute.sandbox.confinement import Confinement
from epistemic_agent.execute.sandbox.platform import Platform, detect
from epistemic_agent.execute.shell import run_shell
from epistemic_agent.policy.file import load_policy
from epistemic_agent.session.session import Session, Settings

LIMIT = 4.0
LOOK = "learn what the workspace holds before changing it"
CHANGE = "make the change that is part of the deliverable"


def bare() -> None:
    subprocess.run(["bash", "-c", "true"], check=True)


def mechanisms(found: Platform) -> dict[str, Platform]:
    off = "forced off by the benchmark"
    chosen = {"none": Platform(None, off, None, off, None, off)}
    if found.landlock_abi is not None and found.namespaces is not None:
        chosen["landlock+namespaces"] = Platform(
            found.landlock_abi, None, found.namespaces, None, None, off
        )
    if found.landlock_abi is not None:
        chosen["landlock"] = Platform(found.landlock_abi, None, None, off, None, off)
    if found.bwrap is not None and found.bwrap_error is None:
        chosen["bwrap"] = Platform(None, off, None, off, found.bwrap, None)
    return chosen


def spawner(
    platform: Platform, ws: Path, scratch: Path, act: str, without: str = ""
) -> Callable[[], None]:
    """One confined spawn of `true`; `without` leaves out one part of it, to measure what that
    part costs: the tripwire, or the act's own PID namespace (its warden then watches the
    command's group instead)."""
    record = ws / ".epistemic"
    guarded = (ws / "RATIONALE.md",)
    confinement = Confinement(platform, ws, scratch, record, guarded)
    capture = (scratch / "out", scratch / "err")

    def once() -> None:
        launch = confinement.launch(act, capture)
        if without == "tripwire":
            launch = type(launch)(launch.confine, launch.argv_prefix, None, launch.pid_namespace)
        elif without == "PID namespace":
            launch = type(launch)(launch.confine, launch.argv_prefix, launch.tripwire, False)
        done = run_shell("true", ws, 30, scratch, launch, capture=capture)
        assert done.returncode == 0, done

    return once


def parts(platform: Platform, ws: Path, scratch: Path) -> dict[str, Callable[[], None]]:
    """The per-call breakdown of a confined spawn, where this tree has those parts."""
    launch = Confinement(platform, ws, scratch, ws / ".epistemic", ()).launch("change-state")
    if not hasattr(launch, "tripwire") or not hasattr(launch, "pid_namespace"):
        return {}
    name = "executor spawn, landlock+namespaces, change-state, without"
    return {
        f"{name} the {part}": spawner(platform, ws, scratch, "change-state", part)
        for part in ("tripwire", "PID namespace")
    }


def session_call(session: Session, act: str) -> Callable[[], None]:
    reason = LOOK if act == "collect-info" else CHANGE

    def once() -> None:
        result = session.bash("true", act, reason)
        assert result.ok, result

    return once


def protected_layout(target: Path) -> Session:
    """A session in a workspace that holds what a session protects a few folders down: a git
    repository (hooks, config), its policy in pol/sub/ (named), a client's settings in
    .vscode/: each is bound read-only, and the folders leading to it pinned, per act."""
    policy = target / "pol" / "sub" / "policy.toml"
    policy.parent.mkdir(parents=True)
    policy.write_text('default = "allow"\n')
    subprocess.run(["git", "init", "-q", str(target)], check=True)
    (target / ".vscode").mkdir()
    (target / ".vscode" / "mcp.json").write_text("{}\n")
    return Session(target, Settings(), policy=load_policy(policy)).open()


def measure(cases: dict[str, Callable[[], None]], rounds: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for case in cases.values():  # warm: imports, libc symbols, first classification
        case()
    for _ in range(rounds):
        for name, case in cases.items():
            started = time.perf_counter()
            case()
            samples[name].append(time.perf_counter() - started)
    return samples


def table(samples: dict[str, list[float]]) -> tuple[list[str], float]:
    base = statistics.median(samples["bash -c true (subprocess.run)"])
    lines = [
        "| case | median µs | p90 µs | × bash -c true |",
        "|---|---:|---:|---:|",
    ]
    for name, values in samples.items():
        ordered = sorted(values)
        median, p90 = statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]
        lines.append(f"| {name} | {median * 1e6:,.0f} | {p90 * 1e6:,.0f} | {median / base:.2f}× |")
    return lines, base


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="a few rounds only")
    args = parser.parse_args(argv)
    rounds = 20 if args.quick else 300
    found = detect(probe_bwrap=True)
    with tempfile.TemporaryDirectory(prefix="bench-confine-") as folder:
        root = Path(folder)
        ws, scratch = root / "ws", root / "scratch"
        for path in (ws / ".epistemic", scratch):
            path.mkdir(parents=True)
        (ws / "RATIONALE.md").write_text("report\n")
        cases: dict[str, Callable[[], None]] = {"bash -c true (subprocess.run)": bare}
        for name, platform in mechanisms(found).items():
            for act in ("collect-info", "change-state"):
                cases[f"executor spawn, {name}, {act}"] = spawner(platform, ws, scratch, act)
            if name == "landlock+namespaces":
                cases.update(parts(platform, ws, scratch))
        os.environ["TMPDIR"] = str(root)
        sessions = []
        for label, settings in (("confined", Settings()), ("unconfined", Settings(enforce=False))):
            target = root / f"session-{label}"
            target.mkdir()
            session = Session(target, settings).open()
            sessions.append(session)
            for act in ("collect-info", "change-state"):
                cases[f"Session.bash, {label} ({session.confinement.mechanism}), {act}"] = (
                    session_call(session, act)
                )
        session = protected_layout(root / "session-protected")
        sessions.append(session)
        for act in ("collect-info", "change-state"):
            name = f"Session.bash, confined ({session.confinement.mechanism}), {act}, protected"
            cases[name] = session_call(session, act)
        samples = measure(cases, rounds)
        for session in sessions:
            session.close()
    lines, base = table(samples)
    print(f"## Confinement per call ({rounds} rounds, {found.mechanism()} here)\n")
    print("\n".join(lines))
    worst = max(
        statistics.median(values)
        for name, values in samples.items()
        if name.startswith("Session.bash, confined")
    )
    ok = worst / base <= LIMIT
    print(
        f"\nTarget: the whole confined call within {LIMIT:g}× `bash -c true`: "
        f"{worst / base:.2f}× ({worst * 1e6:,.0f} vs {base * 1e6:,.0f} µs): "
        f"{'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
