"""`epistemic seal`: sign the journal's head with the operator's SSH key (docs/security.md).

The key: `--key FILE` (a private key, or a public key whose private half is in ssh-agent);
else the first key ssh-agent holds when `SSH_AUTH_SOCK` is set; else `~/.ssh/id_ed25519`.
The record must verify first (chain, anchor, evidence, earlier seals): a seal vouches for it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import EpistemicError, UsageError, now, ssh_choose_key, ssh_sign, struct
from .log import decode
from .record_check import check_record, record_folder
from .seal import NAMESPACE, SealError, Statement, fingerprint, signed_by

if TYPE_CHECKING:
    from .verify import Verification


class NotSealed(EpistemicError):
    """The record does not verify: nothing was sealed (`epistemic seal` exits 1)."""

    exit_status = 1

    def __init__(self, verification: Verification) -> None:
        super().__init__(verification.problem)
        self.verification = verification


@struct
class Sealed:
    statement: Statement
    path: Path  # the statement; the signature is beside it, `.sig` appended
    key: str  # which key signed: a file, or "ssh-agent"


def seal(journal: Path, key: str | None) -> Sealed:
    """Check the record, then write and sign a statement of its head under `seals/`."""
    record = record_folder(journal)
    if record is None:
        raise UsageError(f"{journal}: not in a record folder (.epistemic): nothing to seal beside")
    checked = check_record(journal, record / "head.json")
    if checked.status != "intact":
        raise NotSealed(checked)
    if checked.lines == 0:
        raise UsageError(f"{journal} is empty: nothing to seal")
    with tempfile.TemporaryDirectory(prefix="epistemic-seal-") as scratch:
        chosen, label = choose_key(key, Path(scratch))
        signer = fingerprint(chosen)
        statement = Statement(_session(journal), checked.lines, checked.head, _now(), signer)
        path = _write_signed(record / "seals", statement, chosen)
    return Sealed(statement, path, label)


def choose_key(given: str | None, scratch: Path) -> tuple[Path, str]:
    """The key file to pass to `ssh-keygen -Y sign -f`, and how to name it."""
    try:
        return ssh_choose_key(given, scratch)
    except SealError as error:
        raise UsageError(str(error)) from None


def _write_signed(folder: Path, statement: Statement, key: Path) -> Path:
    """Sign beside the final name, check the signature, then move both into place."""
    folder.mkdir(parents=True, exist_ok=True)
    temp = folder / f".tmp-{os.urandom(6).hex()}.json"
    signature = temp.with_name(temp.name + ".sig")
    try:
        temp.write_bytes(statement.encode())
        ssh_sign(temp, key, NAMESPACE)
        signer, said = signed_by(temp, signature)
        if signer != statement.signer:
            raise SealError(f"the signature made with {key} does not check out ({said})")
        final = _free_name(folder, statement)
        os.rename(signature, final.with_name(final.name + ".sig"))
        os.rename(temp, final)
    finally:
        temp.unlink(missing_ok=True)
        signature.unlink(missing_ok=True)
    return final


def _free_name(folder: Path, statement: Statement) -> Path:
    stamp = statement.sealed.replace("-", "").replace(":", "").split(".")[0] + "Z"
    for suffix in ("", *(f"-{n}" for n in range(2, 1000))):
        path = folder / f"seal-{statement.lines:06d}-{stamp}{suffix}.json"
        if not path.exists():
            return path
    raise FileExistsError(f"{folder}: too many seals this second")


def _session(journal: Path) -> str:
    with journal.open("rb") as handle:
        header = decode(handle.readline().rstrip(b"\n")) or {}
    session = header.get("session") if header.get("kind") == "session" else None
    if not isinstance(session, str):
        raise UsageError(f"{journal}: line 1 is not a session header: nothing to seal")
    return session


def _now() -> str:
    return now()
