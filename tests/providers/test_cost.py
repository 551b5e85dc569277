"""Cost: the model table and models.toml, the cost in each `model` record (null when the
price is unknown), and tokens and cost per session and per act type in RATIONALE.md,
`stats`, `diff` and the live summary."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import EPISTEMIC
from epistemic_agent.journal.spend import ANSWER, Spend, spend_of
from epistemic_agent.providers.models import ModelConfigError, ModelInfo, load_config, lookup
from fakeserver import FakeServer
from providerkit import (
    bash,
    clean_subprocess_env,
    of_kind,
    provider_for,
    push_calls,
    push_final,
    run_agent,
)
from wire import AnthropicWire, OpenAIWire

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("clean_env")]
SONNET = lookup("anthropic", "claude-sonnet-4-5", {})


# -- the table and the configuration ----------------------------------------------------------


def test_built_in_entries_snapshots_and_aliases() -> None:
    assert (SONNET.entry, SONNET.input, SONNET.output) == ("claude-sonnet-4-5", 3.0, 15.0)
    assert (SONNET.cache_write, SONNET.cache_read, SONNET.context_window) == (3.75, 0.3, 200_000)
    dated = lookup("anthropic", "claude-sonnet-4-5-20250929", {})
    assert (dated.entry, dated.input) == ("claude-sonnet-4-5", 3.0)
    assert lookup("anthropic", "claude-sonnet-4-20250514", {}).entry == "claude-sonnet-4-0"
    gpt = lookup("openai", "gpt-5.1", {})
    assert (gpt.max_tokens_param, gpt.reasoning, gpt.cache_read) == (
        "max_completion_tokens",
        True,
        0.125,
    )
    # a longer name is another model: never priced as its prefix
    assert lookup("openai", "gpt-5-pro", {}).priced is False
    unknown = lookup("openai", "llama3.1:8b", {})
    assert (unknown.entry, unknown.priced, unknown.price(), unknown.source) == (
        None,
        False,
        None,
        "unknown",
    )


def test_cost_arithmetic() -> None:
    # 1000 uncached + 2000 read + 500 written (of 3500 input) and 100 output, at Sonnet's rates
    expected = (1000 * 3.0 + 2000 * 0.30 + 500 * 3.75 + 100 * 15.0) / 1e6
    assert math.isclose(SONNET.cost(3500, 100, 2000, 500) or 0, expected)
    assert SONNET.cost(None, 100, 0, 0) is None
    assert ModelInfo("x").cost(10, 10, 0, 0) is None
    # a count that does not add up never goes negative
    assert SONNET.cost(10, 0, 50, 0) == round(50 * 0.30 / 1e6, 10)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(text, "utf-8")
    return path


def test_configuration_extends_and_overrides_field_by_field(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            '[models."claude-sonnet-4-5"]\ncontext_window = 1000000\n'
            '[models."openai:llama3.1:8b"]\ninput = 0\noutput = 0\ncontext_window = 8192\n'
            'max_output = 2048\nmax_tokens_param = "max_tokens"\nprompt_cache_key = false\n',
        )
    )
    sonnet = lookup("anthropic", "claude-sonnet-4-5", config)
    assert (sonnet.context_window, sonnet.input, sonnet.source) == (
        1_000_000,
        3.0,
        "built-in+config",
    )
    local = lookup("openai", "llama3.1:8b", config)
    assert (local.priced, local.cost(5000, 100, 0, 0)) == (True, 0.0)
    assert (local.context_window, local.max_output, local.prompt_cache_key) == (8192, 2048, False)
    assert lookup("openai-responses", "llama3.1:8b", config).priced is False  # other provider


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not toml [", "is not valid TOML"),
        ('[models."m"]\nprice = 1\n', "unknown key(s) ['price']"),
        ('[models."m"]\ninput = -1\n', "input must be a number >= 0"),
        ('[models."m"]\ninput = "3"\n', "input must be a number >= 0"),
        ('[models."m"]\ncontext_window = 0\n', "context_window must be a positive integer"),
        ('[models."m"]\nmax_output = true\n', "max_output must be a positive integer"),
        ('[models."m"]\nmax_tokens_param = "n"\n', "max_tokens_param must be one of"),
        ('[models."m"]\nreasoning = "yes"\n', "reasoning must be true or false"),
        ("[models]\nm = 3\n", 'models."m"] must be a table'),
        ("models = 3\n", "must be a table of"),
        ('[pricing."m"]\n', "unknown top-level key(s) ['pricing']"),
    ],
)
def test_bad_configuration_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        load_config(write(tmp_path, text))
    assert message in str(caught.value)
    assert str(tmp_path / "models.toml") in str(caught.value)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EPISTEMIC, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env or clean_subprocess_env(OPENAI_API_KEY="k", ANTHROPIC_API_KEY="k"),
    )


def test_cli_refuses_a_bad_models_file_before_anything_runs(tmp_path: Path) -> None:
    bad = write(tmp_path, '[models."gpt-5.1"]\ninput = "cheap"\n')
    workspace = tmp_path / "ws"
    workspace.mkdir()

    done = cli("run", "--model", "openai:gpt-5.1", "--models", str(bad), "-C", str(workspace), "t")

    assert done.returncode == 2
    assert done.stderr.startswith("epistemic: ") and "input must be a number" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (workspace / ".epistemic").exists()
    missing = cli(
        "run",
        "--model",
        "openai:gpt-5.1",
        "--models",
        str(tmp_path / "nope.toml"),
        "-C",
        str(workspace),
        "t",
    )
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_models_command_lists_the_table_and_flags_unknown_models(tmp_path: Path) -> None:
    listing = cli("models", "--json")
    assert listing.returncode == 0, listing.stderr
    rows = {row["model"]: row for row in json.loads(listing.stdout)}
    assert rows["claude-sonnet-4-5"]["input"] == 3.0 and "gpt-5.1" in rows

    found = cli("models", "anthropic:claude-haiku-4-5-20251001")
    assert found.returncode == 0 and "claude-haiku-4-5-20251001" in found.stdout

    unknown = cli("models", "openai:no-such-model")
    assert unknown.returncode == 1
    assert "no price: costs recorded as null" in unknown.stdout
    bad = cli("models", "nocolon")
    assert bad.returncode == 2 and "must be PROVIDER:MODEL" in bad.stderr


# -- cost in the record and its readers -------------------------------------------------------


def session_with_costs(
    server: FakeServer, workspace: Path, info: ModelInfo
) -> list[dict[str, Any]]:
    wire = AnthropicWire(True)
    push_calls(
        wire,
        server,
        bash("c1", "echo one"),
        ("c2", "read_file", {"path": "nothing.txt", "reason": "See the file the task names."}),
        tokens=(4000, 200, 0, 3500),
    )
    push_calls(wire, server, bash("c3", "echo two", act="verify"), tokens=(4400, 100, 3500, 400))
    push_final(wire, server, "Done.", tokens=(4500, 20, 3900, 0))
    stop, journal, _ = run_agent(workspace, provider_for(wire, server, info=info))
    assert stop.reason == "finished"
    return journal


def test_each_model_record_carries_its_cost(server: FakeServer, tmp_path: Path) -> None:
    journal = session_with_costs(server, tmp_path, SONNET)

    models = of_kind(journal, "model")
    expected = [
        SONNET.cost(4000, 200, 0, 3500),
        SONNET.cost(4400, 100, 3500, 400),
        SONNET.cost(4500, 20, 3900, 0),
    ]
    assert [m["cost"] for m in models] == expected
    assert all(isinstance(c, float) and c > 0 for c in expected)
    assert models[0]["price"] == {
        "input": 3.0,
        "output": 15.0,
        "cache_write": 3.75,
        "cache_read": 0.3,
    }
    assert [m["acts"] for m in models] == [["collect-info", "collect-info"], ["verify"], []]
    # the reasons' share of the output: characters of `reason` over the turn's output
    first = models[0]
    assert 0 < first["reason_chars"] < first["output_chars"]
    assert first["reason_tokens"] == round(200 * first["reason_chars"] / first["output_chars"])

    report = (tmp_path / "RATIONALE.md").read_text("utf-8")
    total = sum(expected)  # type: ignore[arg-type]
    assert f"cost ${total:.4f}" in report
    assert "| `collect-info` | 2 |" in report and "| `verify` | 1 |" in report
    assert f"| `{ANSWER}` | 0 |" in report
    assert "Declared reasons: about" in report


def test_an_unpriced_model_records_null_and_says_so(server: FakeServer, tmp_path: Path) -> None:
    journal = session_with_costs(server, tmp_path, ModelInfo("test-model"))

    assert [m["cost"] for m in of_kind(journal, "model")] == [None, None, None]
    assert [m["price"] for m in of_kind(journal, "model")] == [None, None, None]
    report = (tmp_path / "RATIONALE.md").read_text("utf-8")
    assert "cost - (3 model call(s) without a known price)" in report


def test_stats_and_diff_show_cost_per_session_and_per_act(
    server: FakeServer, tmp_path: Path
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    session_with_costs(server, a, SONNET)
    session_with_costs(server, b, ModelInfo("test-model"))

    done = cli("stats", "--json", str(a), str(b))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    priced, unpriced = sorted(data["sessions"], key=lambda row: row["name"])
    spend = priced["spend"]
    assert spend["model_calls"] == 3 and spend["unpriced"] == 0
    assert (spend["input_tokens"], spend["output_tokens"]) == (12900, 320)
    assert (spend["cached_tokens"], spend["cache_creation_input_tokens"]) == (7400, 3900)
    assert math.isclose(priced["cost"], spend["cost"])
    by_act = spend["by_act"]
    assert list(by_act) == ["collect-info", "verify", ANSWER]
    assert by_act["collect-info"]["calls"] == 2 and by_act["verify"]["calls"] == 1
    assert math.isclose(sum(x["cost"] for x in by_act.values()), spend["cost"], rel_tol=1e-6)
    assert by_act["collect-info"]["input_tokens"] == 4000 and by_act[ANSWER]["input_tokens"] == 4500
    assert 0 < spend["reason_share"] < 1
    assert unpriced["cost"] is None and unpriced["spend"]["unpriced"] == 3
    assert math.isclose(data["totals"]["cost"], spend["cost"])
    assert data["totals"]["spend"]["input_tokens"] == 2 * 12900

    text = cli("stats", str(a))
    assert text.returncode == 0, text.stderr
    assert (
        f"cost       ${spend['cost']:.4f}; 12,900 input tokens (7,400 read from the cache"
        in text.stdout
    )
    assert "by act     collect-info" in text.stdout and "reasons    about" in text.stdout
    table = cli("stats", str(a), str(b)).stdout.splitlines()
    headers = [line.split() for line in table if line.startswith("session")]
    assert any("cost" in header for header in headers)  # in a block of its own at 80 columns

    diff = cli("diff", str(a), str(b))
    assert diff.returncode == 0, diff.stderr
    assert "dollars" in diff.stdout and f"${spend['cost']:.4f}" in diff.stdout
    side = json.loads(cli("diff", "--json", str(a), str(b)).stdout)["a"]
    assert side["spend"]["by_act"]["verify"]["calls"] == 1


@pytest.mark.system  # end to end, slow for the default tier
def test_the_live_summary_shows_cost_per_act(server: FakeServer, tmp_path: Path) -> None:
    wire = OpenAIWire(True)
    push_calls(wire, server, bash("c1", "echo hi"), tokens=(2000, 30, 1024))
    push_final(wire, server, "It says hi.", tokens=(2100, 5, 1920))
    models = write(
        tmp_path, '[models."test-model"]\ninput = 1.0\noutput = 10.0\ncache_read = 0.1\n'
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()

    done = cli(
        "run",
        "--model",
        "openai:test-model",
        "--models",
        str(models),
        "--base-url",
        server.url + "/v1",
        "-C",
        str(workspace),
        "what does echo say?",
    )

    assert done.returncode == 0, done.stderr
    first = (976 * 1.0 + 1024 * 0.1 + 30 * 10.0) / 1e6
    second = (180 * 1.0 + 1920 * 0.1 + 5 * 10.0) / 1e6
    assert f"tokens: 2,000 in (1,024 cached) + 30 out · ${first:.4f}" in done.stdout
    assert f"cost: ${first + second:.4f}; 2,944 input tokens read from the cache" in done.stdout
    assert "by act: collect-info 2,030 tokens" in done.stdout
    assert "reasons: about" in done.stdout


# -- readers take any record: a foreign writer's fields never break them -----------------------

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**7),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.lists(st.one_of(st.text(max_size=12), st.integers(), st.none()), max_size=4),
)


@pytest.mark.system  # end to end, slow for the default tier
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(
                [
                    "input_tokens",
                    "prompt_tokens",
                    "completion_tokens",
                    "cached_tokens",
                    "cache_creation_input_tokens",
                    "cost",
                    "acts",
                    "reason_tokens",
                    "reasoning_tokens",
                ]
            ),
            junk,
        ),
        max_size=6,
    )
)
def test_spend_folds_any_model_records(fields: list[dict[str, Any]]) -> None:
    spend = spend_of([{"kind": "model", **f} for f in fields])
    data = spend.to_json()
    assert data["model_calls"] == len(fields)
    counted = [
        f.get("cost")
        for f in fields
        if isinstance(f.get("cost"), int | float) and not isinstance(f.get("cost"), bool)
    ]
    assert data["unpriced"] == len(fields) - len(counted)
    json.dumps(data)  # always JSON
    again = Spend.from_state(json.loads(json.dumps(spend.state())))
    assert again.to_json() == data  # a checkpoint round-trips


def test_the_documented_table_is_the_built_in_one() -> None:
    from epistemic_agent.providers.model_table import BUILTIN

    doc = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text("utf-8")

    def shown(value: float | int | None, count: bool = False) -> str:
        return "-" if value is None else (f"{value:,}" if count else f"{value:g}")

    for name, (i, o, cw, cr, window, most, param, _) in BUILTIN.items():
        prices = " | ".join(shown(v) for v in (i, o, cw, cr))
        limits = f"{shown(window, True)} | {shown(most, True)} | {param or '-'}"
        row = f"| `{name}` | {prices} | {limits} |"
        assert row in doc, row


def test_the_cost_survives_a_rebuild_and_a_resumed_session(
    server: FakeServer, tmp_path: Path
) -> None:
    from epistemic_agent.session.session import Session

    session_with_costs(server, tmp_path, SONNET)
    report = tmp_path / "RATIONALE.md"
    line = next(x for x in report.read_text("utf-8").splitlines() if x.startswith("_Tokens:"))

    assert cli("report", str(tmp_path)).returncode == 0
    assert line in report.read_text("utf-8").splitlines()
    with Session(tmp_path) as session:  # a later process resumes from the checkpoint
        session.event("user", text="one more thing")
    assert line in report.read_text("utf-8").splitlines()
