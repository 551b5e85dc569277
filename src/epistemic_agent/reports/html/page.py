"""`epistemic html`: one session as a single self-contained HTML page, from its journal alone.

`render_html(session) -> str` is the contract (`epistemic export` calls it too). Every piece of
journal text goes through `esc`; no journal text is placed inside the script, which reads what
it filters from `data-` attributes. See docs/views.md for how to read the page.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ...core import ACT_NAMES, __version__, act_order, esc, is_session_id
from ...journal import chain_notice as notice
from ...journal import seq_of
from ...journal import session_summary as summary
from ..marks import NO_ACT, STATUSES, counts, dead_end, lanes, marks, shape, status_of, title
from ..rationale import diffs as call_diff
from ..rationale import output as call_output
from ..rationale import words as model_words
from . import beliefs as html_beliefs
from .assets import CSP, CSS, JS, act_css, filters_form, shape_svg, timeline_svg
from .calls import diff_html_for, words_html

if TYPE_CHECKING:
    from typing import Any

    from ...journal import CallView, Loaded

NO_REASON = '<i class="muted">(no reason given)</i>'
#: The header's facts, as they are named on the page and in the `session` record.
HEADER_FACTS = (
    ("session", "session"),
    ("model", "model"),
    ("started", "started"),
    ("workspace", "workspace"),
    ("git HEAD", "git_head"),
    ("epistemic-agent", "tool_version"),
)


def render_html(session: Loaded) -> str:
    """The whole page: header, notes, shape, timeline, flags, the narrative with filters, dead
    ends, approvals and denials, how it ended, and the hash chain's verdict."""
    found = marks(session)
    tally, acts = counts(found), Counter(m.act for m in found)
    titles = {
        v.seq: f"{v.seq}. {v.act or '(no act)'} · {v.label}: {v.reason[:200]}"
        for v in session.views
    }
    entries = "\n".join(_entries(session))
    narrative = (
        filters_form({a: acts[a] for a in [*ACT_NAMES, *sorted(acts, key=act_order)]}, tally)
        + f'<ol class="calls" id="narrative">{entries}</ol>'
        + ("" if entries else '<p class="muted">No calls yet.</p>')
    )
    sections = [
        ("shape", "Shape", _shape(session, tally)),
        ("timeline", "Timeline", timeline_svg(found, lanes(found), titles)),
        ("declared", "⚠ Declared versus done", _mismatches(session)),
        ("beliefs", "Beliefs", html_beliefs.section(session.records)),
        ("calls", "Narrative", narrative),
        ("dead-ends", "Dead ends", _dead_ends(session)),
        ("approvals", "Approvals and denials", _approvals(session)),
        ("ending", "How it ended", _ending(session)),
        ("integrity", "Integrity", _integrity(session)),
    ]
    shown = [(anchor, heading, content) for anchor, heading, content in sections if content]
    body = [_header(session, summary(session), shown), _notes(session)]
    body += [f'<section id="{a}"><h2>{esc(h)}</h2>\n{c}\n</section>' for a, h, c in shown]
    body.append(
        f'<p class="muted">Written by epistemic-agent {esc(__version__)} from '
        f"<code>{esc(session.journal)}</code> alone.</p>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title(session))}</title><style>{CSS}{act_css()}</style></head>\n<body>"
        + "\n".join(part for part in body if part)
        + f"\n<script>{JS}</script>\n</body></html>\n"
    )


def reader_notes(session: Loaded) -> list[str]:
    """What reading the journal found odd: torn or unreadable lines, other format versions,
    fields of the wrong type, odd timestamps (`sessions.load` notes them all)."""
    return list(session.notes)


def _header(session: Loaded, facts: dict[str, Any], sections: list[tuple[str, str, str]]) -> str:
    """The session's facts, its task, the integrity badge, and links to the sections."""
    h, wall = session.header, facts["wall_time"]
    rows = [(label, h.get(key)) for label, key in HEADER_FACTS]
    rows.insert(2, ("user", f"{h.get('user', '?')} on {h.get('host', '?')}" if h else None))
    rows.append(("wall time", f"{wall} s" if wall is not None else None))
    rows.append(("model calls", _usage(facts) if facts["model_calls"] else None))
    rows += [
        ("later run", f"{r.get('t')}: {r.get('model')}: {r.get('task')}")
        for r in session.of_kind("run")
    ]
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows if v is not None)
    items += f"<dt>policy in force</dt><dd>{_policies(session)}</dd>"
    task = h.get("task")
    nav = " ".join(f'<a href="#{anchor}">{esc(heading)}</a>' for anchor, heading, _ in sections)
    return (
        f"<header><h1>{esc(session.name)} {_badge(session)}</h1>"
        + (f'<div class="task">{esc(task)}</div>' if isinstance(task, str) and task else "")
        + f'<dl class="facts">{items}</dl><nav>{nav}</nav></header>'
    )


def _usage(facts: dict[str, Any]) -> str:
    prompt, completion = facts["prompt_tokens"], facts["completion_tokens"]
    tokens = f"{prompt} prompt + {completion} completion tokens" if prompt or completion else ""
    return f"{facts['model_calls']}, {tokens or 'no token usage reported'}"


def _policies(session: Loaded) -> str:
    """The policy the header names, then each change the journal recorded."""
    first = session.header.get("policy")
    text = _policy(first) if isinstance(first, dict) else "none recorded"
    changes = "".join(
        f"; from {esc(r.get('t', '?'))}: {_policy(r)}" for r in session.of_kind("policy")
    )
    return text + changes


def _policy(policy: dict[str, Any]) -> str:
    digest = str(policy.get("sha256") or "")[:16]
    return f"<code>{esc(policy.get('source', '?'))}</code> (sha256 {esc(digest)}…)"


def _badge(session: Loaded) -> str:
    status = session.integrity.status if session.integrity else "unchecked"
    return f'<a class="badge {esc(status)}" href="#integrity">journal {esc(status)}</a>'


def _notes(session: Loaded) -> str:
    notes = reader_notes(session)
    integrity = session.integrity
    if integrity is not None and integrity.status != "intact":
        notes[:0] = notice(integrity, session.numbered())
    if not notes:
        return ""
    items = "".join(f"<li>{esc(note)}</li>" for note in notes)
    return f'<div class="notes" id="notes"><b>What the reader found:</b><ul>{items}</ul></div>'


def _shape(session: Loaded, tally: Counter[str]) -> str:
    """Counts by status (each a link that filters the narrative), rejections by rule, bars."""
    links = ", ".join(
        f'<a href="#status={s}">{tally[s]} {esc(STATUSES.get(s, s))}</a>'
        for s in [*STATUSES, "flagged"]
        if tally[s]
    )
    rules = session.tally.rejected
    by_rule = ", ".join(f"<code>{esc(rule)}</code> {n}" for rule, n in rules.most_common())
    said = session.tally.sentence()
    return (
        f"<p>{esc(said[:1].upper() + said[1:])}; {links}. The bars count the calls that ran: a "
        "rejected, denied, cancelled or aborted call did not"
        + (f"; rejections by rule: {by_rule}.</p>" if rules else ".</p>")
        + shape_svg(shape(session))
    )


def _mismatches(session: Loaded) -> str:
    """Where a declaration and the observed behaviour disagree: impossible to miss, so early."""
    flagged = [(v, f) for v in session.views for f in v.flags]
    items = "".join(
        f'<li><a href="#call-{v.seq}">Call {v.seq}</a> ⚠ <code>{esc(f.get("flag"))}</code>: '
        f"{esc(f.get('message'))}</li>"
        for v, f in flagged
    )
    head = f"{len(flagged)} mismatch(es) between what calls declared and what they did "
    link = '(<a href="#status=flagged">show only them</a>)'
    return f"<p>{head}{link}:</p><ul>{items}</ul>" if flagged else ""


def _entries(session: Loaded) -> list[str]:
    """Every call's entry, with the model's words before it and its diff (diffs.py)."""

    said = model_words.before_calls(session.records)
    diffs = {r.get("seq"): call_diff.diff_ref(r) for r in session.of_kind("outcome")}
    evidence, folder = session.journal.parent / "evidence", session.journal.parent.name
    name = folder if is_session_id(folder) else None
    workspace = session.workspace
    return [
        _entry(
            view,
            words_html(said.get(view.seq, [])),
            call_output.html(view, evidence, workspace, name)
            + diff_html_for(view, diffs.get(view.seq), evidence, name),
        )
        for view in session.views
    ]


def _entry(view: CallView, said: str = "", diff: str = "") -> str:
    """One numbered call: the model's words before it, act, status, reason, command,
    approval, outcome, diff, flags."""
    status = status_of(view)
    head = (
        f'<span class="seq">{view.seq}.</span> <span class="chip">'
        f'{esc(view.act or "(no act)")}</span> <span class="st {status}">{esc(view.label)}</span>'
        + (f' <span class="tool">{esc(view.tool)}</span>' if view.tool != "bash" else "")
        + f' <span class="when" title="{esc(view.t)}">{esc(view.t[11:23])}</span>'
    )
    parts = [f'<div class="head">{head}</div>', said]
    parts.append(f'<p class="why"><b>Why:</b> {esc(view.reason) or NO_REASON}</p>')
    parts.append(f"<pre><code>{esc(view.command)}</code></pre>" if view.command else "")
    parts.append(f'<p class="approval">{_approval(view.approval)}</p>' if view.approval else "")
    parts += [_result(view), diff]
    parts += [
        f'<p class="flag">⚠ <b>Declared versus done</b> (<code>{esc(f.get("flag"))}</code>): '
        f"{esc(f.get('message'))}</p>"
        for f in view.flags
    ]
    return (
        f'<li class="call" id="call-{view.seq}" data-act="{esc(view.act or NO_ACT)}" '
        f'data-status="{status}" data-flagged="{int(bool(view.flags))}">{"".join(parts)}</li>'
    )


def _approval(approval: dict[str, Any]) -> str:
    decision = "Approved" if approval.get("decision") == "approved" else "Denied"
    who = approval.get("by") or ("timeout" if approval.get("timed_out") else "nobody")
    rule, comment = approval.get("rule") or "default", approval.get("comment")
    return (
        f"<b>{decision}</b> by <code>{esc(who)}</code> via {esc(approval.get('channel', '?'))}, "
        f"{esc(approval.get('t', '?'))} (policy rule <code>{esc(rule)}</code>)"
        + (f": “{esc(comment)}”" if comment else "")
    )


def _result(view: CallView) -> str:
    if view.status == "rejected":
        return f"<p><b>Rejected</b> (<code>{esc(view.rule)}</code>): {esc(view.message or '')}</p>"
    if view.status == "denied":
        return f"<p><b>Did not run:</b> {esc(view.outcome)}</p>"
    if view.status == "unknown":
        return (
            "<p><b>Outcome:</b> unknown: no outcome was recorded (still running, or the "
            "session was killed during this call)</p>"
        )
    return f"<p><b>Outcome:</b> {esc(view.outcome)}{esc(_observed(view))}</p>"


def _observed(view: CallView) -> str:
    """Whether the workspace was read-only, and what the call was seen to change."""
    notes = []
    if view.enforcement and view.enforcement != "none":
        notes.append(f"workspace read-only ({view.enforcement})")
    if view.observed:
        changed = [
            f"{k} {', '.join(map(str, paths[:5]))}{' …' if len(paths) > 5 else ''}"
            for k in ("created", "modified", "deleted")
            if isinstance(paths := view.observed.get(k), list) and paths
        ]
        notes.append("changed: " + "; ".join(changed) if changed else "changed nothing")
    return "".join(f" · {note}" for note in notes)


def _dead_ends(session: Loaded) -> str:
    ends = [v for v, m in zip(session.views, marks(session), strict=True) if dead_end(m)]
    items = "".join(
        f'<li><a href="#call-{v.seq}">Call {v.seq}</a> ({esc(v.label)}): '
        f"{esc(v.reason) or NO_REASON} <code>{esc(v.command)}</code>{esc(_observed(v))}</li>"
        for v in ends
    )
    if not ends:
        return "<p>No reverts: no change-state was undone.</p>"
    return f"<p>{len(ends)} revert(s): changes the session took back.</p><ul>{items}</ul>"


def _approvals(session: Loaded) -> str:
    """Every human decision (approval records), and every call a policy rule denied outright."""
    policies = {
        seq: policy
        for r in session.of_kind("rejected")
        if (seq := seq_of(r)) is not None and isinstance(policy := r.get("policy"), dict)
    }
    decisions = session.of_kind("approval") + [
        {
            "seq": v.seq,
            "decision": "denied by policy",
            "by": "policy",
            "comment": v.message,
            "rule": policies.get(v.seq, {}).get("rule"),
        }
        for v in session.views
        if v.status == "rejected" and v.rule == "policy"
    ]
    if not decisions:
        return "<p>No call went to a human, and no policy rule denied a call.</p>"
    decisions.sort(key=lambda d: d["seq"] if isinstance(d.get("seq"), int) else 0)
    heads = "".join(
        f"<th>{h}</th>" for h in ("call", "decision", "by", "via", "rule", "waited (s)")
    )
    return f"<table><tr>{heads}<th>comment</th></tr>{''.join(map(_decision, decisions))}</table>"


def _decision(d: dict[str, Any]) -> str:
    who = d.get("by") or ("timeout" if d.get("timed_out") else "nobody")
    cells = [d.get("decision"), who, d.get("channel"), d.get("rule") or "default", d.get("waited")]
    return (
        f'<tr><td><a href="#call-{esc(d.get("seq"))}">{esc(d.get("seq"))}</a></td>'
        + "".join(f"<td>{esc('' if c is None else c)}</td>" for c in [*cells, d.get("comment")])
        + "</tr>"
    )


def _ending(session: Loaded) -> str:
    stop, final = session.of_kind("stop")[-1:], session.of_kind("final")[-1:]
    parts = [
        f"<p><b>Stopped:</b> <code>{esc(r.get('reason'))}</code>: {esc(r.get('message', ''))}</p>"
        for r in stop
    ]
    parts += [
        f'<p><b>Final answer:</b></p><div class="task">{esc(r.get("text"))}</div>' for r in final
    ]
    return "".join(parts)


def _integrity(session: Loaded) -> str:
    """The hash chain's verdict: status, lines checked, head hash, the first problem, notes."""
    result = session.integrity
    if result is None:
        return "<p>The hash chain was not verified.</p>"
    parts = [
        f"<p>{_badge(session)} {result.lines} line(s) of the chain checked. "
        f'Head: <span class="hash">{esc(result.head or "(none)")}</span></p>'
    ]
    if result.problem:
        where = f" (line {result.line})" if result.line else ""
        parts.append(f"<p><b>Problem{where}:</b> {esc(result.problem)}</p>")
    parts += [f'<p class="muted">{esc(note)}</p>' for note in result.notes]
    parts.append('<p class="muted">Check it again with <code>epistemic verify</code>.</p>')
    return "".join(parts)
