"""The oracle check the benchmark's tests read is computed once per content of the tasks'
folder (tests/contentcache.py): reused while no task file changes, done again when any does,
and done again when a run that computed it was interrupted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from contentcache import DONE, computed_once, content_hash
from epistemic_agent.benchmark import TASKS_DIR


class Counting:
    """A stand-in for the slow check: writes what it was run on, and counts its runs."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.runs = 0

    def __call__(self, folder: Path) -> None:
        self.runs += 1
        (folder / "result.txt").write_text(f"run {self.runs} of {content_hash(self.source)}")


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    """A copy of the benchmark's tasks, free to change."""
    return Path(shutil.copytree(TASKS_DIR, tmp_path / "tasks", symlinks=True))


def test_a_second_run_reuses_what_the_first_computed(tasks: Path, tmp_path: Path) -> None:
    check = Counting(tasks)
    first = computed_once(tmp_path / "cache", "check-oracles", tasks, check)
    second = computed_once(tmp_path / "cache", "check-oracles", tasks, check)
    assert first == second and check.runs == 1
    assert (second / "result.txt").read_text().startswith("run 1 of ")


def changed_content(tasks: Path) -> None:
    oracle = next(tasks.glob("*/oracle"))
    oracle.write_text(oracle.read_text() + "\n")


def changed_name(tasks: Path) -> None:
    reference = next(tasks.glob("*/reference.json"))
    reference.rename(reference.with_name("reference-renamed.json"))


def added(tasks: Path) -> None:
    (next(tasks.glob("*/workspace")) / "new.txt").write_text("")


def removed(tasks: Path) -> None:
    next(tasks.glob("*/task.md")).unlink()


@pytest.mark.parametrize("change", [changed_content, changed_name, added, removed])
def test_any_change_to_a_task_file_computes_it_again(
    tasks: Path, tmp_path: Path, change: object
) -> None:
    check = Counting(tasks)
    before = computed_once(tmp_path / "cache", "check-oracles", tasks, check)
    change(tasks)  # type: ignore[operator]
    after = computed_once(tmp_path / "cache", "check-oracles", tasks, check)
    assert after != before and check.runs == 2
    assert (after / "result.txt").read_text() == f"run 2 of {content_hash(tasks)}"
    assert not before.exists()  # the stale result is gone


def test_bytecode_caches_are_not_content(tasks: Path) -> None:
    before = content_hash(tasks)
    (tasks / "__pycache__").mkdir()
    (tasks / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert content_hash(tasks) == before


def test_an_interrupted_computation_is_done_again(tasks: Path, tmp_path: Path) -> None:
    def interrupted(folder: Path) -> None:
        (folder / "partial").write_text("")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        computed_once(tmp_path / "cache", "check-oracles", tasks, interrupted)
    check = Counting(tasks)
    folder = computed_once(tmp_path / "cache", "check-oracles", tasks, check)
    assert check.runs == 1 and (folder / DONE).exists() and not (folder / "partial").exists()
