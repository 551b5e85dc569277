"""`epistemic lint` and `epistemic export` (docs/audit-bundle.md); `epistemic verify
BUNDLE.zip` is reports/bundle/check.py's."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..core import UsageError, visible
from ..reports import verify_bundle
from .choice import reading
from .options import session_choice, session_option

# verify_bundle: where it was first, for callers
__all__ = ["define_export", "define_lint", "verify_bundle"]

JOURNAL_CHECKS = ("chain-broken", "journal-truncated", "anchor-mismatch", "torn")
EXIT_FINDINGS = 1


def define_lint(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Re-check every recorded call against the gate's rules, the revert and "
        "cleanup history rules and the outcome flags recomputed from what was observed; also "
        "seq gaps and duplicates, calls without outcome, outcomes without call. One finding "
        "per line: call, journal line, check id, message. Exit 0 when there are no findings, "
        "1 when there are or when lines of a newer format could not be checked (incomplete), "
        "2 when PATH holds no journal."
    )
    p.add_argument(
        "path",
        nargs="?",
        default=".",
        metavar="PATH",
        help="a journal, a workspace or its .epistemic folder (default: .)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--expect-head",
        metavar="HASH",
        help="a head hash kept elsewhere, as for `epistemic verify`",
    )
    session_option(p)
    p.add_argument(
        "--trace",
        action="store_true",
        help="also the traceability checks (trace/...): changes never verified, verifies "
        "before any change, reverts of nothing, approvals exceeded (docs/traceability.md)",
    )
    p.set_defaults(handler=_cmd_lint)


def define_export(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Write the journal, every evidence file it references, RATIONALE.md and its "
        "pages, the HTML report, the policy in force and manifest.json (sizes, SHA-256s, the "
        "journal's verification) into one zip. Exit 0 when written, 1 when written but the "
        "journal itself does not verify (edited, cut: announced first, and the manifest says "
        "so; missing evidence or a torn last line is a warning, exit 0), 2 on bad input."
    )
    p.add_argument(
        "path",
        nargs="?",
        default=".",
        metavar="PATH",
        help="a journal, a workspace or its .epistemic folder (default: .)",
    )
    p.add_argument("-o", "--output", required=True, metavar="BUNDLE.zip", help="the zip to write")
    p.add_argument("--force", action="store_true", help="replace BUNDLE.zip if it exists")
    session_option(p)
    p.set_defaults(handler=_cmd_export)


def _cmd_lint(args: argparse.Namespace) -> int:
    from ..checks import lint_session as lint
    from ..journal import ReadError, announce, check_record, load
    from .verify import options_of

    options = options_of(args)
    try:
        chosen = reading(args.path, session_choice(args))
        session = load(Path(args.path), verify=False, session=chosen)
    except ReadError as error:
        raise UsageError(str(error)) from None
    journal = session.journal
    anchor = journal.parent / "head.json" if journal.name == "journal.jsonl" else None
    session.integrity = check_record(journal, anchor, options)  # chain, evidence and seals
    announce(session.integrity, session.numbered())  # first: the verdict on what follows
    result = lint(session, traced=args.trace)
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


def _session_journal(args: argparse.Namespace) -> Path:
    """The path to export: as given, or the journal of the session --session names."""
    chosen = reading(args.path, session_choice(args))
    if chosen is None:
        return Path(args.path)
    from ..journal import ReadError, journal_of

    try:
        return journal_of(Path(args.path), chosen)
    except ReadError as error:
        raise UsageError(str(error)) from None


def _cmd_export(args: argparse.Namespace) -> int:
    from ..journal import announce, exit_status, journal_of, read_numbered, verdict_of
    from ..reports import export

    output = Path(args.output)
    journal = _session_journal(args)
    manifest = export(journal, output, args.force)
    checked = manifest.get("verification") or {}
    status = str(checked.get("status"))
    verdict = verdict_of(checked) if checked else None
    if verdict is not None and status != "intact":  # first: the record does not verify
        announce(verdict, read_numbered(journal_of(journal))[0])
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
    return exit_status(verdict)  # a verdict: a bundle of a record that does not verify
