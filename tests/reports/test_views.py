"""`epistemic plot` and `epistemic html`: a session shown from its journal alone, as a picture
(PNG, SVG) and as one self-contained HTML page, checked in a real headless browser (Debian's
chromium, installed by `scripts/setup --test`)."""

from __future__ import annotations

import hashlib
import inspect
import json
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conftest import epistemic
from epistemic_agent.approvals.request import Answer, Request
from epistemic_agent.core.vocabulary import ACT_NAMES
from epistemic_agent.journal import sessions
from epistemic_agent.policy.rules import preset
from epistemic_agent.reports.html import page as html_report
from epistemic_agent.reports.html.assets import JS, SCRIPT_HASH
from epistemic_agent.reports.marks import ACT_COLOURS, status_of
from epistemic_agent.session.session import Session

CHROMIUM = "/usr/bin/chromium"
HOSTILE = "echo '</script><img src=x onerror=alert(1)>'"
HOSTILE_REASON = "Show that <b>markup</b> & </script> in a reason stays text, not markup."
LOOK = "Nothing is known about this workspace yet; I need to see what files exist."
CHANGE = "The report asks for a marker file; creating it is the change itself."
UNDO = "The marker was the wrong approach; take the change back to where it started."
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class Denier:
    """An approver that says no to everything it is asked."""

    def ask(self, request: Request) -> Answer:
        return Answer("denied", "alice", "test", "not <now>")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled offline demo: 18 calls, a rejection, a failure, a revert."""
    workspace = tmp_path_factory.mktemp("views") / "demo"
    done = epistemic("demo", "-o", str(workspace))
    assert done.returncode == 0, done.stderr
    return workspace


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session made through the Python API with every status, a flag, a revert, a human
    denial, a policy denial, policy changes, and hostile text in a command and a reason."""
    workspace = tmp_path_factory.mktemp("views") / "api"
    workspace.mkdir()
    with Session(workspace) as session:
        session.bash("ls", "collect-info", LOOK)
        session.bash(HOSTILE, "collect-info", HOSTILE_REASON)
        session.bash("false", "test-hypothesis", "I expect `false` to exit 1, refuting nothing.")
        session.bash("ls", "explore", "An act outside the vocabulary: the gate rejects it.")
        session.write_file("notes.md", "draft\n", CHANGE)
        session.bash("rm notes.md", "revert", UNDO)
        session.bash("true", "change-state", CHANGE)  # changes nothing: flagged no-change
    with Session(workspace, policy=preset("approve-mutating"), approver=Denier()) as session:
        session.bash("touch made.txt", "setup", "A marker file for the checker.")
    with Session(workspace, policy=preset("read-only")) as session:
        session.bash("touch made.txt", "change-state", CHANGE)
    return workspace


def copy_journal(workspace: Path, target: Path, anchor: bool = True) -> Path:
    """A copy of a session's record (journal, and head anchor if asked) in a new workspace."""
    record = target / ".epistemic"
    record.mkdir(parents=True)
    shutil.copy(workspace / ".epistemic" / "journal.jsonl", record / "journal.jsonl")
    if anchor:
        shutil.copy(workspace / ".epistemic" / "head.json", record / "head.json")
    return record / "journal.jsonl"


def chained(journal: Path, record: dict[str, Any]) -> None:
    """Append a record the way a writer would: chained to the last line."""
    last = journal.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    head = {"prev": hashlib.sha256(last).hexdigest(), "n": json.loads(last)["n"] + 1}
    line = json.dumps({**head, **record}, separators=(",", ":"))
    with journal.open("a") as handle:
        handle.write(line + "\n")


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def assert_usage_error(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("epistemic: "), done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


# -- the shared palette --------------------------------------------------------------------


def test_every_act_has_its_own_colour() -> None:
    assert list(ACT_COLOURS) == list(ACT_NAMES)
    assert len(set(ACT_COLOURS.values())) == len(ACT_NAMES)


# -- plot ------------------------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_plot_png_of_the_demo(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo.png"
    done = epistemic("plot", str(demo), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stdout and "18 call(s)" in done.stdout
    assert png_size(out)[0] == 1200
    assert 20_000 < out.stat().st_size < 300_000


@pytest.mark.parametrize(("command", "suffix"), [("plot", ".svg"), ("html", ".html")])
def test_the_render_time_is_said_apart_from_the_sessions_span(
    demo: Path, tmp_path: Path, command: str, suffix: str
) -> None:
    """`0.31 s` after a call count reads as how long the session took: the line says when and
    how fast the file was rendered, and the session's own start and span, each by name."""
    out = tmp_path / f"demo{suffix}"
    done = epistemic(command, str(demo), "-o", str(out))
    assert done.returncode == 0, done.stderr
    loaded = sessions.load(demo)
    started, wall = loaded.header["started"], loaded.wall_time
    said, rendered = done.stdout.strip().rsplit("; rendered at ", 1)
    assert said == (
        f"{out}: 18 call(s); the session started {started}, {wall:g} s from its first record to "
        "its last"
    )
    when, took = rendered.split(" in ")
    assert when.endswith("Z") and when > started and took.endswith(" s")


@pytest.mark.system  # end to end, slow for the default tier
def test_plot_svg_shows_the_acts_the_session_has(demo: Path, api: Path, tmp_path: Path) -> None:
    texts = {}
    for name, workspace in (("demo", demo), ("api", api)):
        out = tmp_path / f"{name}.SVG"  # the suffix is case-insensitive
        done = epistemic("plot", str(workspace), "-o", str(out))
        assert done.returncode == 0, done.stderr
        root = ET.parse(out).getroot()  # well-formed XML
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        texts[name] = " ".join(t for t in root.itertext() if t.strip())
    for act in ACT_NAMES:  # a lane and a bar for every act, even one never used
        assert act in texts["demo"] and act in texts["api"]
    assert "(no act)" in texts["demo"]  # the demo's rejected call had no valid act
    assert "18 call(s)" in texts["demo"] and "9 call(s)" in texts["api"]
    assert "1 denied" in texts["api"] and "1 flagged" in texts["api"]
    assert "journal intact" in texts["api"]


@pytest.mark.system  # end to end, slow for the default tier
def test_plot_over_time_and_the_default_output(demo: Path, tmp_path: Path) -> None:
    done = epistemic("plot", str(demo / ".epistemic"), "--time", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert png_size(tmp_path / "demo-timeline.png")[0] == 1200
    done = epistemic("plot", str(demo), "--time", "-o", "t.svg", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "seconds since the session started" in (tmp_path / "t.svg").read_text()


@pytest.mark.system  # end to end, slow for the default tier
def test_the_same_journal_gives_the_same_svg(demo: Path, tmp_path: Path) -> None:
    for name in ("a.svg", "b.svg"):
        assert epistemic("plot", str(demo), "-o", str(tmp_path / name)).returncode == 0
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


# -- html: the page as text -------------------------------------------------------------------


def test_render_html_is_the_contract(demo: Path) -> None:
    assert list(inspect.signature(html_report.render_html).parameters) == ["session"]
    page = html_report.render_html(sessions.load(demo))
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")


def test_html_is_self_contained(demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = epistemic("html", str(demo), "-o", str(out))
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    tags = Tags(page)
    assert not [t for t in tags.found if t[0] in ("link", "img", "iframe", "object", "embed")]
    assert not [t for t in tags.found if "src" in t[1]]  # nothing is loaded from anywhere
    assert page.count("://") == page.count("http://www.w3.org/2000/svg")  # SVG namespace only
    assert [t[0] for t in tags.found].count("script") == 1
    assert f"script-src 'sha256-{SCRIPT_HASH}'" in page and f"<script>{JS}</script>" in page
    assert base64_sha256(JS) == SCRIPT_HASH
    assert out.stat().st_size < 200_000


def base64_sha256(text: str) -> str:
    import base64

    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_html_header_and_sections_of_the_demo(demo: Path) -> None:
    loaded = sessions.load(demo)
    page = html_report.render_html(loaded)
    header = loaded.header
    for fact in (header["session"], header["model"], header["user"], header["started"]):
        assert fact in page
    assert "preset:approve-none" in page  # the policy in force
    assert "`process_orders.py` is supposed to turn" in page  # the task, as text
    for section in ("shape", "timeline", "calls", "dead-ends", "approvals", "integrity"):
        assert f'<section id="{section}">' in page
    assert page.count('<li class="call"') == len(loaded.views) == 18
    assert loaded.integrity is not None and loaded.integrity.head in page
    assert "journal intact" in page and "Call 11</a>" in page  # the revert is a dead end


def test_hostile_text_is_escaped(api: Path) -> None:
    page = html_report.render_html(sessions.load(api))
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;b&gt;markup&lt;/b&gt; &amp; &lt;/script&gt;" in page
    assert page.count("</script>") == 1 and "<img" not in page and "<b>markup" not in page
    tags = Tags(page)
    assert [t[0] for t in tags.found].count("script") == 1
    assert not any(name.startswith("on") for _, attrs in tags.found for name in attrs)


def test_html_of_every_status_approvals_and_policies(api: Path) -> None:
    loaded = sessions.load(api)
    page = html_report.render_html(loaded)
    assert [status_of(v) for v in loaded.views] == [
        *("ok", "ok", "failed", "rejected", "ok", "ok", "ok", "denied", "rejected")
    ]
    assert "preset:approve-mutating" in page and "preset:read-only" in page
    assert "not &lt;now&gt;" in page and "denied by policy" in page
    assert "no-change" in page and "⚠ Declared versus done" in page


# -- what the readers must survive --------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_a_torn_journal_is_shown_with_a_note(demo: Path, tmp_path: Path) -> None:
    journal = copy_journal(demo, tmp_path / "torn")
    with journal.open("a") as handle:
        handle.write('{"prev":"00","n":99,"v":1,"kind":"call","seq":19,"rea')
    out = tmp_path / "torn.html"
    done = epistemic("html", str(tmp_path / "torn"), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "is torn" in done.stderr and "journal torn" in done.stderr
    page = out.read_text()
    assert "journal torn" in page and "is torn" in page
    assert page.count('<li class="call"') == 18  # every complete line was read
    done = epistemic("plot", str(journal), "-o", str(tmp_path / "torn.png"))
    assert done.returncode == 0 and "is torn" in done.stderr, done.stderr


def test_a_call_without_outcome_is_unknown(api: Path, tmp_path: Path) -> None:
    journal = copy_journal(api, tmp_path / "running", anchor=False)
    lines = journal.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"kind":"call","seq":7' in line)
    journal.write_text("".join(lines[: cut + 1]))  # the process was killed during call 7
    page = html_report.render_html(sessions.load(journal))
    assert 'id="call-7" data-act="change-state" data-status="unknown"' in page
    assert "no outcome was recorded" in page and "journal intact" in page
    assert epistemic("plot", str(journal), "-o", str(tmp_path / "u.svg")).returncode == 0


def test_lines_of_other_versions_are_read_and_noted(demo: Path, tmp_path: Path) -> None:
    journal = copy_journal(demo, tmp_path / "newer", anchor=False)
    chained(journal, {"v": 2, "kind": "hologram", "t": "2030-01-01T00:00:00.000Z"})
    chained(journal, {"v": 0, "kind": "note", "t": "2030-01-01T00:00:00.000Z"})
    done = epistemic("html", str(journal), "-o", str(tmp_path / "v.html"))
    assert done.returncode == 0, done.stderr
    assert "format version 2, newer" in done.stderr and "format version 0, older" in done.stderr
    page = (tmp_path / "v.html").read_text()
    assert "format version 2" in page and "journal intact" in page


def test_many_lines_of_a_newer_version_are_one_note(demo: Path, tmp_path: Path) -> None:
    journal = copy_journal(demo, tmp_path / "all-newer", anchor=False)
    found = [json.loads(line) for line in journal.read_text().splitlines()]
    journal.write_text("".join(json.dumps({**r, "v": 2}) + "\n" for r in found))
    done = epistemic("html", str(journal), "-o", str(tmp_path / "n.html"))
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "format version" in line]
    assert notes == [
        f"epistemic: note: {len(found)} lines have format version 2, newer than this reader "
        "(1); read what is understood (the first is line 1)"
    ]
    assert (tmp_path / "n.html").read_text().count("format version 2") == 1


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize(
    ("kind", "key", "value"),
    [("outcome", "seq", {"a": 1}), ("outcome", "seq", ["x"]), ("rejected", "policy", "deny")],
)
def test_fields_of_the_wrong_type_are_read_as_absent(
    demo: Path, tmp_path: Path, kind: str, key: str, value: Any
) -> None:
    journal = copy_journal(demo, tmp_path / "odd", anchor=False)
    found = [json.loads(line) for line in journal.read_text().splitlines()]
    next(r for r in found if r["kind"] == kind)[key] = value
    journal.write_text("".join(json.dumps(r) + "\n" for r in found))
    for args in (
        ["plot", "-o", str(tmp_path / "odd.svg")],
        ["html", "-o", str(tmp_path / "o.html")],
    ):
        done = epistemic(*args, str(journal))
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert (
            f"epistemic: note: 1 field(s) of the wrong type were read as absent: {kind} `{key}`"
            in done.stderr
        )
    if key == "seq":  # its call's outcome is not known
        assert (
            'id="call-1" data-act="collect-info" data-status="unknown"'
            in (tmp_path / "o.html").read_text()
        )


@pytest.mark.system  # end to end, slow for the default tier
def test_plot_draws_control_characters_as_escapes(demo: Path, tmp_path: Path) -> None:
    """No glyph for them: matplotlib would warn on stderr, echoing the escape sequence."""
    journal = copy_journal(demo, tmp_path / "escapes", anchor=False)
    hostile = "\x1b]0;PWNED\x07\x1b[2J"
    found = [json.loads(line) for line in journal.read_text().splitlines()]
    found[0]["task"] += hostile
    next(r for r in found if r["kind"] == "call")["act"] = "look" + hostile
    journal.write_text("".join(json.dumps(r) + "\n" for r in found))
    done = epistemic("plot", str(journal), "-o", str(tmp_path / "e.svg"))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stderr
    text = " ".join(ET.parse(tmp_path / "e.svg").getroot().itertext())
    assert "look\\x1b]0;PWNED\\x07\\x1b[2J" in text and "\x1b" not in text


@pytest.mark.system  # end to end, slow for the default tier
def test_an_act_from_a_foreign_writer_is_shown_as_text(demo: Path, tmp_path: Path) -> None:
    journal = copy_journal(demo, tmp_path / "foreign", anchor=False)
    odd = "<img src=x onerror=alert(2)> $\\frac{$"  # markup, and TeX that matplotlib can't parse
    call = {"kind": "call", "seq": 19, "t": "2030-01-01T00:00:00.000Z", "tool": "bash"}
    chained(journal, {"v": 1, **call, "act": odd, "reason": "why", "command": "x"})
    page = html_report.render_html(sessions.load(journal))
    assert "<img" not in page and "&lt;img src=x onerror=alert(2)&gt; $\\frac{$" in page
    assert not any(name.startswith("on") for _, attrs in Tags(page).found for name in attrs)
    for suffix in ("png", "svg"):  # the act gets a row of its own, its name as plain text
        done = epistemic("plot", str(journal), "-o", str(tmp_path / f"foreign.{suffix}"))
        assert done.returncode == 0, done.stderr
    assert odd in " ".join(ET.parse(tmp_path / "foreign.svg").getroot().itertext())


@pytest.mark.system  # end to end, slow for the default tier
def test_bad_input_is_a_usage_error(demo: Path, tmp_path: Path) -> None:
    assert_usage_error(epistemic("plot", str(tmp_path / "nowhere")), "no such file")
    assert_usage_error(epistemic("html", str(tmp_path / "nowhere")), "no such file")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("this is not JSON\n{nor this\n")
    assert_usage_error(epistemic("html", str(garbage)), "not a journal")
    assert_usage_error(epistemic("plot", str(garbage)), "not a journal")
    assert_usage_error(epistemic("plot", str(demo), "-o", str(tmp_path / "x.pdf")), ".png or .svg")
    assert_usage_error(epistemic("html", str(demo), "-o", str(tmp_path / "x.txt")), ".html")
    assert_usage_error(
        epistemic("html", str(demo), "-o", str(tmp_path / "no" / "x.html")), "folder"
    )
    assert not list(tmp_path.glob("x.*"))


# -- html in a real browser ---------------------------------------------------------------------


class Tags(HTMLParser):
    """Every start tag of a page, with its attributes; `calls` are the narrative's entries."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))

    def first(self, tag: str, **wanted: str) -> dict[str, str | None]:
        """The first `tag` whose attributes include `wanted` (`id="narrative"`)."""
        return next(
            attrs
            for name, attrs in self.found
            if name == tag and all(attrs.get(key) == value for key, value in wanted.items())
        )

    @property
    def calls(self) -> list[dict[str, str | None]]:
        return [a for t, a in self.found if t == "li" and a.get("class") == "call"]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run headless chromium; fail (not skip) with the fix when it is not installed."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: the HTML report is tested in a real browser. Install "
            "Debian's chromium package: `scripts/setup --test` does (apt-get install chromium)",
            pytrace=False,
        )
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    command += [f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, f"the page logged to the console (a script error, a CSP refusal): {console}"
    return done


def dom(page: Path, tmp_path: Path, fragment: str = "") -> Tags:
    return Tags(chromium(tmp_path, "--dump-dom", page.as_uri() + fragment).stdout)


@pytest.fixture(scope="module")
def pages(demo: Path, api: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pages")
    for name, workspace in (("demo", demo), ("api", api)):
        done = epistemic("html", str(workspace), "-o", str(folder / f"{name}.html"))
        assert done.returncode == 0, done.stderr
    return {"demo": folder / "demo.html", "api": folder / "api.html"}


@pytest.mark.system  # headless chromium
def test_the_page_loads_and_its_script_runs(pages: dict[str, Path], tmp_path: Path) -> None:
    for name, count in (("demo", 18), ("api", 9)):
        tags = dom(pages[name], tmp_path)
        assert tags.first("html").get("data-ready") == "1"  # the script ran to its end
        assert len(tags.calls) == count and not any("hidden" in c for c in tags.calls)
        assert "hidden" not in tags.first("form")  # the filters are shown once the script runs
        assert tags.first("ol", id="narrative").get("data-visible") == str(count)
        assert not [t for t, _ in tags.found if t == "img"]  # the hostile markup stayed text


def expected(workspace: Path, acts: set[str], statuses: set[str]) -> list[int]:
    """The calls a filter should leave visible, computed from the journal."""
    return [
        v.seq
        for v in sessions.load(workspace).views
        if (not acts or (v.act or "-") in acts)
        and (not statuses or status_of(v) in statuses or ("flagged" in statuses and bool(v.flags)))
    ]


@pytest.mark.parametrize(
    ("name", "fragment", "acts", "statuses"),
    [
        ("demo", "#act=revert", {"revert"}, set()),
        ("demo", "#status=failed", set(), {"failed"}),
        ("demo", "#act=collect-info,revert&status=ok", {"collect-info", "revert"}, {"ok"}),
        ("demo", "#status=rejected", set(), {"rejected"}),
        ("api", "#status=denied,flagged", set(), {"denied", "flagged"}),
        ("api", "#act=-", {"-"}, set()),
        ("api", "#act=verify", {"verify"}, set()),
    ],
)
@pytest.mark.system  # headless chromium
def test_filters_set_from_the_address(
    pages: dict[str, Path],
    demo: Path,
    api: Path,
    tmp_path: Path,
    name: str,
    fragment: str,
    acts: set[str],
    statuses: set[str],
) -> None:
    tags = dom(pages[name], tmp_path, fragment)
    visible = [int(str(c["id"]).split("-")[1]) for c in tags.calls if "hidden" not in c]
    wanted = expected(demo if name == "demo" else api, acts, statuses)
    assert visible == wanted
    assert len(tags.calls) == (18 if name == "demo" else 9)
    assert tags.first("ol", id="narrative").get("data-visible") == str(len(wanted))
    marks = [a for t, a in tags.found if t == "a" and str(a.get("class")).startswith("mark")]
    dimmed = [int(str(a["data-seq"])) for a in marks if "dim" in str(a.get("class"))]
    assert sorted(set(range(1, len(marks) + 1)) - set(dimmed)) == wanted  # the timeline agrees


@pytest.mark.system  # headless chromium
def test_a_screenshot_of_the_page(pages: dict[str, Path], tmp_path: Path) -> None:
    shot = tmp_path / "page.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", pages["demo"].as_uri())
    assert png_size(shot) == (1280, 2000)
    assert shot.stat().st_size > 50_000  # a rendered page, not a blank one


def test_html_text_cannot_be_made_to_read_reversed() -> None:
    from epistemic_agent.core.htmltext import esc

    shown = esc("rm -rf \u202e/ssalg\u202c and \u2066x\u2069")
    assert not any(char in shown for char in "\u202e\u202c\u2066\u2069")
    assert "\\u202e/ssalg\\u202c" in shown and "\\u2066x\\u2069" in shown
