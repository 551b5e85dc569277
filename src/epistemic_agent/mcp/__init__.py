"""The MCP server: the four tools behind the gate, for any agent client."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .handshake import PROGRESS_EVERY as PROGRESS_EVERY
    from .server import Gatekeeper as Gatekeeper
    from .serving import serve as serve

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "Gatekeeper": "server:Gatekeeper",
    "PROGRESS_EVERY": "handshake:PROGRESS_EVERY",
    "serve": "serving:serve",
}
__all__ = ["PROGRESS_EVERY", "Gatekeeper", "serve"]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
