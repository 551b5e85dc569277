"""Reasons do not forge the report: whatever an agent writes (reasons, commands, outputs, model
text, a tool's name, approval comments) renders in RATIONALE.md as text, never as a heading, a
table, a list item, a link or anchor, HTML, or a second "Journal head" line. Checked by parsing
the rendered Markdown as GitHub would (markdown-it-py with tables and strikethrough)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from epistemic_agent.journal.records import CallView
from epistemic_agent.journal.verify import verify_journal
from epistemic_agent.journal.view import Tally
from epistemic_agent.reports.rationale import mdsafe, render
from epistemic_agent.session.session import Session

LOOK = "see what the workspace holds before changing anything"
PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
FAKE_HEAD = "f" * 64
#: A reason that tries every way out of its paragraph.
FORGERIES = [
    f"ok\n\n---\n\n_Journal head: `{FAKE_HEAD}` after 3 line(s) of `.epistemic/journal.jsonl`._",
    "fine\n## Nothing to report\n\nAll calls were read-only.",
    "fine\r## Nothing to report (a carriage return is a line end too)",
    "x\n\n| act type | calls | share |\n|---|---:|---:|\n| `verify` | 99 | 100% |",
    "inline | `verify` | 99 | 100% |",
    'see <script>alert(1)</script> and <a name="top" href="javascript:x">here</a>',
    "a [link](https://evil.example/approve) and ![img](x.png) and <https://evil.example>",
    "bold **Outcome:** rc=0 — all tests pass, _emphasis_ and ~~struck~~ and $x^2$",
    "\n- a list item\n1. an ordered one\n> a quote\n    an indented block",
    "terminal \x1b]0;PWNED\x07\x1b[2J escapes and a bidi \u202e override \u2028 line sep",
    "```\n# a heading after a fence\n```",
    "text\n===\nsetext heading above",
    "&lt;script&gt; and &#60;b&#62; entities",
    "https://evil.example and www.evil.example and someone@evil.example",
]


def parse(markdown: str) -> list[Token]:
    tokens = PARSER.parse(markdown)
    return tokens + [child for token in tokens for child in token.children or []]


def structure(markdown: str) -> dict[str, Any]:
    """What the Markdown renders as: headings, tables, list items, links, HTML, and the
    paragraphs that read as a footer."""
    tokens = PARSER.parse(markdown)
    inline = [child for token in tokens for child in token.children or []]
    headings = [
        (token.tag, tokens[i + 1].content)
        for i, token in enumerate(tokens)
        if token.type == "heading_open"
    ]
    paragraphs = [  # of the page itself: a quote's lines are the quoted text's
        tokens[i + 1].content
        for i, t in enumerate(tokens)
        if t.type == "paragraph_open" and t.level == 0
    ]
    return {
        "headings": headings,
        "tables": [tokens[i + 4].content for i, t in enumerate(tokens) if t.type == "table_open"],
        "items": sum(t.type == "list_item_open" for t in tokens),
        "links": [t.attrs.get("href") for t in inline if t.type == "link_open"],
        "images": [t for t in inline if t.type == "image"],
        "html": [t.content for t in tokens + inline if t.type.startswith("html")],
        "footers": [p for p in paragraphs if p.lstrip("_").startswith("Journal head")],
        "rules": sum(t.type == "hr" for t in tokens),
    }


def session_with(ws: Path, reasons: list[str]) -> None:
    with Session(ws) as session:
        for reason in reasons:
            assert session.bash("true", "collect-info", LOOK + " " + reason).status == "ran"
        assert session.bash("printf '%s' '## Nothing to report'", "collect-info", LOOK).ok
        session.call("x\n## Nothing to report\n", {"reason": LOOK})  # a tool's name, rejected
        session.event("text", step=1, text=reasons[0])
        session.event("final", step=1, text="\n".join(reasons))
        session.event("stop", reason="finished", message=reasons[1], steps=1)


@pytest.mark.system  # the report's confinement lines are counted: confined
def test_forged_sections_do_not_render(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    session_with(ws, FORGERIES)
    markdown = (ws / "RATIONALE.md").read_text()
    found = structure(markdown)
    calls = len(FORGERIES) + 2  # and the printf, and the rejected tool
    assert [tag for tag, _ in found["headings"]] == ["h1", "h2", *["h3"] * calls, *["h2"] * 3]
    assert [text for tag, text in found["headings"] if tag == "h2"] == [
        "Narrative",
        "Dead ends",
        "Rejections by rule",
        "How it ended",
    ]
    assert not any(text.startswith("Nothing to report") for _, text in found["headings"])
    assert found["tables"] == ["act type", "rule"]  # the shape and the rejections, only
    assert found["items"] == 0 and found["images"] == []
    # the one link is the report's own: the printf's stdout, in the evidence store
    (link,) = found["links"]
    assert re.fullmatch(r"\.epistemic/evidence/[0-9a-f]{2}/[0-9a-f]{64}", link), link
    assert (ws / link).is_file()
    assert found["html"] == []
    head = verify_journal(ws / ".epistemic" / "journal.jsonl").head
    (footer,) = found["footers"]
    assert head in footer and FAKE_HEAD not in footer
    assert found["rules"] == 1  # the footer's own
    assert "\x1b" not in markdown and "\u202e" not in markdown and "\r" not in markdown
    assert "\\x1b]0;PWNED\\x07\\x1b[2J" in markdown.replace("\\\\", "\\").replace("\\[", "[")


def test_every_forgery_still_reads_verbatim() -> None:
    """Escaped, not dropped: the rendered text of each forgery is the forgery (its control
    characters shown as escapes)."""
    for forgery in FORGERIES:
        flat = forgery.strip()
        if "\n" in flat or "\r" in flat:
            rendered = mdsafe.block(flat)
            (token,) = [t for t in PARSER.parse(rendered) if t.type == "fence"]
            assert token.content.rstrip("\n") == mdsafe.visible(flat, keep="\n\t")
        else:
            (paragraph,) = [t for t in PARSER.parse(mdsafe.text(flat)) if t.type == "inline"]
            shown = "".join(
                child.content for child in paragraph.children or [] if child.type == "text"
            )
            assert shown == mdsafe.visible(flat), forgery


def view(**fields: Any) -> CallView:
    base: dict[str, Any] = {
        "seq": 1,
        "tool": "bash",
        "act": "collect-info",
        "mutating": False,
        "status": "ran",
        "reason": LOOK,
        "command": "true",
        "ok": True,
        "outcome": "rc=0 — ok",
    }
    return CallView(**{**base, **fields})


@pytest.mark.parametrize("forgery", FORGERIES, ids=range(len(FORGERIES)))
def test_each_field_of_an_entry_is_inert(forgery: str) -> None:
    title = [("h3", "1.")]
    approval = {"decision": "approved", "by": forgery, "channel": forgery, "rule": forgery}
    parts = [
        (render.entry(view(reason=forgery)), title),
        (render.entry(view(command=forgery)), title),
        (render.entry(view(tool=forgery, command=forgery, act=forgery)), title),
        (render.entry(view(outcome=forgery, flags=[{"flag": forgery, "message": forgery}])), title),
        (render.entry(view(status="rejected", rule=forgery, message=forgery)), title),
        (render.entry(view(approval={**approval, "comment": forgery, "t": forgery})), title),
        (
            render.mismatches([{"seq": 1, "flag": forgery, "message": forgery}], 1),
            [("h2", "⚠ Declared versus done")],
        ),
        (render.dead_end({"seq": 1, "label": forgery, "reason": forgery, "command": forgery}), []),
        (render.ending({"stop": forgery, "message": forgery, "final": forgery}), [("h2", "How")]),
        (render.header({"session": forgery, "workspace": forgery, "task": forgery}), [("h1", "R")]),
        (render.rejections({forgery: 2}), [("h2", "Rejections by rule")]),
        (render.shape(_tally_of_act(forgery)), []),
    ]
    for text, headings in parts:
        found = structure(text)
        assert len(found["headings"]) == len(headings), (text, found["headings"])
        for (tag, content), (want, start) in zip(found["headings"], headings, strict=True):
            assert tag == want and content.startswith(start), (text, found["headings"])
        assert found["links"] == [] and found["images"] == [] and found["html"] == [], text
        assert found["footers"] == [] and found["rules"] == 0, text
        assert found["items"] <= 1, text  # a mismatch or a dead end is one item, itself
        assert len(found["tables"]) <= 1, text
        assert "\x1b" not in text and "\r" not in text


PIECES = st.sampled_from(
    [
        *("\n", "\r", "\r\n", "#", "## ", "|", "---", "===", "`", "```", "~~~", "<", ">"),
        *("[", "](", ")", "!", "*", "_", "~~", "$", "&", ";", "<script>", "<a name=x>"),
        *("Journal head: ", "- ", "1. ", "    ", "\t", "\x1b[", "\u2028", "\\", "www.", "://"),
        *("@", "Nothing to report", "\x00", "\u202e"),
    ]
)
free_text = st.lists(PIECES | st.text(max_size=4), min_size=1, max_size=24).map("".join)


@pytest.mark.system  # end to end, slow for the default tier
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reason=free_text, message=free_text, answer=free_text)
def test_no_free_text_makes_structure(reason: str, message: str, answer: str) -> None:
    parts = [
        render.entry(view(reason=reason, outcome=message, command=answer)),
        render.entry(view(tool=reason, status="rejected", rule=message, message=answer)),
        render.ending({"stop": reason, "message": message, "final": answer}),
        render.mismatches([{"seq": 3, "flag": reason, "message": message}], 1),
    ]
    found = structure("".join(parts) + render.footer("a" * 64, 9))
    assert [tag for tag, _ in found["headings"]] == ["h3", "h3", "h2", "h2"]
    assert found["tables"] == [] and found["links"] == [] and found["html"] == []
    assert found["images"] == [] and found["items"] == 1
    assert len(found["footers"]) == 1 and found["rules"] == 1


def _tally_of_act(act: str) -> Tally:
    """A tally of one shell call of `act` that ran (the act name may be anything: forged)."""
    tally = Tally()
    call = {"kind": "call", "seq": 1, "tool": "bash", "act": act, "command": "x", "reason": "x"}
    tally.fold(call)
    tally.fold({"kind": "outcome", "seq": 1, "ok": True})
    return tally
