"""The record's plain readers: `log`, `report`, `verify` and `seal`, `types`, `rules`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..core import UsageError
from .choice import reading
from .options import session_choice, session_option


def define_log(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Print a session's calls, one merged record each (of a workspace of "
        "several sessions: the newest, said on stderr, or the one --session names). A journal "
        "that does not verify is announced first, on stderr, and read as it is. Exit 0 when "
        "read, 2 when there is no journal or an option is malformed."
    )
    p.add_argument("dir", nargs="?", default=".", metavar="DIR")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    session_option(p)
    p.set_defaults(handler=_cmd_log)


def define_report(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Re-render RATIONALE.md from a session's journal (of a workspace of "
        "several sessions: the newest, said on stderr, or the one --session names). Exit 0 "
        "when re-rendered, 1 when re-rendered from a journal that does not verify (announced "
        "first, and at the report's top), 2 when there is no journal or an option is "
        "malformed."
    )
    p.add_argument("dir", nargs="?", default=".", metavar="DIR")
    session_option(p)
    p.set_defaults(handler=_cmd_report)


def define_types(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_cmd_types)


def define_rules(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_cmd_rules)


def _journal_path(target: str, session: str | None = None) -> Path:
    from ..journal import find_layout

    path = Path(target)
    journal = path if path.is_file() else find_layout(path, session).journal
    if not journal.is_file():
        raise UsageError(f"no journal at {journal}")
    return journal


def _cmd_log(args: argparse.Namespace) -> int:
    from ..journal import announce, check_journal, merge_calls, read_numbered

    journal = _journal_path(args.dir, reading(args.dir, session_choice(args)))
    numbered, notes = read_numbered(journal)
    records = [record for _, record in numbered]
    views = merge_calls(records)
    if records:
        announce(check_journal(journal), numbered)  # first: what follows may not be as recorded
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if not records and journal.stat().st_size:
        raise UsageError(f"{journal} holds no journal records")
    if args.json:
        print(json.dumps([v.to_json() for v in views], ensure_ascii=False, indent=1))
        return 0
    from ..journal import tally_of
    from ..reports import calls_table

    calls_table(views)
    print(tally_of(records).sentence())  # what the table's rows came to, counted as everywhere
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from ..journal import announce, check_journal, exit_status, find_layout, read_numbered
    from ..journal import chain_notice as notice
    from ..reports import rebuild

    journal = _journal_path(args.dir, reading(args.dir, session_choice(args)))
    layout = find_layout(journal)
    from ..core import moved_note

    moved = moved_note(layout.workspace)
    if moved is not None:
        print(f"epistemic: note: {moved}", file=sys.stderr)
    checked = check_journal(journal)
    numbered = read_numbered(journal)[0]
    announce(checked, numbered)  # first, and at the top of the report
    position = rebuild(layout, warning=notice(checked, numbered))
    print(f"{layout.report} re-rendered from {position.lines} journal line(s)")
    return exit_status(checked)  # a verdict: the record does not verify


def _cmd_types(args: argparse.Namespace) -> int:
    from ..core import ACTS, FILE_TOOL_ACTS

    if args.json:
        print(
            json.dumps(
                {
                    "acts": [
                        {"name": a.name, "meaning": a.meaning, "mutating": a.mutating} for a in ACTS
                    ],
                    "file_tools": FILE_TOOL_ACTS,
                },
                indent=1,
            )
        )
        return 0
    width = max(len(a.name) for a in ACTS)
    for act in ACTS:
        flag = "mutating" if act.mutating else "read-only"
        print(f"{act.name:<{width}}  {flag:<9}  {act.meaning}")
    print("\nfile tools: " + ", ".join(f"{k} = {v}" for k, v in FILE_TOOL_ACTS.items()))
    return 0


def _cmd_rules(args: argparse.Namespace) -> int:
    from ..gate import RULES

    if args.json:
        print(json.dumps(RULES, indent=1))
        return 0
    width = max(map(len, RULES))
    for rule, meaning in RULES.items():
        print(f"{rule:<{width}}  {meaning}")
    return 0
