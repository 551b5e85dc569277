"""Signed approvals: a human's answer, signed with their SSH key, checked before anything runs.

The statement (statement.py) is signed with stock `ssh-keygen -Y sign -n epistemic-approval`.
The session checks it against the policy's allowed_signers file (OpenSSH's format): the
signer's identity is the principal that file gives the key, never a name the answerer merely
claims. The approval record keeps the statement and the signature, so an auditor re-checks
every approval with `ssh-keygen -Y verify` and the same allowed_signers file, without
epistemic (docs/policy.md).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..core import (
    SSH_SIGNATURE_START,
    SealError,
    ssh_choose_key,
    ssh_principals,
    ssh_sign,
    ssh_signed_by,
    ssh_verify,
    struct,
)
from .statement import NAMESPACE, Statement

MAX_SIGNATURE = 16 << 10


@struct
class Signed:
    """A signature over a statement, checked: who signed it (by the allowed signers), with
    which key. `problem` says why it does not count (then nothing else is set)."""

    problem: str | None = None
    signer: str | None = None
    key: str | None = None


def sign(statement: Statement, key: str | None) -> tuple[str, str]:
    """Sign with the operator's key (`key`, else ssh-agent, else ~/.ssh/id_ed25519): the
    armored signature and how the key was found. SealError when it cannot."""
    with tempfile.TemporaryDirectory(prefix="epistemic-approval-") as scratch:
        folder = Path(scratch)
        chosen, label = ssh_choose_key(key, folder)
        message = folder / "statement.txt"
        message.write_text(statement.text(), encoding="ascii")
        signature = ssh_sign(message, chosen, NAMESPACE)
        return signature.read_text(encoding="ascii"), label


def check(statement: str, signature: object, allowed: Path, claimed: str | None) -> Signed:
    """Whether `signature` is a good signature of `statement` by a key the allowed-signers
    file trusts (and, when the answerer named themselves, by that principal)."""
    if not isinstance(signature, str) or len(signature) > MAX_SIGNATURE:
        return Signed("no signature, or one too long")
    if not signature.encode("ascii", "replace").startswith(SSH_SIGNATURE_START):
        return Signed("the signature is not an SSH signature")
    if not allowed.is_file():
        return Signed(f"the allowed signers file {allowed} is missing")
    try:
        return _check(statement, signature, allowed, claimed)
    except SealError as error:
        return Signed(str(error))


def _check(statement: str, signature: str, allowed: Path, claimed: str | None) -> Signed:
    with tempfile.TemporaryDirectory(prefix="epistemic-approval-") as scratch:
        message, sig = Path(scratch) / "statement.txt", Path(scratch) / "statement.txt.sig"
        message.write_text(statement, encoding="utf-8")
        sig.write_text(signature, encoding="ascii", errors="replace")
        key, said = ssh_signed_by(message, sig, NAMESPACE)
        if key is None:
            return Signed(f"the signature does not check out ({said or 'ssh-keygen refused it'})")
        found, said = ssh_principals(allowed, sig)
        if not found:
            return Signed(f"key {key} is not in {allowed.name}: an unknown signer")
        principal = claimed if claimed in found else (None if claimed else found[0])
        if principal is None:
            return Signed(f"key {key} belongs to {', '.join(found)}, not to {claimed!r}")
        good, said = ssh_verify(allowed, principal, message, sig, NAMESPACE)
        if not good:
            return Signed(f"ssh-keygen -Y verify refused it: {said}")
        return Signed(None, principal, key)
