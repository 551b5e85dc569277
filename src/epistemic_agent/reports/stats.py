"""The numbers of `epistemic stats`: one row per session (sessions.summary plus a few extras),
their totals over many sessions, and what each revert undid. Read from the journal alone."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import act_order, workspace_of
from ..journal import BUCKET, RAN, Ledger, Loaded, dollars, seq_of, spend_of
from ..journal import session_summary as summary
from .stats_table import fit, terminal_width, wrapped
from .trace.model import build

if TYPE_CHECKING:
    from typing import Any

    from ..journal import CallView, Record

#: Row keys summed as they are into the totals.
SUMMED = (
    "calls",
    "ran",
    "rejected",
    "failed",
    "unknown",
    "reverts",
    "reverts_ran",
    "approved",
    "denied",
    "approval_timeouts",
    "hypotheses",
    "model_calls",
    "model_errors",
    "tokens_reported",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "input_tokens",
    "files_changed",
    "unverified",
)
#: The record kinds a session's spend is counted from.
SPENT = ("model", "thinking", "compaction")
#: Row keys holding {name: count}, summed name by name.
COUNTED = ("acts", "rejections", "flags", "fates", "ran_acts")
CHANGE_KEYS = ("created", "modified", "deleted")


def session_stats(loaded: Loaded) -> dict[str, Any]:
    """One session's row: `sessions.summary` and the extras documented in docs/stats.md."""
    row = summary(loaded)
    model = loaded.of_kind("model")
    ending = loaded.of_kind("stop")
    integrity = loaded.integrity
    row.update(
        started=loaded.header.get("started"),
        ran=sum(row["fates"][fate] for fate in ("ran", "failed", "cancelled", "aborted")),
        rejected=sum(row["rejections"].values()),
        model_errors=len(loaded.of_kind("model-error")),
        tokens_reported=sum(1 for r in model if _count(r.get("prompt_tokens")) is not None),
        cached_tokens=sum(_count(r.get("cached_tokens")) or 0 for r in model),
        files_changed=len({p for key in CHANGE_KEYS for p in row["changed"][key]}),
        stop_message=_text(ending[-1].get("message")) if ending else None,
        reverted=revert_calls(loaded),
        integrity_problem=integrity.problem if integrity else None,
        spend=spend_of([r for r in loaded.records if r.get("kind") in SPENT]).to_json(),
    )
    row["cost"] = row["spend"]["cost"]
    row.update(beliefs_stats(loaded.records))
    row["unverified"] = unverified_changes(loaded)
    row["undone"] = sorted({seq for revert in row["reverted"] for seq in revert["undoes"]})
    row["notes"] = [*row["notes"], *_verify_notes(loaded)]
    return row


def unverified_changes(loaded: Loaded) -> int:
    """Change-state and revert calls that changed a file no passing verify followed
    (reports/trace/model.py; the `trace/unverified` findings of lint)."""

    trace = build(loaded, evidence=False)
    return len(
        {
            c.seq
            for c in trace.unverified()
            if trace.calls[c.seq]["act"] in ("change-state", "revert")
        }
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: Any) -> int | None:
    """A token count as the provider reported it; None when it did not (or sent a non-number)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _verify_notes(loaded: Loaded) -> list[str]:
    return [f"verify: {note}" for note in loaded.integrity.notes] if loaded.integrity else []


def revert_calls(loaded: Loaded) -> list[dict[str, Any]]:
    """Each revert call: its command, the paths it touched, and the earlier calls it undid
    (mutating calls that changed one of those paths since the last revert of that path)."""
    declared = {seq: r for r in loaded.of_kind("call") if (seq := seq_of(r)) is not None}
    changed_by: dict[str, list[int]] = {}
    found: list[dict[str, Any]] = []
    for view in loaded.views:
        if view.status == "rejected":
            continue
        paths = touched(view, declared.get(view.seq, {}))
        if view.act == "revert":
            done = view.fate in RAN  # a revert that did not run undid nothing
            undoes = {seq for path in paths for seq in changed_by.pop(path, [])} if done else ()
            found.append(_revert(view, paths, sorted(undoes)))
        elif view.status == "denied":
            continue
        elif view.mutating:
            for path in paths:
                changed_by.setdefault(path, []).append(view.seq)
    return found


def _revert(view: CallView, paths: list[str], undoes: list[int]) -> dict[str, Any]:
    return {
        "seq": view.seq,
        "status": view.status,
        "fate": view.fate,
        "ok": view.ok,
        "command": view.command,
        "reason": view.reason,
        "paths": paths,
        "observed": view.observed is not None,
        "undoes": undoes,
    }


def touched(view: CallView, declaration: Record) -> list[str]:
    """The paths a call was seen to change; when it was not observed, the ones it declared."""
    if view.observed is not None:
        lists = [view.observed.get(key) for key in CHANGE_KEYS]
    else:
        effect = declaration.get("effect")
        effect = effect if isinstance(effect, dict) else {}
        path = declaration.get("path")
        lists = [effect.get("writes"), effect.get("deletes"), [path] if view.mutating else None]
    paths = [str(p) for items in lists if isinstance(items, list) for p in items if p]
    return list(dict.fromkeys(paths))


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The sums over many sessions' rows (see docs/stats.md for each key)."""
    result: dict[str, Any] = {"sessions": len(rows)}
    for key in SUMMED:
        result[key] = sum(int(row.get(key) or 0) for row in rows)
    for key in COUNTED:
        counts: Counter[str] = Counter()
        for row in rows:
            counts.update(row.get(key) or {})
        result[key] = dict(counts)
    acts = result["acts"] = {
        act: result["acts"][act] for act in sorted(result["acts"], key=act_order)
    }
    total = sum(acts.values())
    result["shares"] = {act: round(count / total, 4) for act, count in acts.items()}
    known = [row["wall_time"] for row in rows if isinstance(row.get("wall_time"), int | float)]
    result["wall_time"] = round(sum(known), 3) if known else None
    result["stops"] = dict(Counter(str(row.get("stop") or "none") for row in rows))
    result["integrity"] = dict(Counter(str(row.get("integrity") or "unchecked") for row in rows))
    result["with_notes"] = sum(1 for row in rows if row.get("notes"))
    result["spend"] = summed_spend([row["spend"] for row in rows if row.get("spend")])
    result["cost"] = result["spend"]["cost"]
    for key in ("beliefs", "supervisor"):
        summed: Counter[str] = Counter()
        for row in rows:
            summed.update(row.get(key) or {})
        result[key] = dict(summed)
    return result


def beliefs_stats(records: list[Record]) -> dict[str, Any]:
    """Beliefs tested and how they were settled; the supervisor's reviews and its own
    tokens and cost (apart from the agent's)."""

    ledger = Ledger()
    for record in records:
        ledger.fold(record)
    reviews = ledger.reviews
    return {
        "beliefs": ledger.counts(),
        "supervisor": {
            "reviews": sum(reviews.values()),
            **{key: reviews[key] for key in ("ok", "flag", "block", "failed")},
            "input_tokens": ledger.spend["input_tokens"],
            "completion_tokens": ledger.spend["completion_tokens"],
            "cost": round(ledger.cost, 6),
        },
    }


# -- text: many sessions, one line each -------------------------------------------------------

#: The table's act columns: short headers, in vocabulary order.
ACT_COLUMNS = {
    "collect-info": "info",
    "test-hypothesis": "hyp",
    "verify": "ver",
    "change-state": "chg",
    "setup": "set",
    "revert": "rev",
    "cleanup": "cln",
}


def table(rows: list[dict[str, Any]], total: dict[str, Any], width: int | None = None) -> list[str]:
    """One line per session, then TOTALS, then the act shares over all of them; as wide as
    the terminal (stats_table.py), or `width`."""

    width = terminal_width() if width is None else width
    header = ["session", "calls", *ACT_COLUMNS.values(), "rej", "fail", "unk"]
    header += ["flag", "appr", "deny", "wall", "model", "tokens", "cost", "stop", "chain", "task"]
    body = [_cells(row, name) for row, name in zip(rows, labels(rows), strict=True)]
    footer = _cells({**total, "task": "", "stop": "", "integrity": ""}, "TOTALS")
    text = frozenset({len(header) - 3, len(header) - 2, len(header) - 1})
    lines = fit([header, *body, footer], text, width)
    shares = " · ".join(
        f"{act}{f' ({ACT_COLUMNS[act]})' if act in ACT_COLUMNS else ''} {share:.1%}"
        for act, share in total["shares"].items()
    )
    lines += wrapped(
        "the act columns count the calls that ran (rej: rejected, deny: denied by a human or "
        "a policy rule, unk: without an outcome); the shares, the calls past the gate",
        width,
        " ",
    )
    lines += wrapped(f"shares over {total['sessions']} sessions: {shares or 'no calls'}", width)
    beliefs, supervisor = total.get("beliefs") or {}, total.get("supervisor") or {}
    if beliefs.get("tested") or supervisor.get("reviews"):
        both = f"beliefs: {belief_text(beliefs)}; supervisor: {supervisor_text(supervisor)}"
        lines += wrapped(both, width, ", ")
    return lines


def belief_text(beliefs: dict[str, Any]) -> str:
    return (
        f"{beliefs.get('tested', 0)} tested, {beliefs.get('confirmed', 0)} confirmed, "
        f"{beliefs.get('refuted', 0)} refuted, {beliefs.get('unsettled', 0)} unsettled"
    )


def supervisor_text(supervisor: dict[str, Any]) -> str:
    if not supervisor.get("reviews"):
        return "none"
    tokens = supervisor.get("input_tokens", 0) + supervisor.get("completion_tokens", 0)
    return (
        f"{supervisor['reviews']} review(s), {supervisor.get('flag', 0)} flagged, "
        f"{supervisor.get('block', 0)} blocked, {supervisor.get('failed', 0)} failed "
        f"({tokens} tokens of its own, {dollars(supervisor.get('cost') or None)})"
    )


def labels(rows: list[dict[str, Any]]) -> list[str]:
    """Short names: each workspace relative to the folder all of them share, followed by the
    first 8 digits of the session's id (`ws:1a2b3c4d`) when the rows hold several sessions of
    that workspace. A bare journal file (not in a record folder) is named by its file when its
    folder is another's."""

    if len(rows) < 2:
        return [row["name"] for row in rows]
    journals = [Path(row["journal"]) for row in rows]
    workspaces = [str(Loaded(journal, [], []).workspace) for journal in journals]
    shared = Counter(workspaces)
    places, ids = [], []
    for journal, folder, row in zip(journals, workspaces, rows, strict=True):
        session = row.get("session")
        if shared[folder] > 1 and workspace_of(journal.parent) and isinstance(session, str):
            places.append(folder)  # sessions of one workspace: told apart by their ids
            ids.append(f":{session[:8]}")
        elif shared[folder] > 1:
            places.append(str(journal.with_name(journal.name.removesuffix(".jsonl"))))
            ids.append("")
        else:
            places.append(folder)
            ids.append("")
    common = os.path.commonpath(places)
    return [
        (os.path.relpath(place, common) if place != common else row["name"]) + short
        for place, row, short in zip(places, rows, ids, strict=True)
    ]


def _cells(row: dict[str, Any], name: str) -> list[str]:
    acts = [str(row["ran_acts"].get(act, 0)) for act in ACT_COLUMNS]  # the calls that ran
    counts = [row[key] for key in ("rejected", "failed", "unknown")]
    counts += [sum(row["flags"].values()), row["approved"], row["denied"]]
    spend = row["spend"]
    tokens = spend["input_tokens"] + spend["output_tokens"] if row["tokens_reported"] else "-"
    task = " ".join(row["task"].split()) if isinstance(row.get("task"), str) else "-"
    ending = [str(row["stop"] or "-"), str(row["integrity"] or "-"), task]
    cells = [name, str(row["calls"]), *acts, *map(str, counts), duration(row["wall_time"])]
    return [*cells, str(row["model_calls"]), str(tokens), dollars(row.get("cost")), *ending]


def duration(seconds: float | None) -> str:
    """1.1s, 3m20s, 2h05m; - when unknown."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


def summed_spend(spends: list[dict[str, Any]]) -> dict[str, Any]:
    """Several sessions' `spend` objects added up (the shares recomputed, not summed)."""
    total: dict[str, Any] = {key: 0 for key in SPEND_SUMMED}
    acts: dict[str, dict[str, Any]] = {}
    costs = [s["cost"] for s in spends if s.get("cost") is not None]
    for spend in spends:
        for key in SPEND_SUMMED:
            total[key] += spend.get(key) or 0
        for act, bucket in (spend.get("by_act") or {}).items():
            into = acts.setdefault(act, dict.fromkeys(BUCKET, 0))
            for key in BUCKET:
                into[key] += bucket.get(key) or 0
    total["cost"] = round(sum(costs), 6) if costs else None
    basis = total["reason_output_tokens"]
    total["reason_share"] = round(total["reason_tokens"] / basis, 4) if basis else None
    for bucket in acts.values():
        bucket["cost"] = round(bucket["cost"], 6) if costs else None
    total["by_act"] = acts
    return total


SPEND_SUMMED = (
    "model_calls",
    "tokens_reported",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "cache_creation_input_tokens",
    "reasoning_tokens",
    "unpriced",
    "reason_tokens",
    "reason_output_tokens",
    "thinking_records",
    "compactions",
)
