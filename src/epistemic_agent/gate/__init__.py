"""A call in, a verdict out: the pure checks of a declaration, the policy's decision and a human's
approval."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .check import MIN_REASON as MIN_REASON
    from .check import RULES as RULES
    from .check import check as check_call
    from .config import GateConfig as GateConfig
    from .signing import Signed as Signed
    from .signing import check as check_signature
    from .signing import sign as sign_statement
    from .statement import Statement as Statement
    from .statement import parse as parse
    from .verdicts import Call as Call
    from .verdicts import Rejected as Rejected

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "Call": "verdicts:Call",
    "GateConfig": "config:GateConfig",
    "MIN_REASON": "check:MIN_REASON",
    "RULES": "check:RULES",
    "Rejected": "verdicts:Rejected",
    "Signed": "signing:Signed",
    "Statement": "statement:Statement",
    "check_call": "check:check",
    "check_signature": "signing:check",
    "parse": "statement:parse",
    "sign_statement": "signing:sign",
}
__all__ = [
    "MIN_REASON",
    "RULES",
    "Call",
    "GateConfig",
    "Rejected",
    "Signed",
    "Statement",
    "check_call",
    "check_signature",
    "parse",
    "sign_statement",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
