"""Checking the seals in `.epistemic/seals/` against the journal and, when asked, against an
allowed-signers file (docs/security.md). A seal of line N with hash H holds while line N of
the journal still hashes to H: later lines do not undo it, a rewrite does."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core.structs import field, struct
from .seal import (
    MAX_SIGNATURE,
    NAME,
    SIGNATURE_START,
    SealError,
    Statement,
    parse_statement,
    principals,
    signed_by,
    verify_signature,
)
from .verify import Problem

if TYPE_CHECKING:
    from typing import Any

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
