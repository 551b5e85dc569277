"""Seals: the journal's head signed with the operator's SSH key (docs/security.md).

A seal is two files in `.epistemic/seals/`: a small JSON statement (session, line count, the
hash of that line, when, the signer's key fingerprint) and its detached signature, made by
stock `ssh-keygen -Y sign` in the namespace `epistemic`, so that an auditor checks it with
`ssh-keygen -Y verify` and an allowed_signers file, without epistemic.

Here: the statement's format, ssh-keygen in the seals' namespace, and the check of the seals
against the journal and, when asked, against an allowed-signers file. A seal of line N with
hash H holds while line N of the journal still hashes to H: later lines do not undo it, a
rewrite does. Making a seal (`epistemic seal`) is sealing.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import SSH_FINGERPRINT as FINGERPRINT
from ..core import SSH_SIGNATURE_START as SIGNATURE_START
from ..core import (
    SealError,
    field,
    ssh_fingerprint,
    ssh_principals,
    ssh_signed_by,
    ssh_verify,
    struct,
)
from ..core import ssh_keygen as keygen
from ..core import ssh_run_keygen as run_keygen
from .verify import Problem

if TYPE_CHECKING:
    from typing import Any

NAMESPACE = "epistemic"
FORMAT = "epistemic-seal"
VERSION = 1
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
    return ssh_fingerprint(key)


def signed_by(statement: Path, signature: Path) -> tuple[str | None, str]:
    """The fingerprint of the key that made `signature` over `statement`, when the signature
    checks out for its own key (`-Y check-novalidate`), and what ssh-keygen said."""
    return ssh_signed_by(statement, signature, NAMESPACE)


def principals(allowed: Path, signature: Path) -> tuple[list[str], str]:
    """The identities the allowed-signers file gives the signature's key ([] when none)."""
    return ssh_principals(allowed, signature)


def verify_signature(
    allowed: Path, identity: str, statement: Path, signature: Path
) -> tuple[bool, str]:
    """`ssh-keygen -Y verify`: whether `identity` signed `statement`, and what it said."""
    return ssh_verify(allowed, identity, statement, signature, NAMESPACE)


# -- checking the seals ---------------------------------------------------------------------------


INVALID, MISMATCH, UNTRUSTED, NONE = (
    "seal-invalid",
    "seal-mismatch",
    "seal-untrusted",
    "seal-missing",
)


@struct
class SealFile:
    """One statement file (and the signature beside it), read; `problem` if it is not one."""

    name: str
    statement_path: Path
    statement: Statement | None = None
    problem: str | None = None

    @property
    def signature_path(self) -> Path:
        return self.statement_path.with_name(self.statement_path.name + ".sig")


def read_seals(folder: Path) -> list[SealFile]:
    """Every file of the seals folder: statements, and what is neither one nor its signature."""
    if not folder.is_dir():
        return []
    found: list[SealFile] = []
    names = {entry.name for entry in folder.iterdir()}
    for name in sorted(names):
        path = folder / name
        shown = f"seals/{name}"
        if name.startswith(".tmp-"):
            continue  # a seal being written
        if name.endswith(".json.sig") and name[:-4] in names:
            continue
        if not NAME.fullmatch(name) or path.is_symlink() or not path.is_file():
            found.append(SealFile(shown, path, problem="is not a seal statement (seal-*.json)"))
            continue
        try:
            with path.open("rb") as handle:
                parsed = parse_statement(handle.read(64 << 10 | 1))
        except OSError as error:
            parsed = f"cannot be read ({error.strerror})"
        if isinstance(parsed, str):
            found.append(SealFile(shown, path, problem=f"is not a seal: {parsed}"))
        else:
            found.append(SealFile(shown, path, parsed))
    return found


@struct(frozen=False)
class SealVerdicts:
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seals: list[dict[str, Any]] = field(default_factory=list)
    missing: Problem | None = None  # a seal was required and there is none: not tampering


@struct
class Against:
    """What the seals are judged against: the journal as verified, and whom to trust."""

    session: str | None
    hashes: dict[int, str]  # the hash of each sealed line that verifies
    total: int  # the journal's lines
    good: int  # lines 1..good verify
    allowed: Path | None = None
    identity: str | None = None
    required: bool = False  # a journal without a seal does not pass


def judge_seals(seals: list[SealFile], against: Against) -> SealVerdicts:
    verdicts = SealVerdicts()
    for seal in seals:
        summary: dict[str, Any] = {"path": seal.name, "signature": "bad", "identity": None}
        problem = _judge(seal, against, summary, verdicts.notes)
        if seal.statement is not None:
            summary.update(
                lines=seal.statement.lines,
                head=seal.statement.head,
                signer=seal.statement.signer,
            )
        verdicts.seals.append(summary)
        if problem is not None:
            verdicts.problems.append(problem)
    if not seals and against.required:
        verdicts.missing = Problem(
            NONE,
            "no seal: --allowed-signers asks for a signed head, and the session's seals/ folder "
            "holds none (never sealed, or the seals were deleted); nothing else says the "
            "journal was changed (--seal-optional checks it without a seal)",
        )
    elif not seals and against.allowed is not None:
        verdicts.notes.append(
            "no seal: the session's seals/ folder holds none (never sealed, or the seals were "
            "deleted), and --seal-optional lets that pass: no signature vouches for the head"
        )
    return verdicts


def _judge(
    seal: SealFile, against: Against, summary: dict[str, Any], notes: list[str]
) -> Problem | None:
    statement = seal.statement
    if statement is None:
        return Problem(INVALID, f"{seal.name} {seal.problem}")
    bad = _signature_file(seal.signature_path)
    if bad:
        return Problem(INVALID, f"{seal.name}: its signature {bad}", statement.lines)
    if against.session is not None and statement.session != against.session:
        return Problem(
            MISMATCH,
            f"{seal.name} seals session {statement.session}, the journal is session "
            f"{against.session}",
        )
    if statement.lines > against.total:
        return Problem(
            MISMATCH,
            f"{seal.name} seals line {statement.lines}, the journal has only {against.total} "
            "line(s): cut, or rewritten, after it was sealed",
            statement.lines,
        )
    if statement.lines > against.good:
        notes.append(f"{seal.name} (line {statement.lines}) cannot be checked: the chain breaks")
        summary["signature"] = "unchecked"
        return None
    found = against.hashes.get(statement.lines)
    if found != statement.head:
        return Problem(
            MISMATCH,
            f"{seal.name}: line {statement.lines} hashes to {found}, the seal signed "
            f"{statement.head}: the journal was rewritten after it was sealed",
            statement.lines,
        )
    return _signature(seal, statement, against, summary, notes)


def _signature_file(path: Path) -> str | None:
    try:
        if path.is_symlink() or not path.is_file():
            return f"{path.name} is missing (or not a file)"
        with path.open("rb") as handle:
            data = handle.read(MAX_SIGNATURE + 1)
    except OSError as error:
        return f"{path.name} cannot be read ({error.strerror})"
    if len(data) > MAX_SIGNATURE or not data.startswith(SIGNATURE_START):
        return f"{path.name} is not an SSH signature"
    return None


def _signature(
    seal: SealFile,
    statement: Statement,
    against: Against,
    summary: dict[str, Any],
    notes: list[str],
) -> Problem | None:
    where = f"{seal.name} (line {statement.lines}, head {statement.head[:16]}…)"
    try:
        signer, said = signed_by(seal.statement_path, seal.signature_path)
    except SealError as error:
        notes.append(f"{where}: signature not checked: {error}")
        summary["signature"] = "unchecked"
        return None
    if signer is None:
        return Problem(
            INVALID,
            f"{seal.name}: the signature does not match the statement ({said})",
            statement.lines,
        )
    if signer != statement.signer:
        return Problem(
            INVALID,
            f"{seal.name}: signed by {signer}, but the statement names {statement.signer}",
            statement.lines,
        )
    if against.allowed is None:
        summary["signature"] = "valid"
        notes.append(
            f"{where}: signed by {signer}; the signature checks out, but not who signed "
            "(pass --allowed-signers FILE to check the signer)"
        )
        return None
    return _trusted(seal, statement, against, summary, notes)


def _trusted(
    seal: SealFile,
    statement: Statement,
    against: Against,
    summary: dict[str, Any],
    notes: list[str],
) -> Problem | None:
    allowed = against.allowed
    assert allowed is not None
    if against.identity is not None:
        identities, said = [against.identity], ""
    else:
        identities, said = principals(allowed, seal.signature_path)
    if not identities:
        return Problem(
            UNTRUSTED,
            f"{seal.name}: signed by {statement.signer}, a key {allowed} does not list for "
            f"namespace epistemic: an unknown signer{f' ({said})' if said else ''}",
            statement.lines,
        )
    for identity in identities:
        good, said = verify_signature(allowed, identity, seal.statement_path, seal.signature_path)
        if good:
            summary.update(signature="good", identity=identity)
            notes.append(
                f"{seal.name} (line {statement.lines}, head {statement.head[:16]}…): a good "
                f"signature by {identity} ({statement.signer}), allowed by {allowed}"
            )
            return None
    return Problem(
        UNTRUSTED,
        f"{seal.name}: not a good signature by {', '.join(identities)} under {allowed} ({said})",
        statement.lines,
    )
