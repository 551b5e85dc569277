"""Where each millisecond of a call goes: a per-step breakdown of `epistemic run` with a
scripted model, at two lengths of the same session, side by side with a `bash -c true` spawn
measured in the same run.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_steps.py              # 2,000 calls, breakdown at 200 and 2,000
    .venv/bin/python bench/bench_steps.py --calls 10000
    .venv/bin/python bench/bench_steps.py --quick      # 300 calls

The session runs in this process, through the CLI's own entry point (`epistemic run --model
replay:SCRIPT`), with confinement and observation as they are by default. Each named step of
a call (the model call and its journaling, the gate's check, the policy's decision, the
call's record, approval, the confined run, observation, the outcome's record, the live view)
is wrapped by a timer for this run only; the rows are the mean milliseconds per call over the
100 calls that end at each length, so a step whose cost grows with the session shows as a
larger number in the right-hand column. The act is `true`, declared `collect-info` (or
`change-state` with `--mutating`, which adds the observation of changes).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from scripted_sessions import bash_floor, new_workspace, remove, write_script

WINDOW = 100

# (label, module, class or None for a module's function, method): the steps of one call,
# outermost first
A, R, X = "epistemic_agent.agent.", "epistemic_agent.session.", "epistemic_agent.execute."
STEPS: list[tuple[str, str, str | None, str]] = [
    ("model call (scripted) and its record", A + "modelcall", "ModelCalls", "complete"),
    ("  compaction's estimate", A + "compaction", "Compactor", "learn"),
    ("  model record + publish", A + "modelcall", "ModelCalls", "_journal"),
    ("call, every step", R + "pipeline", "Pipeline", "call"),
    ("  check (gate, effects, prechecks)", R + "pipeline", "Pipeline", "check"),
    ("  decide (policy, supervisor)", R + "pipeline", "Pipeline", "decide"),
    ("  record the call (fsync) + publish", R + "pipeline", "Pipeline", "record_call"),
    ("  approve", R + "pipeline", "Pipeline", "approve"),
    ("  run (confined)", R + "pipeline", "Pipeline", "run"),
    ("    start the observers", R + "shell_step", "ShellStep", "watch"),
    ("    spawn, wait, reap (run_shell)", R + "shell_step", "ShellStep", "execute"),
    ("      tripwire: listen", X + "sandbox.tripwire", "Tripwire", "listen"),
    ("      reaper: start", X + "reaper", "Reaper", "start"),
    ("      confine the spawning thread (all)", X + "sandbox.apply", None, "enter"),
    ("        namespaces and mounts", X + "sandbox.apply", None, "_mounts"),
    ("        warden (PID 1 of the act)", X + "reaper", "Warden", "init"),
    ("          posix_spawn of the warden", X + "reaper", None, "_spawn"),
    ("        Landlock", X + "sandbox.landlock", None, "restrict_thread"),
    ("        tripwire: seccomp filter", X + "sandbox.tripwire", "Tripwire", "install"),
    ("      fork and exec bash", X + "shell", None, "_popen"),
    ("      wait for it", X + "shell", "_Waiter", "wait"),
    ("      warden: end the act's namespace", X + "reaper", "Warden", "end"),
    ("      reaper: sweep", X + "reaper", "Reaper", "sweep"),
    ("      tripwire: finish", X + "sandbox.tripwire", "Tripwire", "finish"),
    ("  observe (output, changes, flags)", R + "pipeline", "Pipeline", "observe"),
    ("  record the outcome + publish", R + "pipeline", "Pipeline", "record_outcome"),
    ("  publish (alerts, result)", R + "pipeline", "Pipeline", "publish"),
    ("publish: RATIONALE.md + head anchor", R + "recorder", "Recorder", "publish"),
    ("journal append (all records)", "epistemic_agent.journal.writer", "JournalWriter", "append"),
    ("live view: call started", A + "live.view", "LiveEvents", "call_started"),
    ("live view: call finished", A + "live.view", "LiveEvents", "call_finished"),
]


class Timers:
    """Per-step durations, each tagged with the number of the call it belongs to."""

    def __init__(self) -> None:
        self.calls = 0
        self.spent: dict[str, list[tuple[int, float]]] = defaultdict(list)
        self.ends: list[float] = []  # perf_counter at the end of each call

    def wrap(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent[label].append((self.calls, time.perf_counter() - started))
                if label == "call, every step":
                    self.calls += 1
                    self.ends.append(time.perf_counter())

        return timed

    def mean_ms(self, label: str, end: int) -> float:
        """Mean ms per call of `label` over the WINDOW calls that end at call `end`."""
        total = sum(s for n, s in self.spent.get(label, []) if end - WINDOW <= n < end)
        return total * 1000 / WINDOW

    def wall_ms(self, end: int) -> float:
        """Wall-clock ms per call over the WINDOW calls that end at `end`, everything in."""
        return (self.ends[end - 1] - self.ends[end - 1 - WINDOW]) * 1000 / WINDOW


@contextlib.contextmanager
def instrumented(timers: Timers) -> Iterator[None]:
    import importlib

    saved = []
    for label, module, cls, method in STEPS:
        found = importlib.import_module(module)
        owner = found if cls is None else getattr(found, cls)
        original = owner.__dict__[method]
        saved.append((owner, method, original))
        setattr(owner, method, timers.wrap(label, original))
    try:
        yield
    finally:
        for owner, method, original in saved:
            setattr(owner, method, original)


def run_session(calls: int, act: str, root: Path) -> Timers:
    from epistemic_agent.cli.app import main

    workspace = new_workspace("bench-steps-")
    path = write_script(calls, root, act)
    timers = Timers()
    argv = ["run", "--model", f"replay:{path}", "--max-steps", str(calls + 10)]
    argv += ["-C", str(workspace), "--no-color", "probe"]
    try:
        with instrumented(timers), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv)
    finally:
        remove(workspace)
    if code != 0 or timers.calls != calls:
        raise SystemExit(f"the session ended with {code} after {timers.calls} of {calls} calls")
    return timers


def table(timers: Timers, lengths: list[int], floor: float) -> None:
    print("| step | " + " | ".join(f"ms/call at {n:,}" for n in lengths) + " |")
    print("|---|" + "---:|" * len(lengths))
    for label, *_ in STEPS:
        cells = " | ".join(f"{timers.mean_ms(label, n):.3f}" for n in lengths)
        name = label.strip() if not label.startswith(" ") else "↳ " + label.strip()
        print(f"| {name} | {cells} |")
    walls = [timers.wall_ms(n) for n in lengths]
    row = " | ".join(f"**{w:.3f}**" for w in walls)
    print(f"| **wall clock per call, everything in** | {row} |")
    row = " | ".join(f"{floor:.3f}" for _ in lengths)
    print(f"| bash -c true (spawn, same run) | {row} |")
    row = " | ".join(f"{w / floor:.1f}×" for w in walls)
    print(f"| wall / bash -c true | {row} |")
    print()
    growth, ratio = walls[-1] / walls[0], walls[-1] / floor
    print(
        f"Per-call wall at {lengths[-1]:,} / at {lengths[0]:,}: {growth:.2f}× "
        f"(target ≤ 1.2×): {'PASS' if growth <= 1.2 else 'FAIL'}"
    )
    print(
        f"Per-call wall / bash -c true at {lengths[-1]:,}: {ratio:.1f}× "
        f"(target ≤ 4×): {'PASS' if ratio <= 4 else 'FAIL'}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="300 calls (--calls ignored)")
    parser.add_argument("--mutating", action="store_true", help="declare change-state")
    args = parser.parse_args(argv)
    calls = 300 if args.quick else args.calls
    act = "change-state" if args.mutating else "collect-info"
    lengths = [200, calls] if calls > 200 else [calls]
    with tempfile.TemporaryDirectory(prefix="bench-steps-") as folder:
        floor = bash_floor(200) * 1000
        timers = run_session(calls, act, Path(folder))
        floor = (floor + bash_floor(200) * 1000) / 2
    print(f"## Per-step breakdown: {calls:,} calls of `true` declared {act}\n")
    load = os.getloadavg()[0]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load:.2f}\n")
    table(timers, lengths, floor)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
