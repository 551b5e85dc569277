"""Markdown for RATIONALE.md: pure functions from report state to text."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from .records import CallView
from .vocabulary import act_order

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from typing import Any


def header(session: Mapping[str, Any]) -> str:
    lines = ["# RATIONALE", ""]
    if session:
        facts = [
            f"session `{session.get('session', '?')}`",
            f"started {session.get('started', '?')}",
            f"workspace `{session.get('workspace', '?')}`",
        ]
        if session.get("git_head"):
            facts.append(f"git `{str(session['git_head'])[:12]}`")
        facts.append(f"user `{session.get('user', '?')}`")
        facts.append(f"epistemic-agent {session.get('tool_version', '?')}")
        lines += ["_" + " · ".join(facts) + "_", ""]
        policy = session.get("policy")
        if isinstance(policy, dict) and policy.get("source"):
            lines += [
                f"_Policy in force: `{policy['source']}` "
                f"(sha256 `{str(policy.get('sha256'))[:16]}…`)._",
                "",
            ]
        lines += confinement_banner(session.get("confinement"))
        task = session.get("task")
        if isinstance(task, str) and task.strip():
            lines += ["**Task:** " + _one_paragraph(task), ""]
    return "\n".join(lines) + "\n"


def confinement_banner(confinement: object) -> list[str]:
    """A warning, first thing, when acts were not confined as fully as they can be."""
    if not isinstance(confinement, dict):
        return []
    missing = confinement.get("not_held")
    if not isinstance(missing, dict) or not missing:
        return []
    mechanism = str(confinement.get("mechanism", "?"))
    lines = [
        f"> **⚠ Confinement:** acts ran confined by `{_code_text(mechanism)}`; "
        f"{len(missing)} guarantee(s) did not hold on this machine (`epistemic doctor`):"
    ]
    for key, why in missing.items():
        lines.append(f"> - `{_code_text(str(key))}`: {_one_paragraph(str(why))}")
    return [*lines, ""]


def _code_text(text: str) -> str:
    return text.replace("`", "'").replace("\n", " ")


def shape(counts: Mapping[str, int], shell: int, rejected: int) -> str:
    total = sum(counts.values())
    lines = [f"_{total} tool call(s), of which {shell} shell act(s) with a declared intent._"]
    if rejected:
        lines.append(f"_{rejected} call(s) rejected by the gate; they did not run._")
    lines.append("")
    if total:
        lines += ["| act type | calls | share |", "|----------|------:|------:|"]
        for act in sorted(counts, key=act_order):
            if counts[act]:
                lines.append(f"| `{act}` | {counts[act]} | {round(100 * counts[act] / total)}% |")
        lines.append("")
    return "\n".join(lines) + "\n"


def approvals(decisions: Mapping[str, int]) -> str:
    """How many calls a human was asked about, and what they said."""
    asked = sum(decisions.values())
    if not asked:
        return ""
    approved, denied = decisions.get("approved", 0), decisions.get("denied", 0)
    return f"_{asked} call(s) went to a human: {approved} approved, {denied} denied._\n\n"


def model_line(usage: Mapping[str, int], ending: Mapping[str, Any]) -> str:
    if not usage.get("calls"):
        return ""
    if "prompt_tokens" not in usage and "completion_tokens" not in usage:
        tokens = "no token usage reported"
    else:
        tokens = (
            f"{usage.get('prompt_tokens', 0)} prompt + "
            f"{usage.get('completion_tokens', 0)} completion token(s)"
        )
    if usage.get("cached_tokens"):
        tokens += f" ({usage['cached_tokens']} cached)"
    return f"_Model `{ending.get('model', '?')}`: {usage['calls']} model call(s), {tokens}._\n\n"


def ending(ending: Mapping[str, Any]) -> str:
    """How the session ended: the model's final answer and the reason the loop stopped."""
    if "final" not in ending and "stop" not in ending:
        return ""
    lines = ["## How it ended", ""]
    if ending.get("stop"):
        lines += [
            f"**Stopped:** `{ending['stop']}`: {_one_paragraph(str(ending.get('message')))}",
            "",
        ]
    if ending.get("final"):
        lines += ["**Final answer:**", "", _quote(str(ending["final"])), ""]
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.strip().splitlines())


def mismatches(flagged: Sequence[Mapping[str, Any]], total: int) -> str:
    """Where a declaration and the observed behaviour disagree: impossible to miss, so early."""
    if not total:
        return ""
    items = "".join(
        f"- **Call {f['seq']}** ⚠ `{f['flag']}`: {_one_paragraph(str(f['message']))}\n"
        for f in flagged
    )
    more = (
        f"\n_{total} in all; the {len(flagged)} most recent are listed._\n"
        if total > len(flagged)
        else ""
    )
    head = f"{total} mismatch(es) between what calls declared and what they did:"
    return f"## ⚠ Declared versus done\n\n{head}\n\n{items}{more}\n"


def entry(view: CallView) -> str:
    """One numbered narrative entry."""
    act = f"`{view.act}`" if view.act else "(no act)"
    title = f"### {view.seq}. {act} · {view.label}"
    if view.tool != "bash":
        title += f" · {view.tool}"
    parts = [title, "", f"**Why:** {_one_paragraph(view.reason) or '_(no reason given)_'}", ""]
    if view.command:
        parts += [_code(view.command, view.tool == "bash"), ""]
    if view.approval:
        parts += [_approval(view.approval), ""]
    if view.status == "rejected":
        parts += [f"**Rejected** (`{view.rule}`): {_one_paragraph(view.message or '')}", ""]
    elif view.status == "denied":
        parts += [f"**Did not run:** {_one_paragraph(view.outcome)}", ""]
    elif view.status == "unknown":
        parts += [
            "**Outcome:** unknown: no outcome was recorded (still running, or the "
            "session was killed during this call)",
            "",
        ]
    else:
        parts += [f"**Outcome:** {_one_paragraph(view.outcome)}{_observed(view)}", ""]
    parts += [
        f"**⚠ Declared versus done** (`{f.get('flag')}`): {_one_paragraph(str(f.get('message')))}"
        for f in view.flags
    ]
    if view.flags:
        parts.append("")
    return "\n".join(parts) + "\n"


def _approval(approval: Mapping[str, Any]) -> str:
    """Who decided about a call the policy asked about: `**Approved** by alice (terminal)...`."""
    decision = "Approved" if approval.get("decision") == "approved" else "Denied"
    who = approval.get("by") or ("timeout" if approval.get("timed_out") else "nobody")
    rule = approval.get("rule") or "default"
    text = f"**{decision}** by `{who}` via {approval.get('channel', '?')}, {approval.get('t', '?')}"
    text += f" (policy rule `{rule}`)"
    comment = approval.get("comment")
    return text + (f": “{_one_paragraph(str(comment))}”" if comment else "")


def _observed(view: CallView) -> str:
    """What the call was seen to change, and whether its workspace was read-only."""
    notes = []
    if view.enforcement and view.enforcement != "none":
        notes.append(f"workspace read-only ({view.enforcement})")
    if view.observed:
        changed = [
            f"{len(view.observed.get(k, []))} {k}"
            for k in ("created", "modified", "deleted")
            if view.observed.get(k)
        ]
        notes.append("changed: " + ", ".join(changed) if changed else "changed nothing")
    return (" · " + " · ".join(notes)) if notes else ""


def narrative(links: str, entries: Iterable[str]) -> str:
    """The numbered narrative: links to earlier pages (see `page_links`), then this page."""
    return "## Narrative\n\n" + links + "".join(entries)


def page_links(earlier_pages: Iterable[tuple[int, int, str]]) -> str:
    pages = list(earlier_pages)
    if not pages:
        return ""
    links = ", ".join(f"[{first}–{last}]({link})" for first, last, link in pages)
    return f"Earlier calls, one page per {pages[0][1] - pages[0][0] + 1}: {links}.\n\n"


def dead_end(end: Mapping[str, Any]) -> str:
    """One revert, as a list item."""
    return (
        f"- **Call {end['seq']}** ({end.get('label', '?')}): {_one_paragraph(end['reason'])}"
        f" `{_inline(end['command'])}`\n"
    )


def dead_ends(items: Sequence[str], total: int, link: str | None) -> str:
    """The most recent dead ends (all of them when there are few), and where the rest are."""
    lines = "".join(items) or "_No reverts: no change-state was undone._\n"
    more = ""
    if total > len(items):
        more = (
            f"\n_{total} dead ends in all; the {len(items)} most recent are shown. "
            f"All of them: [{link}]({link})._\n"
        )
    return "## Dead ends\n\n" + lines + more + "\n"


def dead_ends_page(items: Iterable[str]) -> str:
    return "# RATIONALE: every dead end\n\n" + "".join(items)


def rejections(by_rule: Mapping[str, int]) -> str:
    lines = ["## Rejections by rule", ""]
    if not by_rule:
        return "\n".join([*lines, "_No call was rejected._"]) + "\n\n"
    lines += ["| rule | calls |", "|------|------:|"]
    lines += [
        f"| `{rule}` | {count} |"
        for rule, count in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return "\n".join(lines) + "\n\n"


def footer(head: str, lines: int) -> str:
    return (
        f"---\n\n_Journal head: `{head}` after {lines} line(s) of "
        "`.epistemic/journal.jsonl`. Check it with `epistemic verify`._\n"
    )


def page(first: int, last: int, entries: Iterable[str]) -> str:
    return f"# RATIONALE: calls {first}–{last}\n\n" + "".join(entries)


def _one_paragraph(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text.strip())


def _inline(text: str) -> str:
    flat = _one_paragraph(text).replace("`", "'")
    return flat if len(flat) <= 160 else flat[:157] + "..."


def _code(text: str, shell: bool) -> str:
    if not shell:
        return f"`{_inline(text)}`"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}bash\n{text.rstrip()}\n{fence}"
