"""What the session has done to its files so far: the memory that revert and cleanup rules need.

Folded from the journal like the report (and saved in the same checkpoint): the paths earlier
change-states touched (statically declared, edited by file tools, or observed), and the paths
the session created.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from ..core import field, struct
from .log import Record

if TYPE_CHECKING:
    from typing import Any


def inside(path: str, workspace: str) -> str | None:
    """A command's path as workspace-relative (commands run in the workspace); None if outside."""
    if path.startswith("~"):
        return None
    full = posixpath.normpath(posixpath.join(workspace, path))
    root = posixpath.normpath(workspace)
    if full == root:
        return "."
    if full.startswith(root.rstrip("/") + "/"):
        return full[len(root.rstrip("/")) + 1 :]
    return None


def covers(known: set[str], path: str) -> bool:
    """Whether `path` is a known path, lies under one, or holds one (a directory reverted)."""
    if path == ".":
        return bool(known)
    if path in known:
        return True
    parts = path.split("/")
    if any("/".join(parts[:i]) in known for i in range(1, len(parts))):
        return True
    prefix = path + "/"
    return any(item.startswith(prefix) for item in known)


def _declaration(record: Record) -> dict[str, Any]:
    """What recovery needs of a call without an outcome: who declared it, when, and whether a
    human was asked."""
    pid, policy = record.get("pid"), record.get("policy")
    asked = isinstance(policy, dict) and policy.get("decision") == "ask"
    return {
        "pid": pid if isinstance(pid, int) else None,
        "t": str(record.get("t", "")),
        "asked": asked,
        "answered": False,
    }


def _paths(data: dict[str, Any], key: str) -> list[str]:
    """A list of paths in a record; anything else there (a foreign writer's) is no path."""
    value = data.get(key)
    return [str(p) for p in value] if isinstance(value, list) else []


@struct(frozen=False)
class History:
    workspace: str
    touched: set[str] = field(default_factory=set)
    created: set[str] = field(default_factory=set)
    pending: dict[int, str] = field(default_factory=dict)  # seq -> act, until the outcome
    declared: dict[int, dict[str, Any]] = field(default_factory=dict)  # seq -> who, when: recovery

    def fold(self, record: Record) -> None:
        kind, seq = record.get("kind"), record.get("seq")
        if kind == "call" and isinstance(seq, int):
            act = str(record.get("act"))
            self.pending[seq] = act
            self.declared[seq] = _declaration(record)
            if act == "change-state":
                self.touched.update(self.declared_paths(record))
        elif kind == "approval" and isinstance(seq, int) and seq in self.declared:
            self.declared[seq]["answered"] = True
        elif kind == "outcome" and isinstance(seq, int):
            self.declared.pop(seq, None)
            act = self.pending.pop(seq, "")
            observed = record.get("observed")
            if isinstance(observed, dict):
                self._fold_observed(act, observed)

    def declared_paths(self, record: Record) -> list[str]:
        """Workspace paths a call record says it writes or deletes."""
        if isinstance(record.get("path"), str):
            return [record["path"]]
        effect = record.get("effect")
        if not isinstance(effect, dict):
            return []
        paths = [*_paths(effect, "writes"), *_paths(effect, "deletes")]
        found = (inside(p, self.workspace) for p in paths)
        return [p for p in found if p is not None]

    def _fold_observed(self, act: str, observed: dict[str, Any]) -> None:
        self.created.update(_paths(observed, "created"))
        if act == "change-state":
            for key in ("created", "modified", "deleted"):
                self.touched.update(_paths(observed, key))

    def to_json(self) -> dict[str, Any]:
        return {
            "touched": sorted(self.touched),
            "created": sorted(self.created),
            "pending": {str(k): v for k, v in self.pending.items()},
            "declared": {str(k): v for k, v in self.declared.items()},
        }

    @classmethod
    def from_json(cls, workspace: str, data: dict[str, Any]) -> History:
        return cls(
            workspace,
            set(data.get("touched", [])),
            set(data.get("created", [])),
            {int(k): str(v) for k, v in data.get("pending", {}).items()},
            {int(k): dict(v) for k, v in data.get("declared", {}).items()},
        )
