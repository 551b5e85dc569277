"""Attempts on the benchmark's files named in the session's record: the flag for what the kernel
refused.

With an allow-list of what acts may read (readable.py), a read of a copy of the benchmark the
runner does not know of fails (EACCES, or ENOENT under bwrap) and nothing is opened, so
fanotify (peek.py) sees nothing. What the record shows is kept instead: every call (its
command, its path, its inputs) and everything it printed (the evidence), searched for a path
into a task folder of any copy: `benchmark/tasks/NAME`, or `NAME/oracle`, `NAME/oracle-data`,
`NAME/prepare`, `NAME/reference.json`, `NAME/{alternative,wrong,gaming}/X.json` for a task's
name. A session whose record names one is flagged as peeking, whether or not it read anything.

A path assembled at run time whose failure is silenced is not in the record: it reads nothing
(the kernel's wall is the guarantee), and it is not flagged. The session header (which names
the folders it covers with decoys) is not searched.
"""

from __future__ import annotations

import re
from pathlib import Path

from .peek import Peek

MAX_BYTES = 64 * 1024 * 1024  # evidence read at most: a bigger record is searched in part


def pattern(task_names: list[str]) -> re.Pattern[bytes]:
    names = b"|".join(re.escape(name.encode()) for name in sorted(task_names, key=len)[::-1])
    part = rb"[A-Za-z0-9_.-]+"
    named = rb"(?:oracle|oracle-data|prepare)(?![A-Za-z0-9_.-])|reference\.json"
    named += rb"|(?:alternative|wrong|gaming)/" + part + rb"\.json"
    return re.compile(
        rb"benchmark/tasks/" + part + rb"(?:/" + part + rb")*"
        rb"|(?<![A-Za-z0-9_.-])(?:" + names + rb")/(?:" + named + rb")"
    )


def named(workspace: Path, task_names: list[str]) -> list[Peek]:
    """Every distinct task path the record of the session in `workspace` names."""
    record = workspace / ".epistemic"
    found = pattern(task_names)
    seen: dict[str, Peek] = {}
    for text in _texts(record):
        for match in found.finditer(text):
            path = _as_task_path(match.group().decode("utf-8", "replace"))
            seen.setdefault(path, Peek(path, False, 0, "named in the record"))
    return list(seen.values())


def _texts(record: Path) -> list[bytes]:
    texts: list[bytes] = []
    try:
        with (record / "journal.jsonl").open("rb") as handle:
            handle.readline()  # the header: it names the covered folders itself
            texts.append(handle.read(MAX_BYTES))
    except OSError:
        return texts
    budget = MAX_BYTES
    evidence = record / "evidence"
    for path in sorted(evidence.rglob("*")) if evidence.is_dir() else []:
        if budget <= 0 or not path.is_file() or path.is_symlink():
            continue
        try:
            with path.open("rb") as handle:
                data = handle.read(budget)
        except OSError:
            continue
        budget -= len(data)
        texts.append(data)
    return texts


def _as_task_path(text: str) -> str:
    """`tasks/NAME/...` as peek.py names them, whatever copy the path was into."""
    head, sep, tail = text.partition("benchmark/tasks/")
    return f"tasks/{tail}" if sep else f"tasks/{head}"
