"""What one loaded session amounts to: the numbers `stats` prints, the files its calls changed,
the seq of each call."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..core import act_order, input_sum
from .log import Record
from .sessions import Loaded
from .view import FATES

if TYPE_CHECKING:
    from typing import Any


def summary(session: Loaded) -> dict[str, Any]:
    """The numbers `stats` prints for one session (JSON-ready; stable keys, additive only)."""
    views, tally = session.views, session.tally
    acts = Counter({act: n for act, n in tally.declared.items() if act and n})
    total = sum(acts.values())
    model = session.of_kind("model")
    ending = session.of_kind("stop")
    flags = Counter(str(f.get("flag")) for v in views for f in v.flags)
    fates = tally.counted
    return {
        "session": session.header.get("session"),
        "journal": str(session.journal),
        "name": session.name,
        "task": session.header.get("task"),
        "model": session.header.get("model"),
        "calls": len(views),
        "acts": {act: acts[act] for act in sorted(acts, key=act_order)},
        "shares": {act: round(acts[act] / total, 4) for act in sorted(acts, key=act_order)},
        "rejections": dict(tally.rejected),
        "failed": fates.get("failed", 0),
        "unknown": fates.get("unknown", 0),
        "flags": dict(flags),
        "reverts": acts.get("revert", 0),
        "dead_ends": [v.seq for v in views if v.act == "revert" and v.status != "rejected"],
        "approved": tally.approvals.get("approved", 0),
        "denied": tally.approvals.get("denied", 0) + tally.rejected.get("policy", 0),
        "approval_timeouts": tally.timeouts,
        "fates": {fate: fates.get(fate, 0) for fate in FATES},
        "ran_acts": {act: tally.ran[act] for act in sorted(tally.ran, key=act_order) if act},
        "reverts_ran": len(tally.reverts),
        "dead_ends_ran": list(tally.reverts),
        "counted": tally.sentence(),
        "hypotheses": acts.get("test-hypothesis", 0),
        "wall_time": session.wall_time,
        "model_calls": len(model),
        "prompt_tokens": _sum(model, "prompt_tokens"),
        "completion_tokens": _sum(model, "completion_tokens"),
        "input_tokens": input_sum(model),  # all input, cached or not (tokens_text.py)
        "stop": ending[-1].get("reason") if ending else None,
        "changed": changed_files(session),
        "integrity": session.integrity.status if session.integrity else None,
        "notes": list(session.notes),
    }


def _sum(records: list[Record], key: str) -> int:
    return sum(value for r in records if isinstance(value := r.get(key), int))


def changed_files(session: Loaded) -> dict[str, list[str]]:
    """The workspace paths the session's calls were seen to create, modify and delete."""
    changed: dict[str, dict[str, None]] = {"created": {}, "modified": {}, "deleted": {}}
    for view in session.views:
        for key, paths in (view.observed or {}).items():
            if key in changed and isinstance(paths, list):
                changed[key].update(dict.fromkeys(str(p) for p in paths))
    return {key: sorted(paths) for key, paths in changed.items()}
