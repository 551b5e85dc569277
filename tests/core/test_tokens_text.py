"""Token counts said one way for every provider: all input (uncached, read from the cache,
written to it) and output, in `epistemic stats`, the `run` summary and RATIONALE.md; never
Anthropic's own input figure (what follows the last cache breakpoint) beside a total that
disagrees with it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from conftest import EPISTEMIC
from epistemic_agent.core.tokens_text import tokens_line, total_input
from epistemic_agent.journal.spend import spend_of
from epistemic_agent.reports.rationale.render import model_line
from epistemic_agent.session.session import Session, Settings

LOOK = "Nothing is known about this workspace yet; I need to see what files exist."
#: The same request as each provider reports it: Anthropic's input_tokens leaves the cache out.
ANTHROPIC = {
    "prompt_tokens": 847,
    "cached_tokens": 5998,
    "cache_creation_input_tokens": 2511,
    "input_tokens": 9356,
    "completion_tokens": 275,
}
OPENAI = {
    "prompt_tokens": 9356,
    "cached_tokens": 5998,
    "input_tokens": 9356,
    "completion_tokens": 275,
}
LINE = "9,356 input (5,998 read from the cache, 2,511 written) + 275 output tokens"


def model_record(usage: dict[str, int]) -> dict[str, object]:
    return {"kind": "model", "t": "2026-01-01T00:00:01Z", "provider": "p", "model": "m", **usage}


def test_both_providers_say_the_same_total() -> None:
    for usage, line in ((ANTHROPIC, LINE), (OPENAI, LINE.replace(", 2,511 written", ""))):
        spend = spend_of([model_record(usage)]).to_json()
        assert tokens_line(spend) == line
        assert model_line({"calls": 1, **usage}, {"model": "p:m"}, spend).count(line) == 1


def test_a_record_from_before_input_tokens_counts_its_prompt_tokens() -> None:
    assert total_input({"prompt_tokens": 12}) == 12
    assert total_input({"prompt_tokens": 12, "input_tokens": 40}) == 40
    assert total_input({"prompt_tokens": True}) is None and total_input({}) is None
    assert tokens_line(spend_of([model_record({})]).to_json()) == "not reported"


@given(st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**6))
def test_the_line_states_all_input(uncached: int, read: int, written: int, output: int) -> None:
    usage = {
        "prompt_tokens": uncached,
        "cached_tokens": read,
        "cache_creation_input_tokens": written,
        "input_tokens": uncached + read + written,
        "completion_tokens": output,
    }
    line = tokens_line(spend_of([model_record(usage)]).to_json())
    assert line.startswith(f"{uncached + read + written:,} input (")
    assert line.endswith(f"+ {output:,} output tokens")


def test_stats_prints_all_input(tmp_path: Path) -> None:
    with Session(tmp_path, Settings(enforce=False)) as session:
        session.bash("ls", "collect-info", LOOK)
    journal = tmp_path / ".epistemic" / "journal.jsonl"
    lines = journal.read_bytes().splitlines()
    body = {"prev": hashlib.sha256(lines[-1]).hexdigest(), "n": len(lines) + 1, "v": 1}
    with journal.open("a") as handle:
        handle.write(json.dumps({**body, **model_record(ANTHROPIC)}, separators=(",", ":")) + "\n")
    done = subprocess.run(
        [EPISTEMIC, "stats", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "300"},
        check=False,
    )
    assert LINE in done.stdout, done.stdout
    assert "847" not in done.stdout
