"""`epistemic lint`, `epistemic export` and `epistemic verify BUNDLE.zip` (docs/audit-bundle.md).

A bundle is untrusted input: member names are checked before anything is read, every read is
capped by the size the manifest declares, and only the journal and its anchor are written out
(to a temporary folder, under fixed names) so the hash chain can be walked.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .bundle import ANCHOR, EVIDENCE, FORMAT, HEX64, JOURNAL, MANIFEST, SEALS, sha256_stream
from .errors import UsageError
from .safetext import visible
from .structs import field, struct

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from typing import Any

    from .record_check import Options
    from .verify import Verification

JOURNAL_CHECKS = ("chain-broken", "journal-truncated", "anchor-mismatch", "torn")
EXIT_FINDINGS = 1
EXIT_USAGE = 2
MAX_MEMBERS = 100_000
MAX_MANIFEST = 64 << 20
MAX_FILE = 8 << 30
MAX_TOTAL = 64 << 30


def register(sub: Any) -> None:
    p = sub.add_parser(
        "lint",
        help="re-run the declared-versus-done checks on a recorded journal",
        description="Re-check every recorded call against the gate's rules, the revert and "
        "cleanup history rules and the outcome flags recomputed from what was observed; also "
        "seq gaps and duplicates, calls without outcome, outcomes without call. One finding "
        "per line: call, journal line, check id, message. Exit 0 when there are no findings, "
        "1 when there are or when lines of a newer format could not be checked (incomplete), "
        "2 when PATH holds no journal.",
    )
    p.add_argument("path", metavar="PATH", help="a journal, a workspace or its .epistemic folder")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--expect-head",
        metavar="HASH",
        help="a head hash kept elsewhere, as for `epistemic verify`",
    )
    p.set_defaults(handler=_cmd_lint)
    p = sub.add_parser(
        "export",
        help="pack a session into an audit bundle (a zip)",
        description="Write the journal, every evidence file it references, RATIONALE.md and its "
        "pages, the HTML report, the policy in force and manifest.json (sizes, SHA-256s, the "
        "journal's verification) into one zip. Exit 0 when written (a tampered journal is "
        "exported with a warning: the manifest says so), 2 on bad input.",
    )
    p.add_argument("path", metavar="PATH", help="a journal, a workspace or its .epistemic folder")
    p.add_argument("-o", "--output", required=True, metavar="BUNDLE.zip", help="the zip to write")
    p.add_argument("--force", action="store_true", help="replace BUNDLE.zip if it exists")
    p.set_defaults(handler=_cmd_export)


def _cmd_lint(args: argparse.Namespace) -> int:
    from .cli_verify import options_of
    from .lint import lint
    from .record_check import check_record
    from .sessions import ReadError, load

    options = options_of(args)
    try:
        session = load(Path(args.path), verify=False)
    except ReadError as error:
        raise UsageError(str(error)) from None
    journal = session.journal
    anchor = journal.parent / "head.json" if journal.name == "journal.jsonl" else None
    session.integrity = check_record(journal, anchor, options)  # chain, evidence and seals
    result = lint(session)
    skipped = sum(result.unchecked.values())
    if args.json:
        integrity = session.integrity.status if session.integrity else None
        data = {
            "journal": str(session.journal),
            "session": session.header.get("session"),
            "status": result.status,
            "calls": result.calls,
            "findings": [finding.to_json() for finding in result.findings],
            "notes": result.notes,
            "integrity": integrity,
            "unchecked": {"lines": skipped, "versions": sorted(result.unchecked)},
        }
        print(json.dumps(data, ensure_ascii=False, indent=1))
    else:
        count = len(result.findings)
        head = {"findings": f"{count} finding(s)", "clean": "clean: no findings"}
        head["incomplete"] = "incomplete: no findings"
        lines = [f"{head[result.status]} in {result.calls} call(s) of {session.journal}"]
        if skipped:
            lines[0] += f" ({skipped} line(s) of a newer format version not re-checked)"
        for finding in result.findings:
            where = [f"call {finding.seq}"] if finding.seq is not None else []
            where += [f"(line {finding.line})"] if finding.line is not None else []
            lines.append(" ".join([*where, f"{finding.check}: {finding.message}"]))
        lines += [f"note: {note}" for note in result.notes]
        print("\n".join(visible(line) for line in lines))
    return EXIT_FINDINGS if result.status != "clean" else 0


def _cmd_export(args: argparse.Namespace) -> int:
    from .bundle import export

    output = Path(args.output)
    manifest = export(Path(args.path), output, args.force)
    checked = manifest.get("verification") or {}
    status = str(checked.get("status"))
    evidence = manifest["evidence"]["included"]
    print(
        visible(
            f"exported {output}: {len(manifest['files'])} file(s), {evidence} evidence blob(s); "
            f"journal {status}, {checked.get('lines')} line(s), head {checked.get('head') or '-'}"
        )
    )
    for note in manifest["notes"]:
        print(visible(f"note: {note}"))
    if status != "intact":
        problems = checked.get("problems") or []
        what = "journal" if str(checked.get("check")) in JOURNAL_CHECKS else "record"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        print(
            visible(
                f"epistemic: warning: the {what} is {status.upper()}: {checked.get('problem')}"
                f"{more}; the bundle's manifest records this"
            ),
            file=sys.stderr,
        )
    return 0


def verify_bundle(path: Path, as_json: bool, options: Options | None = None) -> int:
    """Check an audit bundle: 0 intact, 1 tampered, 3 torn journal, 2 when it is not a bundle
    (or there is no such file)."""
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
        return {"intact": 0, "tampered": 1, "torn": 3}[self.status]

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


@struct
class Listed:
    """One manifest entry."""

    path: str
    size: int
    sha256: str
    role: str


def check_bundle(path: Path, options: Options | None = None) -> BundleCheck:
    """Verify a bundle; UsageError when it is not one (not a zip, no or bad manifest)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            return _check(archive, options)
    except zipfile.BadZipFile as error:
        raise UsageError(f"not an audit bundle: not a zip file ({error})") from None
    except OSError as error:
        raise UsageError(f"cannot read: {error.strerror or error}") from None


def _check(archive: Any, options: Options | None) -> BundleCheck:
    import tempfile
    from collections import Counter

    everything = archive.infolist()
    infos = [info for info in everything if not _folder(info)]
    names = Counter(info.filename for info in infos)
    refused = [
        f"unsafe member name {info.filename!r} ({problem})"
        for info in everything
        if (problem := _unsafe(info.filename[:-1] if _folder(info) else info.filename))
    ]
    refused += [
        f"member {name!r} appears {count} times" for name, count in names.items() if count > 1
    ]
    if len(everything) > MAX_MEMBERS:
        refused.append(f"{len(everything)} members, more than {MAX_MEMBERS}")
    if refused:
        return BundleCheck("tampered", [f"refused: {refused[0]}; nothing was extracted"])
    by_name = {info.filename: info for info in infos}
    manifest = _manifest(archive, by_name.get("manifest.json"))
    listed = _listed(manifest)
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
    elif result.journal is not None and result.journal.status == "torn":
        result.status = "torn"
        result.problems.append(f"journal: {result.journal.problem}")
    return result


def _target(record: Path, entry: Listed) -> Path | None:
    """Where a member is written out to be checked: only the journal, its anchor and seals
    (small files, under names of the seal format), never anything else."""
    from .seal import MAX_STATEMENT, NAME

    fixed = {JOURNAL: record / "journal.jsonl", ANCHOR: record / "head.json"}
    if entry.path in fixed:
        return fixed[entry.path]
    name = entry.path[len(SEALS) :] if entry.path.startswith(SEALS) else ""
    stem = name[:-4] if name.endswith(".sig") else name
    if NAME.fullmatch(stem) and entry.size <= MAX_STATEMENT:
        return record / "seals" / name
    return None


def _folder(info: Any) -> bool:
    """A directory entry (`zip -r` adds one per folder): a name ending in `/`, no content.
    It is not a file: not extracted, not in the manifest, not an extra member."""
    name: str = info.filename
    return name.endswith("/") and info.file_size == 0 and len(name) > 1


def _safe(name: str) -> bool:
    return _unsafe(name) is None


def _unsafe(name: str) -> str | None:
    """Why a member name is not a plain relative path, or None when it is one."""
    if name.startswith("/"):
        return "absolute"
    if name[1:2] == ":":
        return "a drive letter"
    if "\\" in name:
        return "a backslash"
    if "\x00" in name:
        return "a NUL character"
    parts = name.split("/")
    if ".." in parts:
        return "a `..` part"
    if not name or any(part in ("", ".") for part in parts):
        return "an empty or `.` part"
    return None


def _manifest(archive: Any, info: Any) -> dict[str, Any]:
    import io

    if info is None:
        raise UsageError("not an audit bundle: it has no manifest.json")
    if info.file_size > MAX_MANIFEST:
        raise UsageError(f"manifest.json is larger than {MAX_MANIFEST} bytes")
    sink = io.BytesIO()
    try:
        with archive.open(info) as stream:
            sha256_stream(stream, MAX_MANIFEST, sink)
        manifest = json.loads(sink.getvalue())
    except (ValueError, RecursionError) as error:
        raise UsageError(f"manifest.json is not valid JSON ({error})") from None
    except Exception as error:  # zip-level failures: bad CRC, unsupported compression
        raise UsageError(f"manifest.json cannot be read ({error})") from None
    found = manifest.get("format") if isinstance(manifest, dict) else None
    if found != FORMAT:
        raise UsageError(
            f"not an audit bundle: manifest.json's format is {found!r}, not {FORMAT!r}"
        )
    return dict(manifest)


def _listed(manifest: dict[str, Any]) -> list[Listed]:
    """The manifest's file list, validated (UsageError: there is nothing to check against)."""
    files = manifest.get("files")
    listed = [_entry(item) for item in files] if isinstance(files, list) else [None]
    bad = next((index for index, entry in enumerate(listed) if entry is None), None)
    if bad is not None:
        raise UsageError(
            f"manifest.json: files[{bad}] is not a valid entry"
            if files
            else "manifest.json has no `files` list"
        )
    paths = [entry.path for entry in listed if entry is not None]
    if len(set(paths)) != len(paths) or MANIFEST in paths or JOURNAL not in paths:
        raise UsageError(f"manifest.json: the files must be unique and include {JOURNAL}")
    if sum(entry.size for entry in listed if entry is not None) > MAX_TOTAL:
        raise UsageError(f"the bundle declares more than {MAX_TOTAL} bytes: not checked")
    return [entry for entry in listed if entry is not None]


def _entry(item: object) -> Listed | None:
    if not isinstance(item, dict):
        return None
    path, size, digest = item.get("path"), item.get("size"), item.get("sha256")
    if not isinstance(path, str) or not _safe(path) or not isinstance(digest, str):
        return None
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_FILE:
        return None
    return (
        Listed(path, size, digest, str(item.get("role", ""))) if HEX64.fullmatch(digest) else None
    )


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
    from .record_check import check_record

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
    elif found.status != recorded.get("status"):
        result.problems.append(
            f"journal: verifies as {found.status}, the manifest records {recorded.get('status')}"
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
    from .bundle import evidence_refs
    from .journal import read_records

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
