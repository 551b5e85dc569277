"""The model's words and each call's diff, in RATIONALE.md and the HTML page: next to the call
they belong to, exactly as recorded (escaped, never markup), the diff read from its checked
blob, cut when long, and a missing or changed blob said. RATIONALE.md is parsed as GitHub
would (markdown-it-py) and the page is read back from headless chromium's DOM."""

from __future__ import annotations

import json
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from conftest import epistemic
from epistemic_agent.journal import writer as writer_module
from epistemic_agent.journal.catalog import find_layout
from epistemic_agent.journal.log import Position, follow
from epistemic_agent.journal.records import CallView
from epistemic_agent.journal.schema import RecordError
from epistemic_agent.reports.html.calls import diff_html_for
from epistemic_agent.reports.rationale import diffs as call_diff
from epistemic_agent.reports.rationale.mdsafe import visible
from epistemic_agent.reports.rationale.report import Report
from epistemic_agent.session.session import Session

CHROMIUM = "/usr/bin/chromium"
PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
WHY = "Change the file to show that its diff is shown as recorded."
#: Text that tries to be markup in every reader: Rich, Markdown, HTML, a terminal.
HOSTILE = "a [bold]x[/] ]] [/] ``` ```` <script>alert(1)</script> \x1b[2J\x1b]0;T\x07 &amp;"
HOSTILE_LINES = f"first line\n{HOSTILE}\n\n## not a heading\n```\nstill text"


def records(journal: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in journal.read_text().splitlines()]


def expected_words(found: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Each call's preceding `text` records, computed here from the journal (docs/report.md)."""
    pending: list[str] = []
    words: dict[int, list[str]] = {}
    for record in found:
        if record["kind"] in ("call", "rejected"):
            if pending:
                words[record["seq"]] = pending
            pending = []
        elif (
            record["kind"] == "text" and isinstance(record["text"], str) and record["text"].strip()
        ):
            pending.append(record["text"])
        elif record["kind"] in ("final", "user"):
            pending = []
    return words


def expected_diffs(journal: Path) -> dict[int, str]:
    """Each outcome's diff, read straight from the evidence store."""
    diffs = {}
    for record in records(journal):
        ref = record.get("evidence", {}).get("diff") if record["kind"] == "outcome" else None
        if ref:
            digest = ref["sha256"]
            blob = journal.parent / "evidence" / digest[:2] / digest
            diffs[record["seq"]] = blob.read_text()
    return diffs


# -- reading RATIONALE.md back ---------------------------------------------------------------


def entries(markdown: str) -> dict[int, list[Token]]:
    """The tokens of each `### N.` narrative entry, by N."""
    tokens = PARSER.parse(markdown)
    found: dict[int, list[Token]] = {}
    current: list[Token] | None = None
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            title = tokens[i + 1].content
            current = None
            if token.tag == "h3" and title.split(".")[0].isdigit():
                current = found.setdefault(int(title.split(".")[0]), [])
        elif current is not None:
            current.append(token)
    return found


def said_in(tokens: list[Token]) -> list[str]:
    """The words each `The model said:` label introduces, as the Markdown renders them."""
    out = []
    for i, token in enumerate(tokens):
        if token.type == "inline" and token.content == "_The model said:_":
            rest = tokens[i + 2 :]
            if rest[0].type == "fence":
                out.append(rest[0].content.rstrip("\n"))
            else:
                assert rest[0].type == "blockquote_open", rest[0]
                out.append(rendered_text(rest[2]))
    return out


def rendered_text(inline: Token) -> str:
    """What an inline token shows: its text, code spans and breaks, with no markup made."""
    assert all(c.type in ("text", "code_inline", "softbreak") for c in inline.children or [])
    return "".join(c.content for c in inline.children or [])


def diffs_in(tokens: list[Token]) -> list[str]:
    return [t.content.rstrip("\n") for t in tokens if t.type == "fence" and t.info == "diff"]


def shown(text: str) -> str:
    """Recorded text as the readers show it: control characters but tabs and line breaks as
    escapes; the leading and trailing line breaks of a block dropped."""
    return visible(text.strip("\n"), keep="\n\t")


# -- reading the HTML page back --------------------------------------------------------------


class Page(HTMLParser):
    """Per call: the text of its `.said` divs, and each `details.diff` (open?, its code)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.said: dict[int, list[str]] = {}
        self.diffs: dict[int, list[tuple[bool, str]]] = {}
        self.scripts = 0
        self.call = 0
        self.stack: list[str] = []  # what the text now inside belongs to
        self.buffer = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.scripts += tag == "script"
        if tag == "li" and a.get("class") == "call":
            self.call = int(str(a["id"]).split("-")[1])
        elif tag == "div" and a.get("class") == "said":
            self.stack.append("said")
            self.buffer = ""
        elif tag == "span" and self.stack[-1:] == ["said"]:
            self.stack.append("label")
        elif tag == "details" and a.get("class") == "diff":
            self.diffs.setdefault(self.call, []).append(("open" in a, ""))
        elif tag == "code" and self.call in self.diffs and self.stack[-1:] == ["pre"]:
            self.stack.append("code")
            self.buffer = ""
        elif tag == "pre" and self.call in self.diffs:
            self.stack.append("pre")

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self.stack[-1:] == ["label"]:
            self.stack.pop()
        elif tag == "div" and self.stack[-1:] == ["said"]:
            self.stack.pop()
            self.said.setdefault(self.call, []).append(self.buffer.removeprefix(" "))
        elif tag == "code" and self.stack[-1:] == ["code"]:
            self.stack.pop()
            is_open, _ = self.diffs[self.call][-1]
            self.diffs[self.call][-1] = (is_open, self.buffer)
        elif tag == "pre" and self.stack[-1:] == ["pre"]:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.stack[-1:] in (["said"], ["code"]):
            self.buffer += data


def page_of(html: str) -> Page:
    page = Page()
    page.feed(html)
    return page


def chromium_dom(page: Path, tmp_path: Path) -> str:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: `scripts/setup --test` installs it", pytrace=False)
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    command += [f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    done = subprocess.run(
        [*command, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, f"the page logged to the console: {console}"
    return done.stdout


# -- the demo --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workspace = tmp_path_factory.mktemp("words") / "demo"
    done = epistemic("demo", "-o", str(workspace))
    assert done.returncode == 0, done.stderr
    return workspace


def demo_journal(demo: Path) -> Path:
    return find_layout(demo).journal


@pytest.mark.system  # end to end, slow for the default tier
def test_the_demo_report_shows_the_model_s_words_and_the_diffs(demo: Path) -> None:
    journal = demo_journal(demo)
    words, diffs = expected_words(records(journal)), expected_diffs(journal)
    assert len(words) >= 10 and len(diffs) >= 4  # the demo talks and edits
    found = entries((demo / "RATIONALE.md").read_text())
    assert sorted(found) == list(range(1, 19))
    for seq, tokens in found.items():
        assert said_in(tokens) == [shown(w) for w in words.get(seq, [])], seq
        assert diffs_in(tokens) == ([shown(diffs[seq])] if seq in diffs else []), seq
    acts = {r["seq"]: r.get("act") for r in records(journal) if r["kind"] == "call"}
    changes = [s for s, act in acts.items() if act in ("change-state", "revert")]
    assert set(changes) <= set(diffs)  # shell acts keep their diffs too, the revert included
    silent = [s for s in changes if s not in diffs]  # none in the demo: each would say so
    for seq in silent:
        lines = [t.content for t in found[seq] if t.type == "inline"]
        assert "_No diff was recorded for this call._" in lines, seq


@pytest.mark.system  # headless chromium
def test_the_demo_page_shows_them_in_chromium(demo: Path, tmp_path: Path) -> None:
    journal = demo_journal(demo)
    words, diffs = expected_words(records(journal)), expected_diffs(journal)
    out = tmp_path / "demo.html"
    done = epistemic("html", str(demo), "-o", str(out))
    assert done.returncode == 0, done.stderr
    page = page_of(chromium_dom(out, tmp_path))
    assert page.said == {seq: [shown(w).strip() for w in ws] for seq, ws in words.items()}
    assert page.diffs == {seq: [(False, shown(d))] for seq, d in diffs.items()}  # closed


# -- hostile text ----------------------------------------------------------------------------


def hostile_session(ws: Path) -> Path:
    (ws / "notes.txt").write_text("plain\n")
    with Session(ws) as session:
        session.event("text", step=1, text=HOSTILE)
        session.event("text", step=1, text=HOSTILE_LINES)
        assert session.write_file("notes.txt", f"{HOSTILE_LINES}\n", WHY).ok
        session.event("text", step=2, text=HOSTILE_LINES)
        assert session.str_replace_edit("notes.txt", "first line", "[/] ````x", WHY).ok
        return session.layout.journal


def test_hostile_words_and_diffs_are_verbatim_in_rationale(tmp_path: Path) -> None:
    journal = hostile_session(tmp_path)
    markdown = (tmp_path / "RATIONALE.md").read_text()
    diffs = expected_diffs(journal)
    assert sorted(diffs) == [1, 2] and all("<script>" in d for d in diffs.values())
    found = entries(markdown)
    assert sorted(found) == [1, 2]  # no entry, heading or section made by the text
    assert said_in(found[1]) == [shown(HOSTILE), shown(HOSTILE_LINES)]
    assert said_in(found[2]) == [shown(HOSTILE_LINES)]
    for seq in (1, 2):
        assert diffs_in(found[seq]) == [shown(diffs[seq])]
    tokens = PARSER.parse(markdown)
    inline = [c for t in tokens for c in t.children or []]
    assert not [t for t in tokens + inline if t.type.startswith("html") or t.type == "link_open"]
    assert "\x1b" not in markdown and "\\x1b[2J" in markdown


@pytest.mark.system  # headless chromium
def test_hostile_words_and_diffs_are_text_in_the_page(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    journal = hostile_session(tmp_path / "ws")
    out = tmp_path / "page.html"
    done = epistemic("html", str(tmp_path / "ws"), "-o", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert "\x1b" not in html and "<script>alert" not in html
    for source in (html, chromium_dom(out, tmp_path)):
        page = page_of(source)
        assert page.scripts == 1  # the page's own, and no other
        assert page.said == {1: [shown(HOSTILE), shown(HOSTILE_LINES)], 2: [shown(HOSTILE_LINES)]}
        diffs = expected_diffs(journal)
        assert page.diffs == {seq: [(False, shown(d))] for seq, d in diffs.items()}


# -- blobs that are missing, changed, long ---------------------------------------------------


def blob_of(journal: Path, seq: int) -> Path:
    (outcome,) = [r for r in records(journal) if r["kind"] == "outcome" and r["seq"] == seq]
    digest = outcome["evidence"]["diff"]["sha256"]
    return journal.parent / "evidence" / digest[:2] / digest


@pytest.mark.parametrize("damage", ["missing", "changed"])
def test_a_missing_or_changed_diff_blob_is_said(tmp_path: Path, damage: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    journal = hostile_session(ws)
    blob = blob_of(journal, 1)
    if damage == "missing":
        blob.unlink()
    else:
        blob.write_text(blob.read_text().replace("plain", "PLAIN"))
    assert epistemic("report", str(ws)).returncode == 0
    found = entries((ws / "RATIONALE.md").read_text())
    assert diffs_in(found[1]) == []  # nothing shown as the diff
    said = "is missing from the evidence store" if damage == "missing" else "does not match"
    (line,) = [t.content for t in found[1] if t.type == "inline" and "cannot be shown" in t.content]
    assert said in line and "epistemic show 1" in line
    assert diffs_in(found[2]) != []  # the other call's diff is intact and shown
    out = tmp_path / "page.html"
    assert epistemic("html", str(ws), "-o", str(out)).returncode == 0
    html = out.read_text()
    entry = html[html.index('id="call-1"') : html.index('id="call-2"')]
    assert "cannot be shown" in entry and said in entry and "<details" not in entry


def test_a_long_diff_is_cut_with_its_line_count(tmp_path: Path) -> None:
    lines = [f"line {i} [x] `" for i in range(1, 601)]
    with Session(tmp_path) as session:
        assert session.write_file("long.txt", "\n".join(lines) + "\n", WHY).ok
        journal = session.layout.journal
    whole = expected_diffs(journal)[1]
    total = whole.count("\n")
    assert total > call_diff.DIFF_LINES
    markdown = (tmp_path / "RATIONALE.md").read_text()
    (fence,) = diffs_in(entries(markdown)[1])
    assert fence == shown("\n".join(whole.split("\n")[: call_diff.DIFF_LINES]))
    assert f"**Diff** (the first {call_diff.DIFF_LINES} of {total} lines):" in markdown
    hint = "epistemic show 1"
    assert "_Diff cut for length: the whole diff is in `" + hint in markdown


def test_one_enormous_line_is_cut_too(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        assert session.write_file("one.txt", "y" * 100_000, WHY).ok
    markdown = (tmp_path / "RATIONALE.md").read_text()
    (fence,) = diffs_in(entries(markdown)[1])
    assert len(fence) <= call_diff.DIFF_CHARS + 1 and "Diff cut for length" in markdown


# -- incremental: pages, checkpoints, rebuilds -----------------------------------------------


def test_words_survive_page_turns_checkpoints_and_rebuilds(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    with Session(tmp_path) as session:
        session.event("text", step=0, text="W0 before the first call")
        for _ in range(100):
            assert session.read_file("f.txt", WHY).ok
        session.event("text", step=1, text="W1 [/] before the first call of page two")
        assert session.str_replace_edit("f.txt", "x", "y", WHY).seq == 101
        session.event("text", step=2, text="W2 before 102")
        assert session.read_file("f.txt", WHY).seq == 102
        layout = session.layout
    page1 = layout.pages / "calls-000001-000100.md"
    assert said_in(entries(page1.read_text())[1]) == ["W0 before the first call"]
    # a process that starts from the page's checkpoint (one `exec` per call) keeps W1
    report, position = Report(layout), Position()
    for record, before in follow(layout.journal, position):
        report.take(record, before)
        if record.get("kind") == "call" and record.get("seq") == 101:
            report.write(position)  # the page turned: a checkpoint at the call that turned it
            break
    later = Report(layout)
    start = later.load_checkpoint()
    assert start is not None and start.last_seq == 101
    for record, before in follow(layout.journal, start):
        later.take(record, before)
    found = entries(later.render(Position()))
    assert said_in(found[101]) == ["W1 [/] before the first call of page two"]
    assert said_in(found[102]) == ["W2 before 102"] and diffs_in(found[101])
    # a later session resumes from the closing checkpoint with the page's words and diffs
    with Session(tmp_path) as session:
        session.event("text", step=3, text="W3 in a new session")
        assert session.read_file("f.txt", WHY).ok
    found = entries((tmp_path / "RATIONALE.md").read_text())
    assert sorted(found) == [101, 102, 103]
    assert said_in(found[101]) == ["W1 [/] before the first call of page two"]
    assert said_in(found[102]) == ["W2 before 102"] and diffs_in(found[101])
    assert said_in(found[103]) == ["W3 in a new session"]


# -- which call words belong to, and records a foreign writer made ---------------------------


def test_words_that_ended_a_turn_belong_to_no_call(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.event("text", step=1, text="the final answer, also written as text")
        session.event("final", step=1, text="the final answer, also written as text")
        session.event("user", text="a new REPL message")
        session.event("text", step=2, text="   ")  # blank: nothing to show
        with pytest.raises(RecordError):  # the tool's own writer refuses it...
            session.event("text", step=2, text=5)
        with mock.patch.object(writer_module, "check", lambda record: None):
            session.event("text", step=2, text=5)  # ...a foreign one's: not a string, not words
        assert session.bash("true", "collect-info", WHY).ok
        session.event("text", step=3, text="the words of call 2")
        assert session.bash("true", "collect-info", WHY).ok
        journal = session.layout.journal
    found = entries((tmp_path / "RATIONALE.md").read_text())
    assert said_in(found[1]) == [] and said_in(found[2]) == ["the words of call 2"]
    done = epistemic("show", "2", "--json", "-C", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["preceded_by"] == ["the words of call 2"]
    done = epistemic("show", "1", "--json", "-C", str(tmp_path))
    assert json.loads(done.stdout)["preceded_by"] == []
    assert expected_words(records(journal)) == {2: ["the words of call 2"]}


def view(act: str = "change-state", status: str = "ran") -> CallView:
    return CallView(7, "bash", act, True, status, WHY, "true", ok=True)


@pytest.mark.parametrize(
    ("ref", "says"),
    [
        ({"sha256": "../../../etc/passwd"}, "is not a SHA-256"),
        ({"sha256": "a" * 64}, "is missing from the evidence store"),
        ({"bytes": 3}, "the record names no blob"),
    ],
)
def test_a_foreign_diff_ref_is_said_not_followed(tmp_path: Path, ref: Any, says: str) -> None:
    markdown = call_diff.markdown_for(view(), ref, tmp_path, None)
    assert markdown.startswith("**Diff:** cannot be shown: ") and says in markdown
    assert "`epistemic show 7`" in markdown
    html = diff_html_for(view(), ref, tmp_path, "s1")
    assert says in html and "epistemic show 7 --session s1" in html and "<details" not in html


def test_no_diff_is_said_only_for_a_changing_act_that_ran(tmp_path: Path) -> None:
    for ref in (None, "not a ref", ["a list"]):
        assert "No diff was recorded" in call_diff.markdown_for(view(), ref, tmp_path, None)
        assert "No diff was recorded" in diff_html_for(view("revert"), ref, tmp_path, None)
        assert call_diff.markdown_for(view("collect-info"), ref, tmp_path, None) == ""
        assert call_diff.markdown_for(view(status="unknown"), ref, tmp_path, None) == ""
        assert diff_html_for(view(status="rejected"), ref, tmp_path, None) == ""
