"""`epistemic verify BUNDLE.zip`: checking an audit bundle (docs/audit-bundle.md).

A bundle is untrusted input: member names are checked before anything is read, every read is
capped by the size the manifest declares, and only the journal, its anchor and the seals are
written out (to a temporary folder, under fixed names) so the record can be checked there.
"""

from __future__ import annotations

import json
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from ...core import UsageError, field, struct, visible
from ...journal import MAX_STATEMENT, NAME, check_record, read_records
from .export import evidence_refs
from .format import ANCHOR, EVIDENCE, JOURNAL, MANIFEST, SEALS, sha256_stream
from .manifest import Listed, folder_entry, listed_files, read_manifest, unsafe

if TYPE_CHECKING:
    from typing import Any

    from ...journal import Options, Verification

EXIT_USAGE = 2
MAX_MEMBERS = 100_000


def verify_bundle(path: Path, as_json: bool, options: Options | None = None) -> int:
    """Check an audit bundle: 0 intact, 1 tampered, 3 torn journal, 4 unsealed (a seal was
    asked for, none is in the bundle), 2 when it is not a bundle (or there is no such file)."""
    try:
        if not path.exists():
            raise UsageError("no such bundle: the file does not exist")
        result = check_bundle(path, options)
    except UsageError as error:
        print(visible(f"epistemic: {path}: {error}"), file=sys.stderr)
        return EXIT_USAGE
    if as_json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
        return result.exit_code
    if result.status == "intact":
        journal = result.journal
        lines, head = (journal.lines, journal.head) if journal else (0, "-")
        shown = [
            f"intact: {path}: {result.files} file(s) as the manifest lists them; "
            f"journal {lines} line(s), head {head}"
        ]
    else:
        shown = [f"{result.status.upper()}: {result.problems[0]}"]
        shown += [f"also: {problem}" for problem in result.problems[1:]]
    shown += [f"note: {note}" for note in result.notes]
    print("\n".join(visible(line) for line in shown))
    return result.exit_code


@struct(frozen=False)
class BundleCheck:
    """The verdict on one bundle: every problem found (the first is `problem`), and notes."""

    status: str = "intact"
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: int = 0
    session: str | None = None
    journal: Verification | None = None

    @property
    def exit_code(self) -> int:
        return {"intact": 0, "tampered": 1, "torn": 3, "unsealed": 4}[self.status]

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "problem": self.problems[0] if self.problems else None,
            "problems": self.problems,
            "notes": self.notes,
            "files": self.files,
            "session": self.session,
            "journal": self.journal.to_json() if self.journal else None,
        }


def check_bundle(path: Path, options: Options | None = None) -> BundleCheck:
    """Verify a bundle; UsageError when it is not one (not a zip, no or bad manifest)."""

    try:
        with zipfile.ZipFile(path) as archive:
            return _check(archive, options)
    except zipfile.BadZipFile as error:
        raise UsageError(f"not an audit bundle: not a zip file ({error})") from None
    except OSError as error:
        raise UsageError(f"cannot read: {error.strerror or error}") from None


def _check(archive: Any, options: Options | None) -> BundleCheck:

    everything = archive.infolist()
    infos = [info for info in everything if not folder_entry(info)]
    names = Counter(info.filename for info in infos)
    refused = [
        f"unsafe member name {info.filename!r} ({problem})"
        for info in everything
        if (problem := unsafe(info.filename[:-1] if folder_entry(info) else info.filename))
    ]
    refused += [
        f"member {name!r} appears {count} times" for name, count in names.items() if count > 1
    ]
    if len(everything) > MAX_MEMBERS:
        refused.append(f"{len(everything)} members, more than {MAX_MEMBERS}")
    if refused:
        return BundleCheck("tampered", [f"refused: {refused[0]}; nothing was extracted"])
    by_name = {info.filename: info for info in infos}
    manifest = read_manifest(archive, by_name.get("manifest.json"))
    listed = listed_files(manifest)
    notes = manifest.get("notes")
    result = BundleCheck(session=_text(manifest.get("session")), files=len(listed))
    result.notes += [f"export: {n}" for n in notes if n] if isinstance(notes, list) else []
    with tempfile.TemporaryDirectory(prefix="epistemic-bundle-") as folder:
        record = Path(folder) / ".epistemic"
        record.mkdir()
        (record / "seals").mkdir()
        for entry in listed:
            problem = _check_member(archive, by_name.get(entry.path), entry, _target(record, entry))
            result.problems += [problem] if problem else []
        known = {entry.path for entry in listed} | {MANIFEST}
        result.problems += [
            f"{name}: in the bundle but not listed in the manifest"
            for name in by_name
            if name not in known
        ]
        if (record / "journal.jsonl").is_file():
            _check_journal(record, manifest, listed, result, options)
    if result.problems:
        result.status = "tampered"
    elif result.journal is not None and result.journal.status == "unsealed":
        result.status = "unsealed"
        result.problems.append(f"journal: {result.journal.problem}")
    elif result.journal is not None and result.journal.status == "torn":
        result.status = "torn"
        result.problems.append(f"journal: {result.journal.problem}")
    return result


def _target(record: Path, entry: Listed) -> Path | None:
    """Where a member is written out to be checked: only the journal, its anchor and seals
    (small files, under names of the seal format), never anything else."""

    fixed = {JOURNAL: record / "journal.jsonl", ANCHOR: record / "head.json"}
    if entry.path in fixed:
        return fixed[entry.path]
    name = entry.path[len(SEALS) :] if entry.path.startswith(SEALS) else ""
    stem = name[:-4] if name.endswith(".sig") else name
    if NAME.fullmatch(stem) and entry.size <= MAX_STATEMENT:
        return record / "seals" / name
    return None


def _check_member(archive: Any, info: Any, entry: Listed, target: Path | None) -> str | None:
    """The member's size and SHA-256 against the manifest; evidence also against its name."""
    name = entry.path
    if info is None:
        return f"{name}: listed in the manifest but missing from the bundle"
    if info.is_dir() or (info.external_attr >> 16) & 0o170000 == 0o120000:
        return f"{name}: not a regular file (a directory or a symbolic link)"
    if info.file_size != entry.size:
        return f"{name}: size expected {entry.size} (manifest), found {info.file_size}"
    try:
        with archive.open(info) as stream:
            if target is None:
                found, size = sha256_stream(stream, entry.size)
            else:
                with target.open("wb") as sink:
                    found, size = sha256_stream(stream, entry.size, sink)
    except Exception as error:  # bad CRC, truncated data, encryption, unknown compression
        return f"{name}: cannot be read from the zip ({error})"
    if size != entry.size:
        return f"{name}: size expected {entry.size} (manifest), found {size}"
    if found != entry.sha256:
        return f"{name}: sha256 expected {entry.sha256} (manifest), found {found}"
    if name.startswith(EVIDENCE) and name[len(EVIDENCE) :] != f"{found[:2]}/{found}":
        return f"{name}: evidence does not hash to its name (found {found})"
    return None


def _check_journal(
    record: Path, manifest: Any, listed: list[Listed], result: BundleCheck, options: Options | None
) -> None:
    """Walk the extracted journal's chain, its anchor and seals (record_check.py, without the
    evidence: checked here against the zip); compare with the manifest; cross-check evidence."""

    anchor = record / "head.json"
    journal = record / "journal.jsonl"
    found = check_record(
        journal, anchor if anchor.is_file() else None, options, record=record, evidence=False
    )
    result.journal = found
    result.notes += [f"journal: {note}" for note in found.notes]
    recorded = manifest.get("verification")
    recorded = recorded if isinstance(recorded, dict) else {}
    if found.status == "tampered":
        known = recorded.get("status") == "tampered"
        when = " (so when exported: the manifest records it)" if known else ""
        result.problems += [f"journal: {problem.message}{when}" for problem in found.problems]
    elif found.head != recorded.get("head"):
        result.problems.append(
            f"journal: head expected {recorded.get('head')} (manifest), found {found.head}"
        )
    elif recorded.get("status") == "tampered":  # the rest of the record was, when exported
        result.problems += [f"when exported: {text}" for text in _exported_problems(recorded)]
    elif found.record_status != recorded.get("status"):  # a required seal aside
        result.problems.append(
            f"journal: verifies as {found.record_status}, the manifest records "
            f"{recorded.get('status')}"
        )
    _check_refs(journal, manifest, listed, result)


def _exported_problems(recorded: dict[str, Any]) -> list[str]:
    """What the manifest says did not verify at export, but the missing evidence (which
    `_check_refs` reports blob by blob)."""
    problems = recorded.get("problems")
    if not isinstance(problems, list):  # a manifest of an older version: its one problem
        return [f"{recorded.get('problem')} (the manifest records it)"]
    return [
        f"{problem.get('message')} (the manifest records it)"
        for problem in problems
        if isinstance(problem, dict) and problem.get("check") != "evidence-missing"
    ]


def _check_refs(journal: Path, manifest: Any, listed: list[Listed], result: BundleCheck) -> None:
    """Evidence the journal references must be in the bundle, or declared missing at export."""

    present = {entry.path[-64:] for entry in listed if entry.path.startswith(EVIDENCE)}
    evidence = manifest.get("evidence")
    missing = evidence.get("missing") if isinstance(evidence, dict) else None
    declared = {str(digest) for digest in missing} if isinstance(missing, list) else set()
    for digest, line in evidence_refs(read_records(journal)[0]).items():
        if digest in present:
            continue
        if digest in declared:
            result.problems.append(
                f"evidence {digest} (line {line}) was missing when exported (the manifest "
                "records it in evidence.missing)"
            )
        else:
            result.problems.append(
                f"{EVIDENCE}{digest[:2]}/{digest}: referenced on journal line {line}, not in the "
                "bundle (and the manifest does not declare it missing)"
            )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
