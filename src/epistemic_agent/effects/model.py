"""The effect model: the three classes and the `Effect` record (the public API re-exports them
from `effects`). It imports neither the classifier nor the program tables: both import it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import struct

if TYPE_CHECKING:
    from typing import Any

READ_ONLY = "read-only"
MUTATING = "mutating"
UNKNOWN = "unknown"

#: Bumped whenever the tables change what a command is classified as: cached classifications
#: made by an older revision are not reused (effects_cache).
REVISION = 2


@struct
class Effect:
    """What a command would do: its class, the paths it touches, and why."""

    cls: str  # "read-only" | "mutating" | "unknown"
    writes: tuple[str, ...] = ()
    deletes: tuple[str, ...] = ()
    dynamic: bool = False
    reasons: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "class": self.cls,
            "paths": sorted(set(self.writes + self.deletes)),
            "writes": list(self.writes),
            "deletes": list(self.deletes),
            "dynamic": self.dynamic,
            "reasons": list(self.reasons),
        }
