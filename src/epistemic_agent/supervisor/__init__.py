"""The supervisor: a second model (or a scripted one) that reads a call's declared act and
reason before the call runs, and the supervisors a session can be given by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .model import Review as Review
    from .model import Supervisor as Supervisor
    from .model import make_supervisor as make_supervisor
    from .registry import start_supervisor as start_supervisor

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "Review": "model:Review",
    "Supervisor": "model:Supervisor",
    "make_supervisor": "model:make_supervisor",
    "start_supervisor": "registry:start_supervisor",
}
__all__ = ["Review", "Supervisor", "make_supervisor", "start_supervisor"]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
