"""Seals: the journal's head signed with the operator's SSH key (docs/security.md).

A seal is two files in `.epistemic/seals/`: a small JSON statement (session, line count, the
hash of that line, when, the signer's key fingerprint) and its detached signature, made by
stock `ssh-keygen -Y sign` in the namespace `epistemic`, so that an auditor checks it with
`ssh-keygen -Y verify` and an allowed_signers file, without epistemic.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import sshsig
from ..core.sshsig import FINGERPRINT, SIGNATURE_START, SealError, keygen, run_keygen
from ..core.structs import struct

if TYPE_CHECKING:
    from typing import Any

NAMESPACE = "epistemic"
FORMAT = "epistemic-seal"
VERSION = 1
SEALS_DIR = "seals"
MAX_STATEMENT = 64 << 10
MAX_SIGNATURE = 64 << 10
HEX64 = re.compile(r"[0-9a-f]{64}")
NAME = re.compile(r"seal-[0-9A-Za-z-]{1,80}\.json")
__all__ = ["FINGERPRINT", "SIGNATURE_START", "SealError", "keygen", "run_keygen"]


@struct
class Statement:
    """What a seal says: this session's journal had `lines` lines, the last hashing to `head`."""

    session: str
    lines: int
    head: str
    sealed: str
    signer: str

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "namespace": NAMESPACE,
            "session": self.session,
            "journal": ".epistemic/journal.jsonl",
            "lines": self.lines,
            "head": self.head,
            "sealed": self.sealed,
            "signer": self.signer,
        }

    def encode(self) -> bytes:
        return (json.dumps(self.to_json(), indent=1) + "\n").encode("ascii")


def parse_statement(data: bytes) -> Statement | str:
    """The statement, or why these bytes are not one."""
    if len(data) > MAX_STATEMENT:
        return f"larger than {MAX_STATEMENT} bytes"
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return "not JSON"
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        return f"not a seal statement (its format is not {FORMAT!r})"
    if value.get("version") != VERSION or value.get("namespace") != NAMESPACE:
        return f"version {value.get('version')!r}, namespace {value.get('namespace')!r}: unknown"
    lines, head, signer = value.get("lines"), value.get("head"), value.get("signer")
    if type(lines) is not int or lines < 1:
        return "`lines` is not a positive integer"
    if not isinstance(head, str) or not HEX64.fullmatch(head):
        return "`head` is not a SHA-256 hash"
    if not isinstance(signer, str) or not FINGERPRINT.fullmatch(signer):
        return "`signer` is not an SSH key fingerprint (SHA256:...)"
    session, sealed = value.get("session"), value.get("sealed")
    if not isinstance(session, str) or not isinstance(sealed, str):
        return "`session` or `sealed` is not a string"
    return Statement(session, lines, head, sealed, signer)


# -- ssh-keygen, in the seals' namespace (sshsig.py does the work) ----------------------------


def fingerprint(key: Path) -> str:
    """The SHA256 fingerprint of a key file (private or public)."""
    return sshsig.fingerprint(key)


def signed_by(statement: Path, signature: Path) -> tuple[str | None, str]:
    """The fingerprint of the key that made `signature` over `statement`, when the signature
    checks out for its own key (`-Y check-novalidate`), and what ssh-keygen said."""
    return sshsig.signed_by(statement, signature, NAMESPACE)


def principals(allowed: Path, signature: Path) -> tuple[list[str], str]:
    """The identities the allowed-signers file gives the signature's key ([] when none)."""
    return sshsig.principals(allowed, signature)


def verify_signature(
    allowed: Path, identity: str, statement: Path, signature: Path
) -> tuple[bool, str]:
    """`ssh-keygen -Y verify`: whether `identity` signed `statement`, and what it said."""
    return sshsig.verify(allowed, identity, statement, signature, NAMESPACE)
