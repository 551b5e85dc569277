"""Audit bundles: one zip an auditor attaches to a change request (docs/audit-bundle.md).

`export` packs a session's record: the journal (a consistent snapshot) and its head anchor,
every evidence blob it references, RATIONALE.md and its pages, the HTML report, the policy
files in force, and `manifest.json` (each file's size and SHA-256, the journal's verification,
notes). cli/bundle.py checks one (`epistemic verify BUNDLE.zip`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from ...core import UsageError, __version__, make_unique, now
from ...journal import MAX_STATEMENT, NAME, ReadError, check_record, journal_of, list_store, load
from ..html.page import render_html
from ..trace.matrix import render, rows
from ..trace.model import build
from .format import (
    ANCHOR,
    BLOCK,
    EVIDENCE,
    FORMAT,
    FORMAT_VERSION,
    HEX64,
    HTML,
    JOURNAL,
    MANIFEST,
    PAGES,
    REPORT,
    SEALS,
    Entry,
    small_file,
)
from .policies import policies_of

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ...journal import Listing, Loaded, Record


def export(target: Path, output: Path, force: bool) -> dict[str, Any]:
    """Write the bundle of the session at `target` to `output`; return its manifest."""

    _check_output(output, force)
    try:
        journal = journal_of(target).resolve()
    except ReadError as error:
        raise UsageError(str(error)) from None
    with tempfile.TemporaryDirectory(prefix="epistemic-export-") as folder:
        session, listing = _snapshot(journal, Path(folder))
        _check_whole(session, Path(folder) / ".epistemic", listing)
        entries, manifest = _contents(session, Path(folder) / ".epistemic")
        manifest["files"] = _write_zip(output, entries, manifest, force)
    return manifest


def _check_output(output: Path, force: bool) -> None:
    if output.suffix != ".zip":
        raise UsageError(f"{output}: a bundle's name ends in .zip (`epistemic verify` needs it)")
    if output.is_dir():
        raise UsageError(f"{output} is a directory")
    if not output.parent.is_dir():
        raise UsageError(f"{output.parent}: no such directory")
    if output.exists() and not force:
        raise UsageError(f"{output} exists; pass --force to replace it")


def _snapshot(journal: Path, folder: Path) -> tuple[Loaded, Listing]:
    """Copy the journal and its anchor under the journal's shared lock (writers take it
    exclusively for each append), list the evidence folder with them, and load the copy: one
    consistent state, even mid-session."""

    record = folder / ".epistemic"
    record.mkdir()
    anchor, copy = journal.parent / "head.json", record / "journal.jsonl"
    try:
        with journal.open("rb") as source, copy.open("wb") as target:
            with contextlib.suppress(OSError):  # no locks here: copy what is there
                fcntl.flock(source, fcntl.LOCK_SH)
            if anchor.is_file():
                shutil.copyfile(anchor, record / "head.json")
            listing = list_store(journal.parent / "evidence")
            shutil.copyfileobj(source, target, BLOCK)
        session = load(copy)
    except ReadError as error:
        raise UsageError(str(error).replace(str(copy), str(journal))) from None
    except OSError as error:
        raise UsageError(f"{journal}: cannot read: {error.strerror or error}") from None
    session.journal = journal  # the session's own place: its workspace, evidence, report
    return session, listing


def _check_whole(session: Loaded, snapshot: Path, listing: Listing) -> None:
    """The snapshot's chain and anchor, with the evidence as listed and the seals beside the
    journal (record_check.py): the verification the manifest records."""

    anchor = snapshot / "head.json"
    session.integrity = check_record(
        snapshot / "journal.jsonl",
        anchor if anchor.is_file() else None,
        record=session.journal.parent,
        listing=listing,
    )


def _contents(session: Loaded, snapshot: Path) -> tuple[list[Entry], dict[str, Any]]:
    """Every file of the bundle, and the manifest (without its file list, known once written)."""

    entries = [Entry(JOURNAL, "journal", snapshot / "journal.jsonl")]
    if (snapshot / "head.json").is_file():
        entries.append(Entry(ANCHOR, "anchor", snapshot / "head.json"))
    notes = list(session.notes)
    entries += _seals(session.journal.parent / "seals")
    entries += _reports(session, notes)
    entries += _traceability(session)

    policies = policies_of(session, entries, notes)
    evidence = _evidence(session, entries, notes)
    integrity = session.integrity
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "tool_version": __version__,
        "created": now(),
        "session": session.header.get("session"),
        "source": {"journal": str(session.journal), "workspace": session.header.get("workspace")},
        "verification": integrity.to_json() if integrity is not None else None,
        "evidence": evidence,
        "policies": policies,
        "files": [],
        "notes": notes,
    }
    return entries, manifest


def _seals(folder: Path) -> list[Entry]:
    """Each seal's statement and signature (docs/security.md), as they are."""

    entries = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        name = path.name[:-4] if path.name.endswith(".sig") else path.name
        if NAME.fullmatch(name) and path.is_file() and not path.is_symlink():
            data = small_file(path, MAX_STATEMENT)
            if data is not None:
                entries.append(Entry(SEALS + path.name, "seal", data=data))
    return entries


def _reports(session: Loaded, notes: list[str]) -> list[Entry]:
    """RATIONALE.md, its finished pages, and the HTML report."""
    entries: list[Entry] = []
    report = session.workspace / REPORT
    if report.is_file():
        entries.append(Entry(REPORT, "report", data=report.read_bytes()))
    else:
        notes.append(f"{REPORT} is missing beside the journal: not included")
    pages = session.journal.parent / "report"
    for page in sorted(pages.glob("*.md")) if pages.is_dir() else []:
        entries.append(Entry(PAGES + page.name, "page", data=page.read_bytes()))
    html, problem = _html(session)
    if html is not None:
        entries.append(Entry(HTML, "html", data=html))
    if problem:
        notes.append(problem)
    return entries


def _traceability(session: Loaded) -> list[Entry]:
    """The traceability matrix (reports/trace/matrix.py) as Markdown, CSV and HTML; the HTML's rows
    link to their calls in the bundle's HTML report."""

    found = rows([build(session)])
    links = {str(session.header.get("session", "")): HTML}
    return [
        Entry(f"traceability{suffix}", "traceability", data=render(found, suffix, links).encode())
        for suffix in (".md", ".csv", ".html")
    ]


def _html(session: Loaded) -> tuple[bytes | None, str | None]:
    """The HTML report, or why it is not included."""
    try:
        return str(render_html(session)).encode("utf-8"), None
    except Exception as error:  # another module's failure must not lose the whole bundle
        return None, f"the HTML report is not included: rendering failed ({error!r})"


def _evidence(session: Loaded, entries: list[Entry], notes: list[str]) -> dict[str, Any]:
    """Every blob the journal references; the missing ones are noted, not invented."""
    store = session.journal.parent / "evidence"
    refs = evidence_refs(session.records)
    missing, odd = [], 0
    for digest in sorted(refs):
        blob = store / digest[:2] / digest
        if blob.is_file() and not blob.is_symlink():  # as it is: a changed blob fails verify
            entries.append(Entry(f"{EVIDENCE}{digest[:2]}/{digest}", "evidence", blob))
        elif blob.exists() or blob.is_symlink():
            odd += 1  # a link or a folder: not copied (the check names it)
        else:
            missing.append(digest)
    first = next((digest for digest in refs if digest in missing), "")  # in journal order
    if len(missing) == 1:
        notes.append(f"evidence {first} (referenced on line {refs[first]}) is missing")
    elif missing:
        notes.append(
            f"{len(missing)} evidence blobs the journal references are missing (the first: "
            f"evidence {first}, referenced on line {refs[first]}); evidence.missing lists them"
        )
    integrity = session.integrity
    problems = (
        [p for p in integrity.problems if p.check.startswith("evidence-")] if integrity else []
    )
    return {
        "referenced": len(refs),
        "included": len(refs) - len(missing) - odd,
        "missing": missing,
        "problems": [problem.to_json() for problem in problems],
    }


def evidence_refs(records: list[Record]) -> dict[str, int | None]:
    """The SHA-256 of every evidence ref in the records, with the line that first names it."""
    found: dict[str, int | None] = {}
    for record in records:
        line = record.get("n")
        for digest in _refs_in(record, 0):
            found.setdefault(digest, line if isinstance(line, int) else None)
    return found


def _refs_in(value: object, depth: int) -> Iterator[str]:
    """An evidence ref is an object with a 64-hex `sha256` and an integer `bytes`."""
    if depth > 8:
        return
    if isinstance(value, dict):
        digest = value.get("sha256")
        if isinstance(digest, str) and HEX64.fullmatch(digest) and "bytes" in value:
            yield digest
        for item in value.values():
            yield from _refs_in(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _refs_in(item, depth + 1)


def _write_zip(
    output: Path, entries: list[Entry], manifest: dict[str, Any], force: bool
) -> list[dict[str, Any]]:
    """Write beside the output, fsync, then move into place; return the manifest's file list."""

    handle, temp = make_unique(output.parent, prefix=f".{output.name}.", suffix=".tmp", mode=0o644)
    try:
        with os.fdopen(handle, "wb") as raw:
            with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
                files = [_add(archive, entry) for entry in entries]
                manifest["files"] = files
                text = json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
                archive.writestr(_info(MANIFEST), text.encode("utf-8"))
            raw.flush()
            os.fsync(raw.fileno())
        _place(temp, output, force)
    finally:
        temp.unlink(missing_ok=True)
    return files


def _info(name: str) -> Any:

    info = zipfile.ZipInfo(name, time.localtime()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
    return info


def _add(archive: Any, entry: Entry) -> dict[str, Any]:
    """Copy one file in, hashing exactly the bytes written."""
    digest, size = hashlib.sha256(), 0
    big = entry.source is not None and entry.source.stat().st_size >= 1 << 31
    with archive.open(_info(entry.path), "w", force_zip64=big) as out:
        for block in _blocks(entry):
            digest.update(block)
            size += len(block)
            out.write(block)
    return {"path": entry.path, "role": entry.role, "size": size, "sha256": digest.hexdigest()}


def _blocks(entry: Entry) -> Iterator[bytes]:
    if entry.data is not None:
        yield entry.data
        return
    assert entry.source is not None
    with entry.source.open("rb") as handle:
        yield from iter(lambda: handle.read(BLOCK), b"")


def _place(temp: Path, output: Path, force: bool) -> None:
    """Rename into place; without --force never replace a file that appeared meanwhile."""
    if force:
        os.replace(temp, output)
        return
    try:
        os.link(temp, output)
    except FileExistsError:
        raise UsageError(f"{output} exists; pass --force to replace it") from None
    except OSError:  # no hard links on this file system: check, then rename
        if output.exists():
            raise UsageError(f"{output} exists; pass --force to replace it") from None
        os.replace(temp, output)
