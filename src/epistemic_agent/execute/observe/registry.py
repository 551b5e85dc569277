"""Which observer watches a call: observers by name, and the best one this platform allows.

An observer satisfies the `Observer` protocol of base.py (`start()` before the
command, `finish()` after it, returning the `Changes`). Each is named here by the import path
of its class, as mini-swe-agent names its environments, so a new one is one line and no
module is imported until it is chosen.
"""

from __future__ import annotations

from pathlib import Path

from ...core import load
from . import fanotify_kernel
from .base import DEFAULT_IGNORE, Observer, WorkspaceObserver

OBSERVERS: dict[str, str] = {
    "fanotify": "epistemic_agent.execute.observe.fanotify.FanotifyObserver",
    "snapshot": "epistemic_agent.execute.observe.base.SnapshotObserver",
    "ctime": "epistemic_agent.execute.observe.base.CtimeObserver",
}


def observer_class(name: str) -> type[WorkspaceObserver]:
    """The observer class registered under `name`; KeyError names the known ones."""
    found: type[WorkspaceObserver] = load(OBSERVERS, name, "observer")
    return found


def best_observer(workspace: Path, ignore: tuple[str, ...] = DEFAULT_IGNORE) -> Observer:
    """fanotify when this process may use it on the workspace's file system, else snapshot."""
    return observer_class(_fanotify_or(Path(workspace), "snapshot"))(workspace, ignore)


def outside_observer(folder: Path) -> Observer:
    """How to watch a granted folder outside the workspace: fanotify where it can, else ctime."""
    return observer_class(_fanotify_or(Path(folder), "ctime"))(folder, ())


def _fanotify_or(folder: Path, fallback: str) -> str:
    return "fanotify" if fanotify_kernel.available(folder) else fallback
