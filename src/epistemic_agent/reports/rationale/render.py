"""Markdown for RATIONALE.md: pure functions from report state to text. Every piece of journal
text goes through mdsafe (escaped, a code span, or a fenced block): it cannot make structure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ...core import act_order, tokens_line
from ...journal import CallView
from .mdsafe import block, code, prose, text, visible

if TYPE_CHECKING:
    from typing import Any

    from ...journal import Tally


def header(session: Mapping[str, Any], warning: Sequence[str] = ()) -> str:
    lines = ["# RATIONALE", "", *chain_warning(warning)]
    if session:
        facts = [
            f"session {code(session.get('session', '?'))}",
            f"started {text(session.get('started', '?'))}",
            f"workspace {code(session.get('workspace', '?'))}",
        ]
        if session.get("git_head"):
            facts.append(f"git {code(str(session['git_head'])[:12])}")
        facts.append(f"user {code(session.get('user', '?'))}")
        facts.append(f"epistemic-agent {text(session.get('tool_version', '?'))}")
        lines += ["_" + " · ".join(facts) + "_", ""]
        policy = session.get("policy")
        if isinstance(policy, dict) and policy.get("source"):
            lines += [
                f"_Policy in force: {code(policy['source'])} "
                f"(sha256 {code(str(policy.get('sha256'))[:16])}…)._",
                "",
            ]
        lines += confinement_banner(session.get("confinement"))
        task = session.get("task")
        if isinstance(task, str) and task.strip():
            lines += [prose("**Task:**", task), ""]
    return "\n".join(lines) + "\n"


def chain_warning(warning: Sequence[str]) -> list[str]:
    """The reader's notice that the journal does not verify (journal/notice.py), first thing."""
    if not warning:
        return []
    first, *rest = warning
    return [f"> **⚠ {text(first)}**", *(f">\n> {text(line)}" for line in rest), ""]


def confinement_banner(confinement: object) -> list[str]:
    """A warning, first thing, when acts were not confined as fully as they can be."""
    if not isinstance(confinement, dict):
        return []
    missing = confinement.get("not_held")
    if not isinstance(missing, dict) or not missing:
        return []
    mechanism = confinement.get("mechanism", "?")
    lines = [
        f"> **⚠ Confinement:** acts ran confined by {code(mechanism)}; "
        f"{len(missing)} guarantee(s) did not hold on this machine (`epistemic doctor`):"
    ]
    for key, why in missing.items():
        lines.append(f"> - {code(key)}: {text(why)}")
    return [*lines, ""]


def shape(tally: Tally) -> str:
    """The shape of the session: what its calls came to, in words, then the acts that ran."""
    ran = {act: n for act, n in tally.ran.items() if n}
    total = sum(ran.values())
    said = tally.sentence()
    lines = [f"_{said[:1].upper()}{said[1:]}._"]
    if total:
        shell = "was a shell act" if tally.shell == 1 else "were shell acts"
        lines[0] = f"_{said}; {tally.shell} of the {total} that ran {shell}._"
    not_run = tally.calls - total - len(tally.open)
    if not_run:
        lines.append("_The table counts the calls that ran: a rejected or denied call did not._")
    lines.append("")
    if total:
        lines += ["| act type | calls that ran | share |", "|----------|------:|------:|"]
        for act in sorted(ran, key=act_order):
            share = round(100 * ran[act] / total)
            lines.append(f"| {code(act, cell=True)} | {ran[act]} | {share}% |")
        lines.append("")
    return "\n".join(lines) + "\n"


def approvals(tally: Tally) -> str:
    """How many calls a human was asked about, and what came of it."""
    decisions = tally.approvals
    asked = sum(decisions.values())
    if not asked:
        return ""
    approved, denied = decisions.get("approved", 0), decisions.get("denied", 0)
    by_time = f" ({tally.timeouts} of them when no one answered in time)" if tally.timeouts else ""
    return f"_{asked} call(s) went to a human: {approved} approved, {denied} denied{by_time}._\n\n"


def model_line(
    usage: Mapping[str, int], ending: Mapping[str, Any], spend: Mapping[str, Any] | None = None
) -> str:

    if not usage.get("calls"):
        return ""
    if spend is not None and spend.get("tokens_reported"):
        tokens = tokens_line(spend)
    elif "prompt_tokens" not in usage and "completion_tokens" not in usage:
        tokens = "no token usage reported"
    else:  # a report folded before spend was kept: the provider's own figures
        tokens = (
            f"{usage.get('prompt_tokens', 0)} prompt + "
            f"{usage.get('completion_tokens', 0)} completion token(s)"
        )
        if usage.get("cached_tokens"):
            tokens += f" ({usage['cached_tokens']} cached)"
    return (
        f"_Model {code(ending.get('model', '?'))}: {usage['calls']} model call(s), {tokens}._\n\n"
    )


def ending(ending: Mapping[str, Any]) -> str:
    """How the session ended: the model's final answer and the reason the loop stopped."""
    if "final" not in ending and "stop" not in ending:
        return ""
    lines = ["## How it ended", ""]
    if ending.get("stop"):
        lines += [prose(f"**Stopped:** {code(ending['stop'])}:", ending.get("message")), ""]
    if ending.get("final"):
        lines += ["**Final answer:**", "", _quote(str(ending["final"])), ""]
    return "\n".join(lines) + "\n"


def _quote(answer: str) -> str:
    """One line as a quote; several, as written, in a block (its Markdown is not rendered)."""
    body = answer.strip()
    return block(body) if "\n" in body or "\r" in body else "> " + text(body, line_start=True)


def mismatches(flagged: Sequence[Mapping[str, Any]], total: int) -> str:
    """Where a declaration and the observed behaviour disagree: impossible to miss, so early."""
    if not total:
        return ""
    items = "".join(
        f"- **Call {text(f['seq'])}** ⚠ {code(f['flag'])}: {text(f['message'])}\n" for f in flagged
    )
    more = (
        f"\n_{total} in all; the {len(flagged)} most recent are listed._\n"
        if total > len(flagged)
        else ""
    )
    head = f"{total} mismatch(es) between what calls declared and what they did:"
    return f"## ⚠ Declared versus done\n\n{head}\n\n{items}{more}\n"


def entry(view: CallView, said: str = "", diff: str = "") -> str:
    """One numbered narrative entry; `said` (the model's words before the call) and `diff` (the
    call's diff) are Markdown already made inert (rationale/words.py, diffs.py)."""
    act = code(view.act) if view.act else "(no act)"
    title = f"### {view.seq}. {act} · {view.label}"
    if view.tool != "bash":
        title += f" · {text(view.tool)}"
    why = prose("**Why:**", view.reason) if view.reason.strip() else "**Why:** _(no reason given)_"
    parts = [title, "", said + why, ""]
    if view.command:
        parts += [block(view.command, "bash") if view.tool == "bash" else code(view.command), ""]
    if view.approval:
        parts += [_approval(view.approval), ""]
    if view.status == "rejected":
        parts += [prose(f"**Rejected** ({code(view.rule)}):", view.message or ""), ""]
    elif view.status == "denied":
        parts += [prose("**Did not run:**", view.outcome), ""]
    elif view.status == "unknown":
        parts += [
            "**Outcome:** unknown: no outcome was recorded (still running, or the "
            "session was killed during this call)",
            "",
        ]
    else:
        parts += [_outcome(view), ""]
    if diff:
        parts += [diff.rstrip("\n"), ""]
    parts += [
        f"**⚠ Declared versus done** ({code(f.get('flag'))}): {text(f.get('message'))}"
        for f in view.flags
    ]
    if view.flags:
        parts.append("")
    return "\n".join(parts) + "\n"


def _outcome(view: CallView) -> str:
    """`**Outcome:** rc=0 — ok · changed nothing`; an outcome of several lines in a block."""
    shown = prose("**Outcome:**", view.outcome)
    if "\n" not in shown:
        return shown + _observed(view)
    label, rest = shown.split("\n", 1)
    return label + _observed(view) + "\n" + rest


def _approval(approval: Mapping[str, Any]) -> str:
    """Who decided about a call the policy asked about: `**Approved** by alice (terminal)...`."""
    decision = "Approved" if approval.get("decision") == "approved" else "Denied"
    who = approval.get("by") or ("timeout" if approval.get("timed_out") else "nobody")
    rule = approval.get("rule") or "default"
    channel, when = text(approval.get("channel", "?")), text(approval.get("t", "?"))
    line = f"**{decision}** by {code(who)} via {channel}, {when} (policy rule {code(rule)})"
    comment = approval.get("comment")
    return line + (f": “{text(comment)}”" if comment else "")


def _observed(view: CallView) -> str:
    """What the call was seen to change, and whether its workspace was read-only."""
    notes = []
    if view.enforcement and view.enforcement != "none":
        notes.append(f"workspace read-only ({text(view.enforcement)})")
    if view.observed:
        changed = [
            f"{len(view.observed.get(k, []))} {k}"
            for k in ("created", "modified", "deleted")
            if view.observed.get(k)
        ]
        notes.append("changed: " + ", ".join(changed) if changed else "changed nothing")
    return (" · " + " · ".join(notes)) if notes else ""  # before the outcome's text


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
        f"- **Call {text(end['seq'])}** ({text(end.get('label', '?'))}): {text(end['reason'])}"
        f" {code(_shortened(end['command']))}\n"
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
        f"| {code(rule, cell=True)} | {count} |"
        for rule, count in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return "\n".join(lines) + "\n\n"


def footer(head: str, lines: int, journal: str = ".epistemic/journal.jsonl") -> str:
    return (
        f"---\n\n_Journal head: `{head}` after {lines} line(s) of "
        f"{code(journal)}. Check it with `epistemic verify`._\n"
    )


def page(first: int, last: int, entries: Iterable[str]) -> str:
    return f"# RATIONALE: calls {first}–{last}\n\n" + "".join(entries)


def _shortened(command: str) -> str:
    """A command on one line (line breaks as escapes), cut at 160 characters."""
    flat = visible(str(command).strip())
    return flat if len(flat) <= 160 else flat[:157] + "..."
