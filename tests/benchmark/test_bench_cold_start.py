"""bench/cold_start.py: a ratio of medians with an interval from resampling paired rounds, and a
difference called beyond the noise only when that interval leaves out 1.00."""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import ROOT

SCRIPT = ROOT / "bench" / "cold_start.py"


def cold_start() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_cold_start", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def noisy(median: float, count: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [median * rng.uniform(0.9, 1.1) for _ in range(count)]


def test_the_same_distribution_is_within_the_noise() -> None:
    module = cold_start()
    ratio, low, high = module.ratio_interval(noisy(0.2, 40, 1), noisy(0.2, 40, 2))
    assert low < 1.0 < high and low <= ratio <= high
    assert module.verdict(low, high) == "within the noise"


@pytest.mark.parametrize(("factor", "word"), [(1.2, "slower"), (0.8, "faster")])
def test_a_shift_larger_than_the_spread_is_beyond_the_noise(factor: float, word: str) -> None:
    module = cold_start()
    ours = noisy(0.2, 40, 3)
    ratio, low, high = module.ratio_interval(ours, [x * factor for x in noisy(0.2, 40, 4)])
    assert ratio == pytest.approx(factor, rel=0.06)
    assert module.verdict(low, high) == f"{word}, beyond the noise"


def test_drift_shared_by_both_sides_cancels_out_because_rounds_stay_paired() -> None:
    module = cold_start()
    drift = [1 + i / 10 for i in range(30)]  # the machine slows down threefold
    ours = [0.2 * d for d in drift]
    _, low, high = module.ratio_interval(ours, [0.21 * d for d in drift])
    assert low == pytest.approx(1.05) and high == pytest.approx(1.05)


def test_unpaired_or_empty_samples_are_refused() -> None:
    module = cold_start()
    with pytest.raises(ValueError, match="paired"):
        module.ratio_interval([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="paired"):
        module.ratio_interval([], [])


def test_the_table_names_every_subject_and_the_ratio_to_python() -> None:
    module = cold_start()
    times = {
        module.THIS: [0.20, 0.21, 0.19],
        module.CONTROL: [0.20, 0.20, 0.21],
        module.PYTHON: [0.02, 0.02, 0.02],
    }
    lines = module.table(times)
    assert lines[0].startswith("| tree | median ms |")
    this, control, python = lines[2:]
    assert this.startswith(f"| {module.THIS} | 200.0 | 10.00× | 1.00 |")
    assert control.startswith(f"| {module.CONTROL} | 200.0 | 10.00× | 1.000 |")
    assert python.startswith(f"| {module.PYTHON} | 20.0 | 1.00× |")


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )


@pytest.mark.system  # runs the benchmark script
def test_a_short_run_of_this_tree_prints_the_table() -> None:
    done = run_script("--rounds", "2")
    assert done.returncode == 0, done.stderr
    assert "| this tree |" in done.stdout and "(control)" in done.stdout
    assert "standard-library modules" in done.stdout
    assert "2 rounds" in done.stdout


@pytest.mark.system  # runs the benchmark script
def test_the_floor_is_the_standard_library_exec_loads_and_nothing_of_the_package(
    tmp_path: Path,
) -> None:
    module = cold_start()
    ours = module.exec_subject(module.THIS, ROOT, tmp_path)
    names = module.standard_modules(ours)
    assert {"subprocess", "json", "hashlib", "argparse"} <= set(names)
    assert not [name for name in names if name.startswith("epistemic_agent")]
    floor = module.floor_subject(ours)
    assert module.wall(floor) > 0 and floor.label == module.FLOOR
    everything = module.loaded_modules(ours)
    assert set(names) < set(everything) and "epistemic_agent.session.session" in everything
    assert module.wall(module.imports_subject(ours)) > 0


def test_too_few_rounds_is_a_usage_error() -> None:
    done = run_script("--rounds", "1")
    assert done.returncode == 2 and "at least 2" in done.stderr and "Traceback" not in done.stderr
