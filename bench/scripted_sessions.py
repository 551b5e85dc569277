"""What bench_peer.py and bench_length.py share: `epistemic run` sessions played by a scripted
model (N calls of `true`, then a final answer), the journal they leave, the `bash -c true`
spawn floor, and the machine's facts.

Not a benchmark itself: the two scripts import it (a script's own folder is first on its path).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EPISTEMIC = str(Path(sys.executable).with_name("epistemic"))
#: A reason of at least 20 characters, different on every call as a model's would be.
REASON = "confirm the shell still answers, probe {}"
TASK = "Check that the shell answers, once per step, then finish."


def bash_call(index: int, act: str = "collect-info") -> dict[str, Any]:
    """The scripted model's tool call number `index`: `true`, declared as `act`."""
    args = {"command": "true", "type": act, "reason": REASON.format(index)}
    return {"tool": "bash", "args": args}


def write_script(calls: int, folder: Path, act: str = "collect-info") -> Path:
    """A replay script of `calls` turns of one `true` each, then a final answer."""
    turns: list[dict[str, Any]] = [{"calls": [bash_call(n, act)]} for n in range(1, calls + 1)]
    turns.append({"final": "done"})
    path = folder / f"script-{calls}-{act}.json"
    path.write_text(json.dumps(turns), encoding="utf-8")
    return path


def new_workspace(prefix: str) -> Path:
    """A fresh git repository in the temp dir: outside this repository and off sys.path (the
    tool refuses a workspace its own interpreter could import from)."""
    workspace = Path(tempfile.mkdtemp(prefix=prefix))
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    return workspace


def journal(workspace: Path) -> list[dict[str, Any]]:
    """Every record of the workspace's journal, in order."""
    path = workspace / ".epistemic" / "journal.jsonl"
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def seconds(stamp: str) -> float:
    """A journal timestamp (ISO 8601 with ms, `Z`) as seconds since the epoch."""
    return dt.datetime.fromisoformat(stamp).timestamp()


def outcome_times(records: list[dict[str, Any]]) -> dict[int, float]:
    """When each call's outcome was journaled, by the call's seq."""
    return {r["seq"]: seconds(r["t"]) for r in records if r.get("kind") == "outcome"}


@dataclass
class InForce:
    """What the sessions ran under, as their journals say: confinement and observation."""

    confinement: set[str] = field(default_factory=set)
    observation: set[str] = field(default_factory=set)

    def add(self, records: list[dict[str, Any]]) -> None:
        confinement = records[0].get("confinement") if records else None
        if not isinstance(confinement, dict) or not confinement.get("mechanism"):
            raise SystemExit("bench: the journal's first line names no confinement mechanism")
        held = confinement.get("held") or []
        abi = confinement.get("landlock_abi")
        label = str(confinement["mechanism"]) + (f" (Landlock ABI {abi})" if abi else "")
        self.confinement.add(f"{label}, {len(held)} guarantees held")
        for record in records:
            if record.get("kind") == "outcome":
                observed = record.get("observed") or {}
                self.observation.add(str(observed.get("method", "off")))

    def describe(self) -> str:
        confinement = "; ".join(sorted(self.confinement)) or "not seen"
        observation = ", ".join(sorted(self.observation)) or "no call ran"
        return f"confinement {confinement}; observation {observation}"


def run_session(script: Path, calls: int, in_force: InForce | None = None) -> tuple[float, Path]:
    """Play `script` (`calls` calls) with `epistemic run` in a fresh workspace: the seconds from
    spawn to exit, and the workspace (the caller removes it). Checks that every call ran."""
    workspace = new_workspace("bench-run-")
    argv = [EPISTEMIC, "run", "--model", f"replay:{script}", "-C", str(workspace), "--here"]
    argv += ["--max-steps", str(calls + 10), TASK]
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace")[-800:]
        raise SystemExit(f"bench: epistemic run exited {done.returncode}: {tail}")
    records = journal(workspace)
    ran = sum(1 for r in records if r.get("kind") == "outcome" and r.get("ok"))
    if ran != calls:
        raise SystemExit(f"bench: {ran} of the script's {calls} calls ran ok")
    if in_force is not None:
        in_force.add(records)
    return elapsed, workspace


def remove(workspace: Path) -> None:
    shutil.rmtree(workspace, ignore_errors=True)


def parse_counts(text: str, least: int, fewest: int, why: str) -> tuple[int, ...]:
    """Comma-separated counts for argparse, sorted: at least `fewest` of them, each at least
    `least`; else `why` is the error."""
    counts = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    if len(counts) < fewest or counts[0] < least:
        raise argparse.ArgumentTypeError(why)
    return counts


def bash_floor(count: int) -> float:
    """The median seconds of `count` spawns of `bash -c true` (subprocess.run, as measured)."""
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        subprocess.run(["bash", "-c", "true"], check=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def machine() -> list[tuple[str, str]]:
    """CPU, cores, kernel, Python, load, the date, and the tool's version and commit."""
    cpu = "?"
    with open("/proc/cpuinfo", encoding="utf-8") as handle:
        cpu = next(
            (ln.split(":", 1)[1].strip() for ln in handle if ln.startswith("model name")), cpu
        )
    version = subprocess.run([EPISTEMIC, "--version"], capture_output=True, text=True, check=False)
    return [
        ("CPU", cpu),
        ("cores", str(os.cpu_count())),
        ("kernel", platform.release()),
        ("Python", f"{platform.python_version()} ({sys.executable})"),
        ("epistemic", (version.stdout or version.stderr).strip() or "?"),
        ("source under test", source_revision()),
        ("date (UTC)", dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M")),
        ("load average at start", load_average()),
    ]


def source_revision() -> str:
    """The commit of the checkout the `epistemic` command imports, and whether it differs."""
    code = "import epistemic_agent, pathlib; print(pathlib.Path(epistemic_agent.__file__).parent)"
    where = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    package = where.stdout.strip()
    if where.returncode != 0 or not package:
        return "?"
    git = ["git", "-C", package]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return package
    dirty = subprocess.run([*git, "status", "--porcelain", "--", "."], capture_output=True)
    state = f"{len(dirty.stdout.splitlines())} file(s) changed" if dirty.stdout else "clean"
    return f"{package}: commit {head.stdout.strip()} ({state})"


def load_average() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1 / 5 / 15 min)"


def print_table(title: str, header: list[str], rows: list[list[str]], right: int = 1) -> None:
    """A Markdown table under a `###` title; the columns from `right` on are right-aligned."""
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i < right else "--:" for i in range(len(header))) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
