"""`epistemic stats` and `epistemic diff`: read-only numbers of one session or many, and two
sessions side by side, from their journals alone (see docs/stats.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import UsageError, visible
from .choice import reading
from .options import session_choice, session_option

if TYPE_CHECKING:
    from typing import Any

    from ..journal import Loaded

LABEL = 11  # width of the labels of the one-session block


def define_stats(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Read sessions' journals and count: calls by act and their shares, "
        "rejections by rule, flags, reverts and what they undid, approvals and denials, "
        "hypotheses tested, wall time, model calls and tokens, how each ended, and the hash "
        "chain's integrity. One session prints a block; several print one row each "
        "(labelled by workspace, and by session id where a workspace has several) and a "
        "TOTALS row. Read-only. Exit 0 when a session was read, 2 when there is nothing to read."
    )
    p.add_argument(
        "paths",
        nargs="*",
        default=["."],
        metavar="PATH",
        help="a workspace, a journal file, or a folder holding many sessions (default: .)",
    )
    p.add_argument("--json", action="store_true", help='print {"sessions": [...], "totals": {...}}')
    session_option(p)
    p.set_defaults(handler=_cmd_stats)


def define_diff(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Compare two sessions (typically two agents on the same task): act "
        "counts and shares, the act sequences aligned, where they first diverge, the files "
        "each changed, what each reverted, and how each ended. Read-only. Exit 0 when "
        "compared; 2 when a session cannot be read, when A or B is a workspace of several "
        "sessions and --session does not say which, or when both record a task and the "
        "tasks differ (unless --any-task)."
    )
    p.add_argument("a", metavar="A", help="the first session: a workspace or a journal file")
    p.add_argument("b", metavar="B", help="the second session")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--any-task", action="store_true", help="compare even when the two tasks differ")
    p.add_argument(
        "--session",
        action="append",
        metavar="ID",
        help="which session of a workspace (its id or a unique prefix): the first --session "
        "names A's, a second B's; a workspace of several sessions needs one "
        "(`epistemic diff . . --session OLD --session NEW`)",
    )
    p.set_defaults(handler=_cmd_diff)


# -- stats ------------------------------------------------------------------------------------


def _cmd_stats(args: argparse.Namespace) -> int:
    from ..journal import ReadError, find_journals
    from ..reports import labels, table, totals

    try:
        journals = find_journals([Path(path) for path in args.paths], session_choice(args))
    except ReadError as error:
        raise UsageError(str(error)) from None
    rows, skipped = _read_all(journals)
    if args.json:
        result = {"sessions": rows, "totals": totals(rows), "skipped": skipped}
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return 0
    for item in skipped:
        _note(f"skipped: {item['problem']}")
    for row, name in zip(rows, labels(rows), strict=True):
        for note in row["notes"]:
            _note(note if len(rows) == 1 else f"{name}: {note}")
    lines = _block(rows[0]) if len(rows) == 1 else table(rows, totals(rows))
    _print(lines)
    return 0


def _read_all(journals: list[Path]) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Each journal's row; the ones that cannot be read are skipped (exit 2 if all are)."""
    from ..reports import session_stats

    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for journal in journals:
        try:
            rows.append(session_stats(_load(journal)))
        except UsageError as error:
            skipped.append({"journal": str(journal), "problem": str(error)})
    if not rows:
        problems = "; ".join(item["problem"] for item in skipped)
        raise UsageError(problems if len(skipped) == 1 else f"no session could be read: {problems}")
    return rows, skipped


def _load(target: Path, session: str | None = None) -> Loaded:
    """One session, its chain verified: a journal that does not verify is announced first."""
    from ..journal import ReadError, announce, load

    try:
        loaded = load(target, session=session)
    except ReadError as error:
        raise UsageError(str(error)) from None
    announce(loaded.integrity, loaded.numbered(), label=str(loaded.journal))
    return loaded


def _note(text: str) -> None:
    print(visible(f"note: {text}"), file=sys.stderr)


def _print(lines: list[str]) -> None:
    """Text lines holding journal text (acts, commands, tasks, paths, messages): escape
    sequences and other control characters are shown as escapes, never sent to the terminal."""
    print("\n".join(visible(line) for line in lines))


def _block(row: dict[str, Any]) -> list[str]:
    """One session, readably."""
    from ..reports import duration as _duration

    lines = [
        _line("session", f"{row['name']} · {row['session'] or 'no session id'}"),
        _line("journal", row["journal"]),
        _line("task", _cut(row["task"], 100) if row["task"] else "(none recorded)"),
        _line("model", row["model"] or "(none recorded)"),
        _line("started", f"{row['started'] or '?'} · wall time {_duration(row['wall_time'])}"),
        _line("integrity", _integrity(row)),
        _line("calls", _calls(row)),
    ]
    lines.extend(_acts(row))
    lines.append(_line("rejected", _counts(row["rejected"], row["rejections"])))
    lines.append(_line("flags", _counts(sum(row["flags"].values()), row["flags"])))
    lines.append(_line("reverts", _revert_text(row)))  # the reverts that ran
    lines.append(_line("approvals", _approvals(row)))
    lines.append(_line("hypotheses", f"{row['hypotheses']} tested (test-hypothesis calls)"))
    from ..reports import belief_text, supervisor_text

    lines.append(_line("beliefs", belief_text(row["beliefs"])))
    lines.append(_line("supervisor", supervisor_text(row["supervisor"])))
    lines.append(_line("model", _model(row)))
    lines.extend(_spend(row["spend"]))
    lines.append(_line("ended", _ending(row)))
    lines.append(_line("changed", _changed(row["changed"])))
    lines.append(_line("unverified", f"{row['unverified']} change(s) no passing verify followed"))
    return lines


def _line(label: str, text: str) -> str:
    return f"{label:<{LABEL}}{text}"


def _integrity(row: dict[str, Any]) -> str:
    status = row["integrity"] or "not checked"
    return f"{status}: {row['integrity_problem']}" if row["integrity_problem"] else status


def _approvals(row: dict[str, Any]) -> str:
    """Who said no: a human, no one (the approval timed out), or a policy rule (those calls
    were rejected)."""
    by_rule, timeouts = row["rejections"].get("policy", 0), row["approval_timeouts"]
    by_human = row["denied"] - by_rule - timeouts
    text = f"{row['approved']} approved, {by_human} denied by a human"
    if timeouts:
        text += f", {timeouts} denied because no one answered in time"
    if by_rule:
        text += f"; {by_rule} call(s) denied by a policy rule (counted as rejected)"
    return text


def _calls(row: dict[str, Any]) -> str:
    return str(row["counted"])  # the tally's own sentence (journal/view.py)


def _acts(row: dict[str, Any]) -> list[str]:
    """The acts that ran, each with its share of them; past the gate, when that differs."""
    ran = row["ran_acts"]
    if not ran:
        return [_line("acts ran", "none")]
    total = sum(ran.values())
    width = max(map(len, ran))
    lines = [
        _line("acts ran" if index == 0 else "", f"{act:<{width}} {count:>5} {count / total:>7.1%}")
        for index, (act, count) in enumerate(ran.items())
    ]
    if row["acts"] != ran:
        past = ", ".join(f"{act} {count}" for act, count in row["acts"].items())
        lines.append(_line("", f"(past the gate, denied and unfinished calls too: {past})"))
    return lines


def _counts(total: int, by_name: dict[str, int]) -> str:
    if not total:
        return "none"
    return f"{total}: " + ", ".join(f"{name} ×{count}" for name, count in by_name.items())


def _revert_text(row: dict[str, Any]) -> str:
    """The reverts that ran, each with what it undid; the others (denied, unfinished) apart."""
    ran = [revert for revert in row["reverted"] if revert.get("fate") in ("ran", "failed")]
    others = [revert for revert in row["reverted"] if revert not in ran]
    if not ran and not others:
        return "none"
    parts = []
    for revert in ran:
        undid = ", ".join(map(str, revert["undoes"])) or "nothing seen"
        parts.append(f"call {revert['seq']} undid {undid}")
    text = f"{len(ran)} ran" + (": " + "; ".join(parts) if parts else "")
    if others:
        text += "; " + ", ".join(f"call {r['seq']} {r.get('fate')}" for r in others)
    return text


def _model(row: dict[str, Any]) -> str:
    text = f"{row['model_calls']} call(s), {row['model_errors']} error(s), "
    if not row["tokens_reported"]:
        return text + "tokens not reported"
    from ..core import tokens_line

    return text + tokens_line(row["spend"])


def _spend(spend: dict[str, Any]) -> list[str]:
    """Cost, tokens by act type, and the reasons' share, when tokens were reported."""
    from ..journal import dollars

    if not spend["tokens_reported"]:
        return []
    unpriced = f" ({spend['unpriced']} call(s) without a price)" if spend["unpriced"] else ""
    lines = [
        _line(
            "cost",
            f"{dollars(spend['cost'])}{unpriced}; {spend['input_tokens']:,} input tokens "
            f"({spend['cached_tokens']:,} read from the cache, "
            f"{spend['cache_creation_input_tokens']:,} written), "
            f"{spend['output_tokens']:,} output",
        )
    ]
    width = max(map(len, spend["by_act"]), default=0)
    for index, (act, bucket) in enumerate(spend["by_act"].items()):
        tokens = bucket["input_tokens"] + bucket["output_tokens"]
        text = f"{act:<{width}} {tokens:>12,.0f} tokens {dollars(bucket['cost']):>10}"
        lines.append(_line("by act" if index == 0 else "", text))
    if spend["reason_share"] is not None:
        share = f"about {spend['reason_tokens']:,} output tokens, {spend['reason_share']:.1%}"
        lines.append(_line("reasons", f"{share} of the output"))
    return lines


def _ending(row: dict[str, Any]) -> str:
    if row["stop"]:
        return f"{row['stop']}" + (f": {row['stop_message']}" if row["stop_message"] else "")
    if row["unknown"]:
        return f"no stop record; {row['unknown']} call(s) without outcome (running, or killed)"
    return "no stop record (an exec/tool session, or a run still going)"


def _changed(changed: dict[str, list[str]]) -> str:
    parts = [f"{kind} {_paths(paths)}" for kind, paths in changed.items() if paths]
    return "; ".join(parts) if parts else "nothing observed"


def _paths(paths: list[str], most: int = 8) -> str:
    more = f" (+{len(paths) - most} more)" if len(paths) > most else ""
    return ", ".join(paths[:most]) + more


def _cut(text: object, width: int) -> str:
    flat = " ".join(str(text).split())  # a foreign writer's task may not be a string
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# -- diff -------------------------------------------------------------------------------------


def _diff_sessions(given: list[str]) -> tuple[str | None, str | None]:
    """A's and B's --session, each checked as readers check it (UsageError otherwise)."""
    if len(given) > 2:
        raise UsageError(f"--session is given {len(given)} times: once for A, once for B")
    chosen = [session_choice(argparse.Namespace(session=value)) for value in given]
    if "new" in chosen:
        raise UsageError("--session new: a new session has nothing to compare; give an id")
    chosen += [None] * (2 - len(chosen))
    return chosen[0], chosen[1]


def _cmd_diff(args: argparse.Namespace) -> int:
    from ..reports import compare, tasks_differ
    from ..reports import render_diff as render

    chosen = _diff_sessions(args.session or [])
    first = _load(Path(args.a), reading(args.a, chosen[0], strict=True))
    second = _load(Path(args.b), reading(args.b, chosen[1], strict=True))
    if tasks_differ(first, second) and not args.any_task:
        raise UsageError(
            "the two sessions were given different tasks "
            f"(A: {_cut(first.header['task'], 60)!r}; B: {_cut(second.header['task'], 60)!r}); "
            "give --any-task to compare them anyway"
        )
    result = compare(first, second)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return 0
    for key, side in (("a", result["a"]), ("b", result["b"])):
        for note in side["notes"]:
            _note(f"{key} ({side['name']}): {note}")
    _print(render(result))
    return 0
