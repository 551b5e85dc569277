"""The supervisor: a second model reviews a call's act and reason before it runs. Every path is
driven by a verdict script (ok, flag, block, provider error, budget exhausted, malformed), and
one through a real SDK against the fake model server; bad input is a clear error."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import EPISTEMIC
from epistemic_agent.approvals.request import Answer, Request
from epistemic_agent.policy.file import load_policy
from epistemic_agent.policy.rules import PolicyError
from epistemic_agent.policy.supervisor import SupervisorSpec
from epistemic_agent.session.session import Session, Settings
from epistemic_agent.supervisor.model import VerdictError, make_supervisor, parse_verdict

pytestmark = pytest.mark.usefixtures("systmp")

CHANGE = "The task asks for a marker file; creating it is the change itself."
BELIEF = (
    "I believe unique_customers should be 6 (ana, ben, chen, dara, eli, femi); if it prints "
    "another number the belief is refuted."
)
NASTY = "see [bold]docs[/] <script>alert(1)</script> \x1b[31mred\x1b[0m `tick` | pipe"


def script(tmp_path: Path, entries: list[dict[str, Any]], name: str = "sup.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(entries))
    return f"replay:{path}"


def journal(ws: Path) -> list[dict[str, Any]]:
    lines = (ws / ".epistemic" / "journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def kinds(ws: Path) -> list[tuple[str, int | None]]:
    return [(r["kind"], r.get("seq")) for r in journal(ws) if r["kind"] != "session"]


def session(ws: Path, spec: str, **fields: Any) -> Session:
    supervisor = make_supervisor(SupervisorSpec(spec, **fields))
    return Session(ws, Settings(), supervisor=supervisor)


# -- the verdict ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("looks fine to me", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"verdict": "maybe"}', 'unknown verdict "maybe": it must be one of ok, flag, block'),
        ('{"verdict": null}', "unknown verdict null"),
        ('{"verdict": "flag"}', "a `flag` verdict needs a note"),
        ('{"verdict": "block", "note": "  "}', "a `block` verdict needs a note"),
        ('{"verdict": "ok", "note": 3}', "`note` is not a string"),
        ('{"verdict": "ok", "beliefs": {}}', "`beliefs` is not a list"),
        ('{"verdict": "ok", "beliefs": [{"seq": 0, "verdict": "refuted"}]}', "`seq`"),
        ('{"verdict": "ok", "beliefs": [{"seq": 2, "verdict": "wrong"}]}', "unknown belief"),
    ],
)
def test_a_malformed_verdict_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(VerdictError, match=None) as raised:
        parse_verdict(text)
    assert problem in str(raised.value)


def test_a_fenced_verdict_is_read_and_a_long_note_is_cut() -> None:
    verdict = parse_verdict('```json\n{"verdict": "flag", "note": "' + "x" * 5000 + '"}\n```')
    assert verdict.verdict == "flag" and len(verdict.note) == 2000


@given(st.text(max_size=300))
def test_any_answer_is_a_verdict_or_a_verdict_error(text: str) -> None:
    try:
        verdict = parse_verdict(text)
    except VerdictError:
        return
    assert verdict.verdict in ("ok", "flag", "block")


# -- ok, flag, block ----------------------------------------------------------------------------


def test_the_review_is_journaled_durably_before_the_call_and_apart_from_the_agent(
    ws: Path, tmp_path: Path
) -> None:
    spec = script(
        tmp_path, [{"verdict": "ok", "usage": {"input_tokens": 90, "completion_tokens": 9}}]
    )
    with session(ws, spec) as s:
        result = s.bash("touch marker", "change-state", CHANGE)
        s.bash("ls", "collect-info", "Nothing is known yet; I need to see what files exist.")
    assert result.ok and result.review == {"verdict": "ok", "note": "", "failure": None}
    assert kinds(ws)[:3] == [("review", 1), ("call", 1), ("outcome", 1)]
    review = journal(ws)[1]
    assert review["role"] == "second-opinion" and review["act"] == "change-state"
    assert (review["input_tokens"], review["completion_tokens"]) == (90, 9)
    assert journal(ws)[0]["supervisor"]["role"] == "second-opinion"
    assert ("review", 2) not in kinds(ws)  # collect-info is not reviewed by default
    assert not [r for r in journal(ws) if r["kind"] == "model"]  # not the agent's spend


def test_a_block_rejects_the_call_before_it_runs_and_the_note_reaches_the_model(
    ws: Path, tmp_path: Path
) -> None:
    spec = script(tmp_path, [{"verdict": "block", "note": "the docstring says 8 customers"}])
    with session(ws, spec) as s:
        result = s.bash("touch marker", "change-state", CHANGE)
    assert not (ws / "marker").exists()
    assert (result.status, result.rule) == ("rejected", "supervisor")
    assert "the supervisor blocked this call: the docstring says 8 customers" in result.for_model()
    assert kinds(ws) == [("review", 1), ("rejected", 1)]
    assert "**Rejected** (`supervisor`)" in (ws / "RATIONALE.md").read_text()


def test_a_flag_runs_the_call_and_reaches_the_report_the_hooks_and_the_approver(
    ws: Path, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(
        'default = "ask"\n[approval]\nsignatures = "optional"\n'
        '[[hook]]\non = ["supervisor-flag"]\ncommand = "cat >> $TMPDIR/alerts.jsonl"\n'
    )
    asked: list[Request] = []

    class Approver:
        def ask(self, request: Request) -> Answer:
            asked.append(request)
            return Answer("approved", "alice", "test")

    spec = script(tmp_path, [{"when": "should be 6", "verdict": "flag", "note": NASTY}])
    supervisor = make_supervisor(SupervisorSpec(spec))
    with Session(ws, Settings(), policy=load_policy(policy), approver=Approver(),
                 supervisor=supervisor) as s:  # fmt: skip
        result = s.bash("echo 6", "test-hypothesis", BELIEF)
    assert result.ok and result.review is not None and result.review["verdict"] == "flag"
    assert asked and asked[0].message.endswith(f"supervisor flagged: {NASTY}")
    alerts = sorted((tmp_path / "systmp" / "epistemic").glob("*/alerts.jsonl"))
    event = json.loads(alerts[0].read_text().splitlines()[0])
    assert (event["event"], event["verdict"], event["note"]) == ("supervisor-flag", "flag", NASTY)
    report = (ws / "RATIONALE.md").read_text()
    assert "\\[bold\\]docs\\[/\\] \\<script\\>alert(1)\\</script\\> \\\\x1b\\[31mred" in report
    assert "\x1b" not in report and "<script>" not in report


def test_a_flag_note_is_escaped_in_html_stats_and_exec(ws: Path, tmp_path: Path) -> None:
    spec = script(tmp_path, [{"when": "marker", "verdict": "flag", "note": NASTY}])
    done = subprocess.run(
        [EPISTEMIC, "exec", "-C", str(ws), "--supervisor", spec, "--type", "change-state",
         "--reason", CHANGE, "--", "touch marker"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "epistemic: supervisor flag: see [bold]docs[/]" in done.stderr
    assert "\x1b" not in done.stderr and "\\x1b[31mred" in done.stderr
    page = subprocess.run(
        [EPISTEMIC, "html", str(ws), "-o", str(tmp_path / "page.html")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "page.html").read_text()
    assert '<section id="beliefs">' in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    stats = subprocess.run(
        [EPISTEMIC, "stats", str(ws), "--json"], capture_output=True, text=True, timeout=60
    )
    row = json.loads(stats.stdout)
    row = row["sessions"][0] if "sessions" in row else row
    assert row["supervisor"]["flag"] == 1 and row["supervisor"]["reviews"] == 1


# -- failures: never silent, the policy decides -------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "failure"),
    [
        ({"error": "HTTP 500: the supervisor's server is down"}, "provider-error"),
        ({"text": "I think it is fine"}, "malformed"),
        ({"verdict": "perhaps"}, "malformed"),
    ],
)
@pytest.mark.parametrize("on_error", ["allow", "deny"])
def test_a_failed_review_is_journaled_and_on_error_decides(
    ws: Path, tmp_path: Path, entry: dict[str, Any], failure: str, on_error: str
) -> None:
    with session(ws, script(tmp_path, [entry]), on_error=on_error) as s:
        result = s.bash("touch marker", "change-state", CHANGE)
    review = journal(ws)[1]
    assert (review["kind"], review["verdict"], review["failure"]) == ("review", None, failure)
    assert review["on_error"] == on_error and review["error"]
    assert (ws / "marker").exists() == (on_error == "allow")
    assert result.review is not None and result.review["failure"] == failure
    if on_error == "deny":
        assert result.rule == "supervisor" and "could not review this call" in result.message


def test_a_failed_review_under_ask_goes_to_a_human(ws: Path, tmp_path: Path) -> None:
    asked: list[Request] = []

    class Approver:
        def ask(self, request: Request) -> Answer:
            asked.append(request)
            return Answer("denied", "bob", "test", "not without a review")

    supervisor = make_supervisor(
        SupervisorSpec(script(tmp_path, [{"error": "down"}]), on_error="ask")
    )
    with Session(ws, Settings(), approver=Approver(), supervisor=supervisor) as s:
        result = s.bash("touch marker", "change-state", CHANGE)
    assert result.status == "denied" and not (ws / "marker").exists()
    assert asked[0].rule == "supervisor" and "could not review this call (down)" in asked[0].message


def test_an_exhausted_budget_is_a_failure_without_asking_the_model(
    ws: Path, tmp_path: Path
) -> None:
    entries = [
        {"default": True, "verdict": "ok", "usage": {"input_tokens": 80, "completion_tokens": 30}}
    ]
    with session(ws, script(tmp_path, entries), budget=100) as s:
        first = s.bash("touch one", "change-state", CHANGE)
        second = s.bash("touch two", "change-state", CHANGE)
    assert first.review is not None and first.review["verdict"] == "ok"
    assert second.review is not None and second.review["failure"] == "over-budget"
    failed = [r for r in journal(ws) if r["kind"] == "review"][1]
    assert "budget of 100 tokens is spent (110 used)" in failed["error"]
    assert failed["input_tokens"] is None  # nothing was asked, nothing was spent


def test_a_script_with_nothing_left_fails_the_review_loudly(ws: Path, tmp_path: Path) -> None:
    with session(ws, script(tmp_path, [{"verdict": "ok"}])) as s:
        s.bash("touch one", "change-state", CHANGE)
        second = s.bash("touch two", "change-state", CHANGE)
    assert second.ok and second.review is not None
    assert (
        second.review["failure"] == "provider-error" and "no verdict left" in second.review["note"]
    )


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ("{not json", "is not valid JSON"),
        ("[]", "non-empty JSON array"),
        ('[{"verdict": "ok", "colour": 1}]', "unknown key(s) ['colour']"),
        ('[{"note": "x"}]', "exactly one of verdict, text, error"),
        (
            '[{"default": true, "verdict": "ok"}, {"default": true, "verdict": "ok"}]',
            "more than one",
        ),
        ('[{"verdict": "ok", "usage": {"input_tokens": -1}}]', "`usage` must map"),
    ],
)
@pytest.mark.parametrize("command", ["run", "exec", "bench"])
def test_a_bad_supervisor_script_is_a_usage_error(
    tmp_path: Path, ws: Path, content: str | None, message: str, command: str
) -> None:
    path = tmp_path / "sup.json"
    if content is not None:
        path.write_text(content)
    given = ["--supervisor", f"replay:{path}"]
    argv = {
        "run": ["run", "-C", str(ws), *given, "--model", "replay:nothing.json", "task"],
        "exec": ["exec", "-C", str(ws), *given, "--type", "change-state", "--reason", CHANGE,
                 "--", "true"],
        "bench": ["bench", "--model", "replay", *given, "-o", str(tmp_path / "out")],
    }[command]  # fmt: skip
    done = subprocess.run(
        [EPISTEMIC, *argv],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and message in done.stderr
    assert not (ws / ".epistemic").exists()


def test_the_policy_file_sets_the_supervisor_and_its_faults_have_lines(
    tmp_path: Path, ws: Path
) -> None:
    spec = script(tmp_path, [{"when": "ls", "verdict": "flag", "note": "looked"}])
    good = tmp_path / "good.toml"
    good.write_text(
        f'default = "allow"\n[supervisor]\nmodel = "{spec}"\nacts = ["collect-info"]\n'
        'budget = 5000\non_error = "deny"\n'
    )
    with Session(ws, Settings(), policy=load_policy(good)) as s:
        result = s.bash(
            "ls", "collect-info", "Nothing is known yet; I need to see what files exist."
        )
    assert result.review is not None and result.review["verdict"] == "flag"
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'default = "allow"\n[supervisor]\nacts = ["explore"]\nbudget = -3\n'
        'on_error = "shrug"\ncolour = 1\n'
    )
    with pytest.raises(PolicyError) as raised:
        load_policy(bad)
    lines = str(raised.value).splitlines()
    assert any(":3: [supervisor]: `acts`" in line for line in lines)
    assert any(":4: [supervisor]: `budget`" in line for line in lines)
    assert any(
        ":5: [supervisor]: `on_error` must be one of allow, deny, ask" in line for line in lines
    )
    assert any(":6: [supervisor]: unknown key 'colour'" in line for line in lines)


def test_no_act_can_rewrite_the_supervisors_own_script(ws: Path) -> None:
    """A verdict script in the workspace is read-only for every act, as the policy file is:
    the agent cannot turn its reviewer's blocks into oks."""
    verdicts = ws / "verdicts.json"
    entries = [{"when": "rm ", "verdict": "block", "note": "keep it"}, {"default": True}]
    entries[1]["verdict"] = "ok"
    verdicts.write_text(json.dumps(entries))
    before = verdicts.read_bytes()
    lenient = json.dumps([{"default": True, "verdict": "ok"}])
    with session(ws, f"replay:{verdicts}") as s:
        shell = s.bash(f"echo '{lenient}' > verdicts.json", "change-state", CHANGE)
        tool = s.write_file("verdicts.json", lenient, CHANGE)
        moved = s.bash("mv verdicts.json gone.json", "change-state", CHANGE)
    assert verdicts.read_bytes() == before
    assert not (shell.ok or tool.ok or moved.ok)


def test_a_block_note_is_escaped_on_execs_stderr(ws: Path, tmp_path: Path) -> None:
    spec = script(tmp_path, [{"when": "marker", "verdict": "block", "note": NASTY}])
    done = subprocess.run(
        [EPISTEMIC, "exec", "-C", str(ws), "--supervisor", spec, "--type", "change-state",
         "--reason", CHANGE, "--", "touch marker"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and not (ws / "marker").exists()
    assert "the supervisor blocked this call: see [bold]docs[/]" in done.stderr
    assert "\x1b" not in done.stderr and "\\x1b[31mred" in done.stderr


def test_show_gives_the_supervisors_opinion_on_the_call(ws: Path, tmp_path: Path) -> None:
    spec = script(tmp_path, [{"when": "marker", "verdict": "flag", "note": NASTY}])
    with session(ws, spec) as s:
        s.bash("touch marker", "change-state", CHANGE)
    done = subprocess.run(
        [EPISTEMIC, "show", "1", "-C", str(ws)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("Supervisor (")]
    assert line.startswith("Supervisor (replay:") and "flag: see [bold]docs[/]" in line
    assert "\x1b" not in done.stdout and "\\x1b[31mred" in line
