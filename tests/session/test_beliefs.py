"""The ledger of beliefs (who settled each test-hypothesis, what acted on it), a supervisor on
a real SDK against the fake model server, the demo's flag, and `bench --supervisor`'s table."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC, KEY
from epistemic_agent.journal.beliefs import Ledger, agent_verdict
from epistemic_agent.policy.supervisor import SupervisorSpec
from epistemic_agent.session.session import Session, Settings
from epistemic_agent.supervisor.model import make_supervisor
from fakeserver import FakeServer
from wire import MODEL, OpenAIWire

pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.usefixtures("systmp")]
BELIEF = (
    "I believe report.py counts only completed customers; if it prints 8 the belief is refuted."
)
OTHER = "I believe notes.txt is empty; if cat prints anything the belief is refuted."


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "report.py").write_text("print(6)\n")
    (folder / "notes.txt").write_text("")
    return folder


@pytest.mark.parametrize(
    ("reason", "verdict"),
    [
        ("Held: the count is 6.", "confirmed"),
        ("  **Confirmed** — as expected", "confirmed"),
        ("Did not hold: it printed 8", "refuted"),
        ("didn't hold, so", "refuted"),
        ("The belief did not hold: 8", "refuted"),
        ("Refuted. Rewriting", "refuted"),
        ("Unsettled: the output was empty", "unsettled"),
        ("Holding the file open is needed", None),
        ("Heldout data must stay", None),
        ("I now change the count", None),
    ],
)
def test_the_agent_s_opening_words_are_its_verdict(reason: str, verdict: str | None) -> None:
    assert agent_verdict(reason) == verdict


def ledger(ws: Path) -> Ledger:
    found = Ledger()
    for line in (ws / ".epistemic" / "journal.jsonl").read_text().splitlines():
        found.fold(json.loads(line))
    return found


def test_beliefs_are_settled_by_the_next_reason_and_linked_to_what_acted_on_them(
    ws: Path,
) -> None:
    with Session(ws) as s:
        tested = s.bash("python3 report.py", "test-hypothesis", BELIEF)
        assert "Open your next reason with whether it held" in tested.for_model()
        s.bash("echo 8 > report.py", "change-state", "Did not hold: report.py must count all")
        s.bash("cat notes.txt", "test-hypothesis", OTHER)
        s.bash("ls", "collect-info", "Nothing more is known; I need to see what files exist.")
        s.bash("echo x > notes.txt", "change-state", "Held: and now notes.txt gets a line")
        s.bash("rm -f report.py", "revert", "The report.py edit was wrong; take it back now.")
    found = ledger(ws)
    assert found.counts() == {"tested": 2, "confirmed": 0, "refuted": 1, "unsettled": 1}
    first, second = found.beliefs[1], found.beliefs[3]
    assert first["verdicts"] == [{"verdict": "refuted", "by": "agent", "at": 2, "why": ""}]
    assert second["verdicts"] == []  # the call after it did not say: "Held:" came too late
    assert [a["seq"] for a in first["acted_on"]] == [2, 6]
    assert [a["seq"] for a in second["acted_on"]] == [5]
    report = (ws / "RATIONALE.md").read_text()
    section = report[report.index("## Beliefs") : report.index("## Narrative")]
    assert section.index("Belief of call 1 · refuted") < section.index("Belief of call 3")
    assert "1 refuted" in section and "unsettled (no one said)" in section


def test_the_supervisor_s_verdict_on_a_belief_counts_over_the_agent_s(
    ws: Path, tmp_path: Path
) -> None:
    path = tmp_path / "sup.json"
    beliefs = [{"seq": 1, "verdict": "confirmed", "why": "6 is what the data gives"}]
    path.write_text(json.dumps([{"verdict": "ok"}, {"verdict": "ok", "beliefs": beliefs}]))
    supervisor = make_supervisor(SupervisorSpec(f"replay:{path}"))
    with Session(ws, Settings(), supervisor=supervisor) as s:
        s.bash("python3 report.py", "test-hypothesis", BELIEF)
        s.bash("echo 8 > report.py", "change-state", "Did not hold: report.py must count all")
    found = ledger(ws)
    assert [v["by"] for v in found.beliefs[1]["verdicts"]] == ["supervisor", "agent"]
    assert found.counts()["confirmed"] == 1


def test_a_supervisor_on_a_real_sdk_is_recorded_apart_from_the_agent(
    ws: Path, server: FakeServer
) -> None:
    wire = OpenAIWire(stream=True)  # the providers stream by default
    answer = json.dumps({"verdict": "flag", "note": "8 customers, not 6"})
    body, headers = wire.response(answer, [], (1200, 40, 0))
    server.push(200, body, headers=headers)
    spec = SupervisorSpec(f"openai:{MODEL}", base_url=wire.base_url(server))
    with Session(ws, Settings(), supervisor=make_supervisor(spec)) as s:
        result = s.bash("python3 report.py", "test-hypothesis", BELIEF)
    assert result.review == {"verdict": "flag", "note": "8 customers, not 6", "failure": None}
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    sent = request.json()
    asked = json.loads(sent["messages"][-1]["content"])
    assert asked["call"]["reason"] == BELIEF and asked["call"]["act"] == "test-hypothesis"
    assert "Answer with one JSON object" in sent["messages"][0]["content"]
    records = [json.loads(x) for x in (ws / ".epistemic/journal.jsonl").read_text().splitlines()]
    review = next(r for r in records if r["kind"] == "review")
    assert (review["provider"], review["model"]) == ("openai", MODEL)
    assert (review["input_tokens"], review["completion_tokens"]) == (1200, 40)
    assert not [r for r in records if r["kind"] == "model"]


def test_a_supervisor_server_that_fails_is_a_journaled_failure(
    ws: Path, server: FakeServer
) -> None:
    server.push(401, {"error": {"message": "bad key"}})
    spec = SupervisorSpec(f"openai:{MODEL}", base_url=OpenAIWire(stream=True).base_url(server))
    with Session(ws, Settings(), supervisor=make_supervisor(spec)) as s:
        result = s.bash("python3 report.py", "test-hypothesis", BELIEF)
    assert result.ok and result.review is not None
    assert result.review["failure"] == "provider-error" and "HTTP 401" in result.review["note"]


@pytest.mark.system  # end to end, slow for the default tier
def test_the_demo_flags_its_wrong_discount_edit_in_the_report(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    done = subprocess.run(
        [EPISTEMIC, "demo", "-o", str(out)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "supervisor flag: The docstring makes discount a percentage" in done.stdout
    report = (out / "RATIONALE.md").read_text()
    section = report[report.index("## Beliefs") : report.index("## Narrative")]
    first = section.index("### ")
    assert section[first:].startswith("### ✗ Belief of call 10 · refuted (supervisor, at call 11)")
    assert "- **Call 9** `flag`: The docstring makes discount a percentage" in section
    assert "call 11 `revert` (`process_orders.py`)" in section


SUPERVISOR = [
    {
        "when": "unique_customers should be 6 (ana, ben",
        "verdict": "flag",
        "note": "The docstring counts every customer whatever the status: 8, not 6.",
    },
    {
        "when": "max() returns the first product seen among equals",
        "verdict": "block",
        "note": "a false alarm on purpose: the tie rule is right",
    },
    {"default": True, "verdict": "ok"},
]
TABLE = [
    "task              wrong  caught   false alarms  failed reviews",
    "buggy-script-fix      3       1  1 of 13 calls               0",
    "--------------------------------------------------------------",
    "total                 3       1  1 of 13 calls               0",
]


@pytest.mark.system  # end to end, slow for the default tier
def test_bench_measures_the_supervisor_on_wrong_and_reference_sessions(tmp_path: Path) -> None:
    path = tmp_path / "sup.json"
    path.write_text(json.dumps(SUPERVISOR))
    argv = [EPISTEMIC, "bench", "--model", "replay", "--tasks", "buggy-script-fix"]
    argv += ["--supervisor", f"replay:{path}", "-o", str(tmp_path / "out")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index(f"supervisor replay:{path} (a second opinion, not proof):")
    assert lines[start + 1 : start + 5] == TABLE
    assert lines[-1].startswith("1 passed, 0 failed in ") and lines[-1].endswith(" s")
    saved = json.loads((tmp_path / "out" / "supervisor.json").read_text())
    row: dict[str, Any] = saved["tasks"][0]
    assert row["caught_sessions"] == ["unique-customers-belief"]
    assert row["oracle_failed"] == 3  # every wrong session still failed its oracle
    assert saved["totals"]["false_alarms"] == 1
