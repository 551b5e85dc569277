"""Classifications remembered per workspace, so a one-shot `epistemic exec` of a command seen
before does not load the shell parser (tree-sitter-bash costs about 15 ms to import).

A classification depends only on the command text and on the classifier, so entries are keyed
by both: a new version of epistemic-agent, or a new revision of its tables
(`effects_model.REVISION`), starts a new cache. The file is derived data: safe
to delete, never evidence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import __version__, atomic_write
from .model import REVISION, Effect
from .tables import classifier

LIMIT = 2000  # entries kept; the oldest go first


if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class EffectCache:
    """`classify`, remembered in one small JSON file."""

    def __init__(self, path: Path, keep: Callable[[str], bool] | None = None) -> None:
        self.path = path
        self.keep = keep  # which commands may be written down (not those holding a secret)
        self._entries: dict[str, Any] | None = None
        self._effects: dict[str, Effect] = {}  # this process's classifications, as objects
        self._dirty = False

    def classify(self, command: str) -> Effect:
        known = self._effects.get(command)
        if known is not None:
            return known
        entries = self._load()
        found = entries.get(command)
        if isinstance(found, dict):
            try:
                known = self._effects[command] = _effect(found)
                return known
            except (KeyError, TypeError, ValueError):
                pass
        effect = self._effects[command] = classifier()(command)
        if self.keep is not None and not self.keep(command):
            return effect
        entries.pop(command, None)
        entries[command] = effect.to_json()
        self._dirty = True
        return effect

    def save(self) -> None:
        if not self._dirty or self._entries is None:
            return
        kept = dict(list(self._entries.items())[-LIMIT:])
        data = {"version": __version__, "revision": REVISION, "entries": kept}
        atomic_write(self.path, json.dumps(data).encode("ascii"))
        self._dirty = False

    def _load(self) -> dict[str, Any]:
        if self._entries is None:
            try:
                data = json.loads(self.path.read_bytes())
                same = data.get("version") == __version__ and data.get("revision") == REVISION
                entries = data["entries"] if same else {}
                self._entries = entries if isinstance(entries, dict) else {}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                self._entries = {}
        return self._entries


def _effect(data: dict[str, Any]) -> Effect:
    return Effect(
        str(data["class"]),
        tuple(str(p) for p in data["writes"]),
        tuple(str(p) for p in data["deletes"]),
        bool(data["dynamic"]),
        tuple(str(r) for r in data["reasons"]),
    )
