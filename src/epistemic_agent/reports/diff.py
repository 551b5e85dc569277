"""`epistemic diff`: two sessions side by side, from their journals alone: shape against
shape, the act sequences aligned, where they first diverge, what each changed and reverted,
and how each ended."""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from ..core import act_order
from ..journal import Loaded, dollars
from .stats import session_stats

if TYPE_CHECKING:
    from typing import Any

    from ..journal import CallView

REJECTED = "REJECTED"
FINAL_EXCERPT = 500  # characters of the final answer kept in `ending.final`
MARKERS = {"equal": "=", "replace": "~", "delete": "<", "insert": ">"}


def tasks_differ(a: Loaded, b: Loaded) -> bool:
    """Both headers name a task and the tasks differ (whitespace aside)."""
    first, second = a.header.get("task"), b.header.get("task")
    if not isinstance(first, str) or not isinstance(second, str):
        return False
    return first.split() != second.split()


def compare(a: Loaded, b: Loaded) -> dict[str, Any]:
    """The whole comparison, JSON-ready (keys documented in docs/stats.md)."""
    alignment = align(a.views, b.views)
    tasks = [side.header.get("task") for side in (a, b)]
    known = [task for task in tasks if isinstance(task, str)]
    return {
        "task": known[0] if len(known) == 2 and not tasks_differ(a, b) else None,
        "same_task": None if len(known) < 2 else not tasks_differ(a, b),
        "a": side(a),
        "b": side(b),
        "alignment": alignment,
        "divergence": divergence(alignment, a.views, b.views),
    }


def side(loaded: Loaded) -> dict[str, Any]:
    """One session's half of the comparison."""
    row = session_stats(loaded)
    finals = loaded.of_kind("final")
    final = finals[-1].get("text") if finals else None
    return {
        "name": row["name"],
        "journal": str(loaded.journal.resolve()),
        **{key: row[key] for key in ("session", "task", "model")},
        "integrity": row["integrity"],
        "notes": row["notes"],
        "shape": {key: row[key] for key in ("calls", "rejected", "acts", "shares")},
        "changed": row["changed"],
        "reverts": row["reverted"],
        "spend": row["spend"],
        "ending": {
            "stop": row["stop"],
            "message": row["stop_message"],
            "final": _excerpt(final) if isinstance(final, str) else None,
            "failed": row["failed"],
            "unknown": row["unknown"],
        },
    }


def _excerpt(text: str) -> str:
    """The final answer as written, cut at FINAL_EXCERPT characters."""
    return text if len(text) <= FINAL_EXCERPT else text[: FINAL_EXCERPT - 1] + "…"


def label(view: CallView) -> str:
    """What the alignment compares: the act, or REJECTED for a call the gate refused."""
    return REJECTED if view.status == "rejected" else (view.act or "?")


def align(first: list[CallView], second: list[CallView]) -> list[dict[str, Any]]:
    """The two act sequences aligned by difflib, one row per pair (or lone call)."""

    labels = [label(v) for v in first], [label(v) for v in second]
    matcher = SequenceMatcher(None, *labels, autojunk=False)  # 7 labels: all would be "junk"
    rows: list[dict[str, Any]] = []
    for op, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        left, right = first[a_start:a_end], second[b_start:b_end]
        for index in range(max(len(left), len(right))):
            a = left[index] if index < len(left) else None
            b = right[index] if index < len(right) else None
            kind = op if op != "replace" or (a and b) else ("delete" if a else "insert")
            rows.append({"op": kind, "a": _step(a), "b": _step(b)})
    return rows


def _step(view: CallView | None) -> dict[str, Any] | None:
    if view is None:
        return None
    return {"seq": view.seq, "label": label(view), "status": view.status, "ok": view.ok}


def divergence(
    rows: list[dict[str, Any]], first: list[CallView], second: list[CallView]
) -> dict[str, Any] | None:
    """The first aligned row whose two sides differ, with both calls in full; None if none."""
    by_seq = {v.seq: v for v in first}, {v.seq: v for v in second}
    for index, row in enumerate(rows):
        if row["op"] != "equal":
            calls = [
                _call(views[step["seq"]]) if step else None
                for views, step in zip(by_seq, (row["a"], row["b"]), strict=True)
            ]
            return {"index": index, "op": row["op"], "a": calls[0], "b": calls[1]}
    return None


def _call(view: CallView) -> dict[str, Any]:
    return {
        "seq": view.seq,
        "act": view.act,
        "status": view.status,
        "rule": view.rule,
        "command": view.command,
        "reason": view.reason,
        "outcome": view.outcome,
    }


# -- text -------------------------------------------------------------------------------------


def render(result: dict[str, Any]) -> list[str]:
    """The comparison as text lines."""
    a, b = result["a"], result["b"]
    lines = [f"a  {a['name']}  {a['journal']}  ({a['integrity'] or 'unchecked'})"]
    lines.append(f"b  {b['name']}  {b['journal']}  ({b['integrity'] or 'unchecked'})")
    if result["same_task"]:
        lines.append(f"task (the same): {_cut(result['task'], 100)}")
    else:
        for key, data in (("a", a), ("b", b)):
            lines.append(f"task {key}: {_cut(data['task'], 100) if data['task'] else '(none)'}")
    for section in (_shape, _sequence, _divergence, _changed, _reverts, _cost, _endings):
        lines.append("")
        lines.extend(section(result))
    return lines


def _shape(result: dict[str, Any]) -> list[str]:
    a, b = result["a"]["shape"], result["b"]["shape"]
    acts = sorted({*a["acts"], *b["acts"]}, key=act_order)
    lines = [f"{'shape':<16} {'a':>12} {'b':>12} {'b-a':>6}"]
    for act in acts:
        counts = a["acts"].get(act, 0), b["acts"].get(act, 0)
        cells = [
            f"{n:>4} {_share(s['shares'].get(act)):>7}" for n, s in zip(counts, (a, b), strict=True)
        ]
        lines.append(f"{act:<16} {cells[0]:>12} {cells[1]:>12} {counts[1] - counts[0]:>+6}")
    for key in ("rejected", "calls"):
        lines.append(f"{key:<16} {a[key]:>4}{'':8} {b[key]:>4}{'':8} {b[key] - a[key]:>+6}")
    return lines


def _share(value: float | None) -> str:
    return f"{100 * value:.1f}%" if value is not None else "-"


def _sequence(result: dict[str, Any]) -> list[str]:
    lines = ["sequence (= same act, ~ different act, < only in a, > only in b)"]
    for row in result["alignment"]:
        lines.append(f"  {MARKERS[row['op']]} {_cell(row['a']):<34}| {_cell(row['b'])}".rstrip())
    return lines


def _cell(step: dict[str, Any] | None) -> str:
    if step is None:
        return ""
    status = "failed" if step["status"] == "ran" and step["ok"] is False else step["status"]
    suffix = f" ({status})" if status in ("failed", "unknown", "denied") else ""
    return f"{step['seq']:>4} {step['label']}{suffix}"


def _divergence(result: dict[str, Any]) -> list[str]:
    found = result["divergence"]
    if found is None:
        return ["first divergence: none (the two act sequences are the same)"]
    lines = [f"first divergence at row {found['index'] + 1} ({found['op']}):"]
    for key in ("a", "b"):
        call = found[key]
        if call is None:
            lines.append(f"  {key}  (no call here)")
            continue
        act = f"REJECTED ({call['rule']})" if call["status"] == "rejected" else call["act"]
        lines.append(f"  {key}  call {call['seq']} {act}: {_cut(call['command'], 80)}")
        lines.append(f"      reason: {_cut(call['reason'], 100)}")
    return lines


def _changed(result: dict[str, Any]) -> list[str]:
    lines = ["changed files"]
    for key in ("a", "b"):
        changed = result[key]["changed"]
        parts = [f"{kind} {', '.join(paths)}" for kind, paths in changed.items() if paths]
        lines.append(f"  {key}  {'; '.join(parts) if parts else 'none'}")
    return lines


def _reverts(result: dict[str, Any]) -> list[str]:
    lines = ["reverts"]
    for key in ("a", "b"):
        found = result[key]["reverts"]
        if not found:
            lines.append(f"  {key}  none")
        for revert in found:
            undid = ", ".join(map(str, revert["undoes"])) or "no earlier change seen"
            touched = ", ".join(revert["paths"]) or "no path seen"
            lines.append(f"  {key}  call {revert['seq']}: {_cut(revert['command'], 70)}")
            lines.append(f"      touched {touched}; undid call(s) {undid}")
    return lines


def _cost(result: dict[str, Any]) -> list[str]:
    """Tokens and cost of each side, in all and per act type."""

    a, b = result["a"]["spend"], result["b"]["spend"]
    lines = [f"{'cost':<16} {'a':>22} {'b':>22}"]
    for label, key in (("input tokens", "input_tokens"), ("output tokens", "output_tokens")):
        lines.append(f"{label:<16} {a[key]:>22,} {b[key]:>22,}")
    lines.append(f"{'cached (read)':<16} {a['cached_tokens']:>22,} {b['cached_tokens']:>22,}")
    lines.append(f"{'dollars':<16} {dollars(a['cost']):>22} {dollars(b['cost']):>22}")
    acts = sorted(
        {*a["by_act"], *b["by_act"]}, key=lambda act: (act.startswith("("), act_order(act))
    )
    for act in acts:
        cells = [_act_cost(side["by_act"].get(act)) for side in (a, b)]
        lines.append(f"{act:<16} {cells[0]:>22} {cells[1]:>22}")
    return lines


def _act_cost(bucket: dict[str, Any] | None) -> str:

    if bucket is None:
        return "-"
    tokens = bucket["input_tokens"] + bucket["output_tokens"]
    return f"{tokens:,.0f} tok {dollars(bucket['cost'])}"


def _endings(result: dict[str, Any]) -> list[str]:
    lines = ["ended"]
    for key in ("a", "b"):
        ending = result[key]["ending"]
        stop = ending["stop"] or "no stop record"
        message = f": {ending['message']}" if ending["message"] else ""
        counts = f"{ending['failed']} failed, {ending['unknown']} unknown"
        lines.append(f"  {key}  {stop}{message} ({counts})")
        if ending["final"]:
            lines.append(f"      final: {_cut(ending['final'], 160)}")
    return lines


def _cut(text: object, width: int) -> str:
    flat = " ".join(str(text if text is not None else "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
