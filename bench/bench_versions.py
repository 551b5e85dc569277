"""Benchmark of per-call versions (src/epistemic_agent/baseline.py, versions.py): what keeping
the before-content of a large workspace costs, side by side with the behaviour before it
(`Settings(baseline=False)`: shell acts record only which paths they changed).

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_versions.py              # 15 runs per row (about 2 min)
    .venv/bin/python bench/bench_versions.py --runs 3     # smoke run

It builds a workspace of 10,000 text files of about 2 KiB in 500 folders (20 MiB), plus 20
binaries and 5 files of 2 MiB (above the copy cap), and an ignored `.git` of 500 files. Rows:
opening a session the first time (the baseline copies every small text file) and again (a
stat walk: nothing changed), and one shell act of three kinds, alternating the two settings
(first openings in an order that swaps from run to run) so background load hits both alike.
Acts run unconfined (`enforce=False`) in both columns: confinement costs the same either way
(bench_confine.py). Nothing outside the temporary directory is written.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from epistemic_agent.session.session import Session, Settings

REASON = "Benchmark edit: the change itself is what is being measured, nothing else."
ACTS = {
    "`true` (changes nothing)": "true",
    "`sed -i` on one file": "sed -i 's/line 1 /LINE 1 /' pkg7/mod3/file0.py",
    "a command writing 100 files": "mkdir -p out && for i in $(seq 100); do echo $i >out/f$i; done",
}


def build(root: Path) -> None:
    lines = [f"line {n} of a module that is about two kibibytes long ...\n" for n in range(32)]
    for index in range(10_000):
        folder = root / f"pkg{index // 20 % 25}" / f"mod{index // 500}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{index % 20}.py").write_text(f"# module {index}\n" + "".join(lines))
    for index in range(20):
        (root / f"blob{index}.bin").write_bytes(bytes(range(256)) * 8)
    for index in range(5):
        (root / f"big{index}.txt").write_text("x" * (2 << 20))
    git = root / ".git"
    for index in range(500):
        (git / f"o{index // 50}").mkdir(parents=True, exist_ok=True)
        (git / f"o{index // 50}" / f"{index}").write_bytes(b"o" * 512)


def settings(baseline: bool) -> Settings:
    return Settings(enforce=False, baseline=baseline)


def open_time(workspace: Path, baseline: bool) -> float:
    started = time.perf_counter()
    with Session(workspace, settings(baseline)):
        pass
    return time.perf_counter() - started


def act_time(session: Session, command: str) -> float:
    started = time.perf_counter()
    result = session.bash(command, "change-state", REASON)
    took = time.perf_counter() - started
    assert result.status == "ran", result
    return took


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def ms(values: list[float]) -> str:
    return f"{1000 * statistics.median(values):,.1f} ms"


def first_runs(runs: int) -> int:
    """Samples of a first opening (each copies the whole workspace again): a third of `runs`,
    and never fewer than five, so that one slow copy's writeback does not make the median."""
    return max(5, runs // 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="bench-versions-") as temp:
        root = Path(temp)
        template = root / "template"
        build(template)
        spaces = {flag: root / ("on" if flag else "off") for flag in (False, True)}
        first: dict[bool, list[float]] = {False: [], True: []}
        for index in range(first_runs(runs)):
            for flag in (False, True) if index % 2 == 0 else (True, False):
                space = spaces[flag]
                shutil.rmtree(space, ignore_errors=True)
                shutil.copytree(template, space, symlinks=True)
                first[flag].append(open_time(space, flag))
        again = {
            flag: [open_time(space, flag) for _ in range(runs)] for flag, space in spaces.items()
        }
        per_act: dict[str, dict[bool, list[float]]] = {name: {False: [], True: []} for name in ACTS}
        sessions = {flag: Session(space, settings(flag)).open() for flag, space in spaces.items()}
        try:
            for _ in range(runs):
                for name, command in ACTS.items():
                    for flag, session in sessions.items():
                        per_act[name][flag].append(act_time(session, command))
        finally:
            for session in sessions.values():
                session.close()
        record = {flag: space / ".epistemic" for flag, space in spaces.items()}
        print(
            "workspace: 10,000 text files (20 MiB), 20 binaries, 5 files of 2 MiB; "
            f"{runs} runs ({first_runs(runs)} of a first opening)\n"
        )
        print("| median | before (shell acts: paths only) | with versions | difference |")
        print("|---|---|---|---|")
        rows = [("open a session, first time", first), ("open a session again", again)]
        rows += [(f"one shell act: {name}", per_act[name]) for name in ACTS]
        for label, values in rows:
            off, on = statistics.median(values[False]), statistics.median(values[True])
            cells = f"{ms(values[False])} | {ms(values[True])} | {1000 * (on - off):+,.1f} ms"
            print(f"| {label} | {cells} |")
        copies = folder_size(record[True] / "baseline") / 2**20
        print(f"| `.epistemic/baseline/` size | - | {copies:,.1f} MiB | |")
        evidence = {flag: folder_size(record[flag] / "evidence") / 2**20 for flag in record}
        sizes = f"{evidence[False]:,.2f} MiB | {evidence[True]:,.2f} MiB"
        print(f"| `.epistemic/evidence/` after the acts | {sizes} | |")


if __name__ == "__main__":
    main()
