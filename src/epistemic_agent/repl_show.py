"""The REPL's `/show N`: one call of the session as its journal records it, as text."""

from __future__ import annotations

from .safetext import visible

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from pathlib import Path

    from .records import CallView


def show_call(journal: Path, given: str) -> str:
    """Call `given` (its seq) of the journal, or a line saying why it cannot be shown."""
    from .journal import read_records
    from .records import merge_calls

    word = given.strip().lstrip("#")
    if not word.isdigit():
        return "/show needs a call number, e.g. /show 3"
    seq = int(word)
    records, _ = read_records(journal)
    views = merge_calls(records)
    found = [view for view in views if view.seq == seq]
    if not found:
        span = f"calls 1–{views[-1].seq}" if views else "no calls yet"
        return f"no call {seq} in this session ({span})"
    return "\n".join(_lines(found[0]))


def _lines(view: CallView) -> list[str]:
    status = view.label
    if view.returncode is not None:
        status += f" (exit {view.returncode})"
    fields = [
        ("act", view.act or "-"),
        ("tool", view.tool),
        ("reason", view.reason),
        ("command", view.command),
        ("rule", f"{view.rule}: {view.message}" if view.rule else ""),
        ("outcome", view.outcome),
        ("at", view.t),
    ]
    if view.flags:
        flagged = "; ".join(f"{f.get('flag')}: {f.get('message', '')}" for f in view.flags)
        fields.append(("flags", flagged))
    if view.approval is not None:
        approval = view.approval
        fields.append(
            (
                "approval",
                f"{approval.get('decision')} by {approval.get('by') or '-'} "
                f"({approval.get('channel') or '-'}) {approval.get('comment') or ''}".strip(),
            )
        )
    lines = [f"call {view.seq}: {visible(status)}"]
    lines += [f"  {name:<9}{visible(text)}" for name, text in fields if text]
    return lines
