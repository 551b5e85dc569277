"""Secrets never reach the record: the journal, the evidence files and the report are scrubbed
(environment values, token formats, the policy's patterns), the marker says what was there,
and the hash chain covers the scrubbed text."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import EPISTEMIC
from epistemic_agent.journal.verify import verify_journal
from epistemic_agent.policy.file import load_policy
from epistemic_agent.session.session import Session

LOOK = "Check which credentials this job sees before calling the deploy API."
CHANGE = "The deploy script needs its configuration written next to it."
#: Built at run time so no token-shaped literal sits in the source.
OPENAI_LIKE = "sk-" + "proj-" + "Ab3" * 12
ENV_SECRET = "s3cr3t-" + "value-" * 3


def everything_recorded(ws: Path) -> bytes:
    """Every byte the record holds: journal, evidence, report and its pages."""
    blobs = [p.read_bytes() for p in (ws / ".epistemic").rglob("*") if p.is_file()]
    return b"\n".join([*blobs, (ws / "RATIONALE.md").read_bytes()])


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DEPLOY_API_TOKEN", ENV_SECRET)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def test_an_environment_secret_in_output_is_scrubbed_everywhere(ws: Path) -> None:
    with Session(ws) as session:
        result = session.bash(
            'echo "token is $DEPLOY_API_TOKEN"; echo done >&2', "collect-info", LOOK
        )
    assert result.ok and ENV_SECRET not in result.stdout
    assert result.stdout == "token is [REDACTED:env:DEPLOY_API_TOKEN]\n"
    recorded = everything_recorded(ws)
    assert ENV_SECRET.encode() not in recorded
    assert b"[REDACTED:env:DEPLOY_API_TOKEN]" in recorded
    outcome = [json.loads(x) for x in (ws / ".epistemic/journal.jsonl").read_text().splitlines()][
        -1
    ]
    assert outcome["redacted"] == 1
    assert verify_journal(ws / ".epistemic" / "journal.jsonl").status == "intact"


def test_a_token_in_the_command_and_reason_is_scrubbed_but_the_command_runs_with_it(
    ws: Path,
) -> None:
    with Session(ws) as session:
        result = session.bash(
            f"printf %s {OPENAI_LIKE} | wc -c", "collect-info", f"{LOOK} Key {OPENAI_LIKE}"
        )
    assert result.stdout.strip() == str(len(OPENAI_LIKE))  # the real value reached the command
    call = [json.loads(x) for x in (ws / ".epistemic/journal.jsonl").read_text().splitlines()][1]
    assert call["command"] == "printf %s [REDACTED:openai-key] | wc -c"
    assert call["reason"].endswith("Key [REDACTED:openai-key]") and call["redacted"] == 2
    assert OPENAI_LIKE.encode() not in everything_recorded(ws)


def test_file_contents_are_real_on_disk_and_scrubbed_in_the_record(ws: Path) -> None:
    body = f"api_key = {OPENAI_LIKE}\n"
    with Session(ws) as session:
        session.write_file("deploy.toml", body, CHANGE)
        read = session.read_file("deploy.toml", LOOK)
    assert (ws / "deploy.toml").read_text() == body
    assert OPENAI_LIKE not in read.stdout and "[REDACTED:openai-key]" in read.stdout
    assert OPENAI_LIKE.encode() not in everything_recorded(ws)


def test_policy_patterns_and_names_are_scrubbed(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LICENSE_BLOB", "licence-" + "x" * 20)
    policy = tmp_path / "p.toml"
    policy.write_text(
        'default = "allow"\n[secrets]\npatterns = ["ACME-[0-9]{8}", "ticket=(?P<secret>\\\\w+)"]\n'
        'env = ["LICENSE_BLOB"]\n'
    )
    with Session(ws, policy=load_policy(policy)) as session:
        result = session.bash(
            'echo "id ACME-12345678 ticket=abc123 lic $LICENSE_BLOB"', "collect-info", LOOK
        )
    expected = "id [REDACTED:policy:1] ticket=[REDACTED:policy:2] lic [REDACTED:env:LICENSE_BLOB]\n"
    assert result.stdout == expected
    recorded = everything_recorded(ws)
    assert b"ACME-12345678" not in recorded and b"abc123" not in recorded


def test_private_key_blocks_in_a_huge_output_are_scrubbed(ws: Path, tmp_path: Path) -> None:
    key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + "QUJD" * 200
        + "\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    source = tmp_path / "big.txt"
    source.write_text("filler line\n" * 300_000 + key + "tail\n")  # ~3.6 MB: several chunks
    with Session(ws) as session:
        result = session.bash(f"cat {source}", "collect-info", LOOK)
    assert result.ok and "[REDACTED:private-key]" in result.stdout
    assert b"QUJDQUJD" not in everything_recorded(ws)


def test_exec_prints_and_records_the_scrubbed_text(ws: Path) -> None:
    env = {**os.environ, "DEPLOY_API_TOKEN": ENV_SECRET}
    done = subprocess.run(
        [
            EPISTEMIC,
            "exec",
            "--type",
            "collect-info",
            "--reason",
            LOOK,
            "--",
            "echo $DEPLOY_API_TOKEN",
        ],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == "[REDACTED:env:DEPLOY_API_TOKEN]\n"
    assert ENV_SECRET.encode() not in everything_recorded(ws)
    log = subprocess.run(
        [EPISTEMIC, "log", "--json"], cwd=ws, capture_output=True, text=True, check=False
    )
    assert ENV_SECRET not in log.stdout and "REDACTED" in log.stdout


def test_model_text_and_the_task_are_scrubbed(ws: Path) -> None:
    with Session(ws, header={"task": f"deploy with {OPENAI_LIKE}"}) as session:
        session.event("text", step=1, text=f"I will use {OPENAI_LIKE} now")
    assert OPENAI_LIKE.encode() not in everything_recorded(ws)
    records = [json.loads(x) for x in (ws / ".epistemic/journal.jsonl").read_text().splitlines()]
    assert records[0]["task"] == "deploy with [REDACTED:openai-key]"
    assert records[-1]["redacted"] == 1


def test_observed_paths_and_flags_are_scrubbed(ws: Path) -> None:
    with Session(ws) as session:
        result = session.bash('touch "out-$DEPLOY_API_TOKEN.txt"', "change-state", CHANGE)
    assert result.ok and (ws / f"out-{ENV_SECRET}.txt").exists()
    assert ENV_SECRET.encode() not in everything_recorded(ws)
