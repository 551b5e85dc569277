"""What the gate needs to know about the session it guards."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import struct

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..effects import Effect

MIN_REASON = 20


@struct
class GateConfig:
    """What the gate needs to know: the workspace root (absolute) and the reason minimum."""

    workspace: str
    min_reason: int = MIN_REASON
    temp: str = "/tmp"  # the system temp directory: observations may write scratch files there
    classify: Callable[[str], Effect] | None = None  # default: effects.classify
    #: absolute paths no act may change, move or delete, nor any folder that leads to them:
    #: the policy in force and the files it names, the tool's installation, git's hooks and
    #: config, the client's settings (the session's confinement lists them)
    protected: tuple[str, ...] = ()
