"""Checking the evidence folder against the journal (docs/journal-format.md, "Evidence").

Every blob a record references must be there, a regular file, as many bytes as the record says
it kept, and hash to its name. Every file in the folder must be a blob a record references,
with two exceptions that are not tampering: the temporary files of a write cut short
(`.tmp-*`), and at most IN_FLIGHT_BLOBS unreferenced blobs per call without an outcome (a call
still running, or killed after storing its output and before journaling its outcome).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import field, struct
from .log import decode
from .verify import Problem

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

HEX64 = re.compile(r"[0-9a-f]{64}")
HEX2 = re.compile(r"[0-9a-f]{2}")
BLOCK = 1 << 20
MISSING, ALTERED, EXTRA = "evidence-missing", "evidence-altered", "evidence-extra"
#: What a call stores before its outcome is journaled: stdout and stderr, its diff, and the
#: before and after of each path it changed (versions.MOST_PATHS of them at most).
IN_FLIGHT_BLOBS = 3 + 2 * 200


@struct
class Ref:
    """One evidence ref as a record holds it, and where: `stdout of call 3, line 7`."""

    sha256: str
    size: object
    kept: object
    where: str
    line: int


@struct(frozen=False)
class Listing:
    """What the evidence folder held when it was listed (before the journal was read)."""

    blobs: dict[str, Path] = field(default_factory=dict)  # well-named regular files
    odd: dict[str, str] = field(default_factory=dict)  # relative name -> what it is instead
    temps: list[str] = field(default_factory=list)
    exists: bool = False


def list_store(store: Path) -> Listing:
    """Every entry of the folder, sorted into blobs, temporary files and the rest."""
    listing = Listing()
    try:
        top = sorted(os.scandir(store), key=_name)
    except FileNotFoundError:
        return listing
    except NotADirectoryError:
        listing.odd["."] = "not a folder"
        return listing
    listing.exists = True
    for entry in top:
        if not HEX2.fullmatch(entry.name) or not entry.is_dir(follow_symlinks=False):
            listing.odd[entry.name] = _what(entry, "not a blob folder (two hex digits)")
            continue
        for item in sorted(os.scandir(entry.path), key=_name):
            name = f"{entry.name}/{item.name}"
            regular = item.is_file(follow_symlinks=False)
            if item.name.startswith(".tmp-") and regular:
                listing.temps.append(name)
            elif HEX64.fullmatch(item.name) and item.name[:2] == entry.name and regular:
                listing.blobs[item.name] = Path(item.path)
            else:
                listing.odd[name] = _what(item, "not named by its SHA-256 in its folder")
    return listing


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _what(entry: os.DirEntry[str], otherwise: str) -> str:
    if entry.is_symlink():
        return "a symbolic link"
    if entry.is_dir(follow_symlinks=False):
        return "a folder where a blob should be" if HEX64.fullmatch(entry.name) else otherwise
    return otherwise


def refs_of(record: dict[str, Any], line: int) -> Iterator[Ref]:
    """The evidence refs of one record, each with a label saying whose it is."""
    seq = record.get("seq")
    whose = f" of call {seq}" if isinstance(seq, int) and not isinstance(seq, bool) else ""
    for name, ref in _refs_in(record, "", 0):
        label = name.rsplit(".", 1)[-1] or "evidence"
        yield Ref(
            ref["sha256"], ref.get("bytes"), ref.get("kept"), f"{label}{whose}, line {line}", line
        )


def _refs_in(value: object, name: str, depth: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """An evidence ref is an object with a 64-hex `sha256` and a `bytes` field (export.py
    finds them the same way, so refs in fields added later are checked too)."""
    if depth > 8:
        return
    if isinstance(value, dict):
        digest = value.get("sha256")
        if isinstance(digest, str) and HEX64.fullmatch(digest) and "bytes" in value:
            yield name, value
            return
        for key, item in value.items():
            yield from _refs_in(item, str(key), depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _refs_in(item, name, depth + 1)


@struct(frozen=False)
class EvidenceCheck:
    """What the check found: problems (each blob its own), notes, and counts."""

    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    referenced: int = 0
    verified: int = 0
    excused: int = 0

    def to_json(self) -> dict[str, Any]:
        counts = {check: 0 for check in (MISSING, ALTERED, EXTRA)}
        for problem in self.problems:
            counts[problem.check] += 1
        return {
            "checked": True,
            "referenced": self.referenced,
            "verified": self.verified,
            "missing": counts[MISSING],
            "altered": counts[ALTERED],
            "extra": counts[EXTRA],
        }


def check_evidence(refs: list[Ref], listing: Listing, in_flight: int) -> EvidenceCheck:
    """Each referenced blob (in journal order), then what nothing references."""
    result = EvidenceCheck()
    seen: dict[str, Ref] = {}
    for ref in refs:
        if ref.sha256 in seen:
            if (ref.size, ref.kept) != (seen[ref.sha256].size, seen[ref.sha256].kept):
                result.problems.append(_inconsistent(ref, seen[ref.sha256]))
            continue
        seen[ref.sha256] = ref
        problem = _check_ref(ref, listing)
        if problem is None:
            result.verified += 1
        else:
            result.problems.append(problem)
    result.referenced = len(seen)
    _unreferenced(listing, seen, in_flight, result)
    return result


def _check_ref(ref: Ref, listing: Listing) -> Problem | None:
    name = f"evidence {ref.sha256[:2]}/{ref.sha256} ({ref.where})"
    path = listing.blobs.get(ref.sha256)
    if path is None:
        odd = listing.odd.get(f"{ref.sha256[:2]}/{ref.sha256}")
        if odd is not None:
            return Problem(ALTERED, f"{name} is {odd}, not a file", ref.line)
        return Problem(MISSING, f"{name} is missing", ref.line)
    kept = ref.kept if ref.kept is not None else ref.size
    if not _count(kept) or not _count(ref.size) or kept > ref.size:  # type: ignore[operator]
        return Problem(
            ALTERED,
            f"{name}: the record's sizes do not add up (bytes {ref.size!r}, kept {ref.kept!r})",
            ref.line,
        )
    try:
        digest, size = hash_file(path)
    except OSError as error:
        return Problem(ALTERED, f"{name} cannot be read ({error.strerror})", ref.line)
    if size != kept:
        return Problem(
            ALTERED, f"{name} is {size} bytes, the record says {kept} were kept", ref.line
        )
    if digest != ref.sha256:
        return Problem(ALTERED, f"{name} was changed: its content hashes to {digest}", ref.line)
    links = _links(path)
    if links > 1:
        return Problem(
            ALTERED,
            f"{name} has {links} hard links: it can be changed through another name",
            ref.line,
        )
    return None


def _links(path: Path) -> int:
    try:
        return os.lstat(path).st_nlink
    except OSError:
        return 1


def _inconsistent(ref: Ref, first: Ref) -> Problem:
    return Problem(
        ALTERED,
        f"evidence {ref.sha256[:2]}/{ref.sha256} ({ref.where}): its sizes (bytes {ref.size!r}, "
        f"kept {ref.kept!r}) differ from those recorded for it before ({first.where})",
        ref.line,
    )


def _unreferenced(
    listing: Listing, seen: dict[str, Ref], in_flight: int, result: EvidenceCheck
) -> None:
    """Files no record references: extra, unless a call still running can explain them."""
    strays = [digest for digest in listing.blobs if digest not in seen]
    excusable = len(strays) <= IN_FLIGHT_BLOBS * in_flight
    for digest in strays:
        try:
            found = hash_file(listing.blobs[digest])[0]
        except OSError:
            found = ""
        if excusable and found == digest:
            result.excused += 1
            continue
        content = "" if found == digest else ", and its content does not hash to its name"
        result.problems.append(
            Problem(
                EXTRA,
                f"evidence {digest[:2]}/{digest} is referenced by no record{content}: added "
                "(or left by a session killed between storing it and journaling it)",
            )
        )
    for name, what in listing.odd.items():
        if name[-64:] not in seen:
            result.problems.append(
                Problem(EXTRA, f"evidence/{name} is {what}: the evidence folder holds only blobs")
            )
    if result.excused:
        result.notes.append(
            f"{result.excused} evidence blob(s) referenced by no record yet: the output of a call "
            "without an outcome (still running, or killed before its outcome was journaled)"
        )
    if listing.temps:
        result.notes.append(
            f"{len(listing.temps)} temporary file(s) in the evidence folder (a write cut short, "
            f"or one in progress): evidence/{listing.temps[0]}"
        )


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def hash_file(path: Path) -> tuple[str, int]:
    """SHA-256 and size of a regular file, read without following a symbolic link."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    digest, size = hashlib.sha256(), 0
    with os.fdopen(fd, "rb") as handle:
        while block := handle.read(BLOCK):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def stored_unreferenced(
    journal: Path, store: Path, pending: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The blobs of `store` that no record of `journal` references and that hash to their
    names, as refs: what a killed session stored for a call before it journaled the outcome
    (a recovered outcome keeps them, so that a crash never reads as an added blob). `pending`:
    records about to be appended, whose refs count as referenced."""
    listing = list_store(store)
    if not listing.blobs:
        return []
    seen = {ref.sha256 for record in pending for ref in refs_of(record, 0)}
    try:
        with journal.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                record = decode(line.rstrip(b"\n"))
                if record is not None:
                    seen.update(ref.sha256 for ref in refs_of(record, number))
    except OSError:
        return []
    found = []
    for digest in sorted(set(listing.blobs) - seen):
        try:
            actual, size = hash_file(listing.blobs[digest])
        except OSError:
            continue
        if actual == digest:
            found.append({"sha256": digest, "bytes": size})
    return found
