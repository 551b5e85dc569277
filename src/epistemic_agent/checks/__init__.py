"""Declared versus done, after the fact: the consistency flags and lint."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .consistency import Others as Others
    from .consistency import flags as consistency_flags
    from .consistency import precheck as consistency_precheck
    from .lint import lint as lint_session

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "Others": "consistency:Others",
    "consistency_flags": "consistency:flags",
    "consistency_precheck": "consistency:precheck",
    "lint_session": "lint:lint",
}
__all__ = ["Others", "consistency_flags", "consistency_precheck", "lint_session"]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
