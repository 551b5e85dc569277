"""Approvals: the request a policy `ask` makes, the channels a human answers on (the terminal,
files), the signed answers, and which session a pending request belongs to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .answer import ABSENT as ABSENT
    from .answer import Given as Given
    from .answer import give as give
    from .answer import verdict as verdict
    from .asking import DEFAULT_APPROVAL_TIMEOUT as DEFAULT_APPROVAL_TIMEOUT
    from .asking import Asking as Asking
    from .request import Answer as Answer
    from .request import Approver as Approver
    from .sessions import Place as Place
    from .sessions import folder_for as folder_for
    from .sessions import places as places
    from .sessions import waiting as waiting
    from .signers import Signers as Signers

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "ABSENT": "answer:ABSENT",
    "Answer": "request:Answer",
    "Approver": "request:Approver",
    "Asking": "asking:Asking",
    "DEFAULT_APPROVAL_TIMEOUT": "asking:DEFAULT_APPROVAL_TIMEOUT",
    "Given": "answer:Given",
    "Place": "sessions:Place",
    "Signers": "signers:Signers",
    "folder_for": "sessions:folder_for",
    "give": "answer:give",
    "places": "sessions:places",
    "verdict": "answer:verdict",
    "waiting": "sessions:waiting",
}
__all__ = [
    "ABSENT",
    "DEFAULT_APPROVAL_TIMEOUT",
    "Answer",
    "Approver",
    "Asking",
    "Given",
    "Place",
    "Signers",
    "folder_for",
    "give",
    "places",
    "verdict",
    "waiting",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
