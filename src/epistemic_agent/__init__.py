"""epistemic-agent: every tool call says what kind of act it is and why."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core import __version__

if TYPE_CHECKING:
    from typing import Any

    from .session import CallResult, Session, Settings

__all__ = ["CallResult", "Session", "Settings", "__version__"]


def __getattr__(name: str) -> Any:
    """Import the session machinery only when it is used (keeps `epistemic` start-up fast)."""
    if name in ("CallResult", "Session", "Settings"):
        from . import session

        return getattr(session, name)
    raise AttributeError(name)
