"""A session: one call through its named steps (check, decide, record, approve, run, observe,
record the outcome, publish), the collaborators of those steps, and the session's life
(opening, continuing, recovering, closing)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .git_step import CHANGES_ENV as CHANGES_ENV
    from .git_step import HOOK as HOOK
    from .git_step import MARK as MARK
    from .git_step import parse_trailers as parse_trailers
    from .in_force import workspace_policy as workspace_policy
    from .opening import supervisor_for as supervisor_for
    from .provenance import refusal as refusal
    from .results import CallResult as CallResult
    from .results import Settings as Settings
    from .salvage import salvage as salvage_record
    from .session import Session as Session

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "CHANGES_ENV": "git_step:CHANGES_ENV",
    "CallResult": "results:CallResult",
    "HOOK": "git_step:HOOK",
    "MARK": "git_step:MARK",
    "Session": "session:Session",
    "Settings": "results:Settings",
    "parse_trailers": "git_step:parse_trailers",
    "refusal": "provenance:refusal",
    "salvage_record": "salvage:salvage",
    "supervisor_for": "opening:supervisor_for",
    "workspace_policy": "in_force:workspace_policy",
}
__all__ = [
    "CHANGES_ENV",
    "HOOK",
    "MARK",
    "CallResult",
    "Session",
    "Settings",
    "parse_trailers",
    "refusal",
    "salvage_record",
    "supervisor_for",
    "workspace_policy",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
