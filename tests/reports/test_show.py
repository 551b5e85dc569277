"""`epistemic show`: a rejected call shows what it gave; the static check, the policy's
decision, what the call changed and how it was confined are sentences, never raw JSON; the
whole output is one flag away; every recorded piece of text is escaped for the terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import epistemic
from epistemic_agent.reports import sentences
from epistemic_agent.session.session import Session

ESC = "\x1b"
HOSTILE = f"see {ESC}[31mred{ESC}[0m `tick` <script>alert(1)</script> [bold]x[/] done"
LOOK = "See which files the workspace holds before deciding anything."
WRITE = "Create the file the task asks for; its content is the deliverable."


def show(ws: Path, *args: str) -> Any:
    done = epistemic("show", *args, "-C", str(ws))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


def test_a_rejected_call_shows_the_reason_and_command_it_gave(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        result = session.bash(f"echo '{HOSTILE}'", "explore", HOSTILE)
    assert result.status == "rejected"
    text = show(tmp_path, "1")
    assert "Why (as given; the gate rejected this declaration):" in text
    assert "Command (as given; the gate rejected this declaration):" in text
    assert "Act given: explore" in text
    escaped = HOSTILE.replace(ESC, "\\x1b")
    assert f"    {escaped}" in text and f"    echo '{escaped}'" in text
    assert ESC not in text
    assert "Why:\n    \n" not in text  # not the empty Why of a declaration read elsewhere
    data = show(tmp_path, "1", "--json")
    assert data["declaration"] == {
        "rejected": True,
        "reason": HOSTILE,
        "command": f"echo '{HOSTILE}'",
        "act": "explore",
    }
    assert data["declared"]["given"]["reason"] == HOSTILE  # what was there stays
    assert data["confinement"]["sentence"] == "It never ran: it was rejected."
    assert "has no output" in show(tmp_path, "1", "--output")


def test_show_speaks_sentences_not_json_and_says_how_the_call_was_confined(
    tmp_path: Path,
) -> None:
    with Session(tmp_path) as session:
        session.bash("echo made > made.txt", "change-state", WRITE)
        session.bash("ls", "collect-info", LOOK)
        mechanism = session.confinement.mechanism
    text = show(tmp_path, "1")
    assert "{" not in text.split("── ", 1)[0]  # no JSON above the evidence
    assert "Static check: The command is mutating; it writes made.txt." in text
    assert "Observed: It created made.txt" in text
    assert "Policy: The policy in force, preset:approve-none, has no rules" in text
    (line,) = [x for x in text.splitlines() if x.startswith("Confinement: ")]
    data = show(tmp_path, "1", "--json")
    assert data["outcome"]["enforcement"] == "none"  # the record's field stays as it was
    assert data["confinement"]["mechanism"] == mechanism
    assert data["confinement"]["workspace_read_only"] is False
    if mechanism == "none":
        assert line.startswith("Confinement: Not confined")
        assert data["confinement"]["confined"] is False
    else:
        assert line.startswith(f"Confinement: Confined by {mechanism} as a change-state act")
        assert "enforcement: none" in line and "not read-only" in line
        assert data["confinement"]["confined"] is True
        observation = show(tmp_path, "2", "--json")["confinement"]
        assert observation["workspace_read_only"] is True
        assert "the workspace was read-only for it" in observation["sentence"]
    assert data["said"]["confinement"] == data["confinement"]["sentence"]


def test_show_output_prints_the_whole_output_escaped(tmp_path: Path) -> None:
    lines = "".join(f"line {n}\\n" for n in range(300))
    with Session(tmp_path) as session:
        session.bash(f"printf '{lines}'; printf '{HOSTILE}' >&2", "collect-info", LOOK)
    text = show(tmp_path, "1", "--output")
    assert text.startswith("── stdout (")
    assert "    line 0\n" in text and "    line 299\n" in text
    assert "── stderr (" in text and HOSTILE.replace(ESC, "\\x1b") in text
    assert ESC not in text
    assert "Why:" not in text  # the output alone


def test_the_sentences_escape_nothing_themselves_and_show_escapes_them(tmp_path: Path) -> None:
    """Paths and reasons in the sentences are recorded text: `show` shows them as escapes."""
    name = f"{ESC}[31mevil`<script>`.txt"
    with Session(tmp_path) as session:
        session.bash(f"touch '{name}'", "change-state", WRITE)
    text = show(tmp_path, "1")
    assert ESC not in text
    assert "Observed: It created \\x1b[31mevil`<script>`.txt" in text
    assert "Static check: The command is mutating; it writes \\x1b[31mevil" in text


def test_confinement_sentences_name_the_mechanism_and_what_enforcement_means() -> None:
    header = {
        "mechanism": "bwrap",
        "scratch": "/tmp/s",
        "grants": {"setup": ["/home/u/.cache"]},
        "not_held": {"tool-protected": "the tool lies in the workspace"},
    }
    outcome = {"ok": True, "enforcement": "none", "confinement": "bwrap"}
    mutating = sentences.confinement("bash", "setup", True, outcome, header)
    assert mutating.confined is True and mutating.workspace_read_only is False
    assert mutating.sentence.startswith("Confined by bwrap as a setup act: it could write the ")
    assert "folders granted to setup acts (/home/u/.cache)" in mutating.sentence
    assert "1 guarantee(s) did not hold on that machine: tool-protected" in mutating.sentence
    looked = sentences.confinement(
        "bash", "collect-info", False, {**outcome, "enforcement": "bwrap"}, header
    )
    assert looked.workspace_read_only is True
    assert "read-only for it (bwrap)" in looked.sentence and "nothing but" in looked.sentence
    old = sentences.confinement("bash", "collect-info", False, {"ok": True}, None)
    assert old.mechanism is None and "does not say" in old.sentence
    from_header = sentences.confinement("bash", "change-state", True, {"ok": True}, header)
    assert from_header.source == "session" and from_header.mechanism == "bwrap"
    assert "bwrap (the session's mechanism: the outcome names none)" in from_header.sentence
    cancelled = {"ok": False, "cancelled": True, "outcome": "withdrawn; the call did not run"}
    withdrawn = sentences.confinement("bash", "change-state", True, cancelled, header)
    assert withdrawn.confined is None and "did not run" in withdrawn.sentence
    bare = sentences.confinement(
        "bash", "verify", False, {"enforcement": "none"}, {"mechanism": "none"}
    )
    assert bare.confined is False and bare.sentence.startswith("Not confined")
    unconfined = sentences.confinement(
        "read_file", "collect-info", False, {}, {"mechanism": "none"}
    )
    assert unconfined.sentence.startswith("Not confined: the session had no confinement")
    tool = sentences.confinement("write_file", "change-state", True, {"ok": True}, header)
    assert tool.confined is False and "not confined (bwrap confines commands only)" in tool.sentence


def test_the_policy_sentence_names_the_policy_as_the_header_records_it() -> None:
    said = sentences.policy_decision(None, "preset:approve-none")
    assert said.startswith("The policy in force, preset:approve-none, has no rules")
    asked = {"decision": "ask", "rule": "deploys", "message": "a human signs off"}
    assert sentences.policy_decision(asked, "/ws/epistemic.toml") == (
        "The policy /ws/epistemic.toml asked a human about it (its rule deploys): a human signs off"
    )
    assert "denied it (its default)." in sentences.policy_decision({"decision": "deny"}, None)
