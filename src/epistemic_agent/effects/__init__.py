"""What a shell command would do, from its parse: the classifier, its cache and the per-program
option grammars."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .cache import EffectCache as EffectCache
    from .classify import classify as classify_command
    from .model import Effect as Effect
    from .tables import classifier as classifier

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "Effect": "model:Effect",
    "EffectCache": "cache:EffectCache",
    "classifier": "tables:classifier",
    "classify_command": "classify:classify",
}
__all__ = ["Effect", "EffectCache", "classifier", "classify_command"]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
