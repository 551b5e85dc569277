"""The OpenAI (Chat Completions and Responses) and Anthropic providers through the real SDKs
and the real loop, whole answers and streams alike.

No test reaches a model: each provider talks to a scripted `FakeServer` on 127.0.0.1 that
speaks the API's wire format (tests/wire.py), and the assertions look at both sides (what the
loop journaled, what the server was sent).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import KEY, epistemic
from epistemic_agent.agent.prompt import system_prompt
from epistemic_agent.cli import app as cli
from epistemic_agent.providers import ProviderError, make_provider
from epistemic_agent.providers.anthropic_messages import AnthropicProvider
from epistemic_agent.providers.openai_chat import OpenAIProvider
from epistemic_agent.providers.openai_responses import OpenAIResponsesProvider
from epistemic_agent.providers.replay import ReplayProvider
from fakeserver import FakeServer
from providerkit import (
    REASON,
    bash,
    bash_output,
    clean_subprocess_env,
    of_kind,
    provider_for,
    push_calls,
    push_final,
    records,
    run_agent,
)
from wire import ALL_WIRES, MODEL, AnthropicWire, Call, OpenAIWire, ResponsesWire, Wire

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("clean_env")]


@pytest.fixture(params=ALL_WIRES, ids=lambda wire: wire.id)
def wire(request: pytest.FixtureRequest) -> Wire:
    chosen: Wire = request.param
    return chosen


# -- the loop over each provider ----------------------------------------------------------------


def test_tool_call_round_trip(wire: Wire, server: FakeServer, tmp_path: Path) -> None:
    push_calls(wire, server, bash("call_1", "echo hi"), text="Let me look.")
    push_final(wire, server, "It prints hi.")

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server), task="what does echo say?")

    assert (stop.reason, stop.steps, stop.final) == ("finished", 2, "It prints hi.")
    [call] = of_kind(journal, "call")
    [outcome] = of_kind(journal, "outcome")
    assert (call["tool"], call["act"], call["command"], call["reason"]) == (
        "bash",
        "collect-info",
        "echo hi",
        REASON,
    )
    assert (outcome["seq"], outcome["ok"], outcome["returncode"]) == (call["seq"], True, 0)
    assert [r["text"] for r in of_kind(journal, "text")] == ["Let me look.", "It prints hi."]

    assert [r.path for r in server.requests] == [wire.path] * 2
    assert all(
        KEY in r.headers.get("authorization", r.headers.get("x-api-key", ""))
        for r in server.requests
    )
    first, second = server.bodies()
    for body in (first, second):
        assert body["model"] == MODEL
        assert wire.system(body) == system_prompt()
        assert wire.tool_names(body) == ["bash", "read_file", "write_file", "str_replace_edit"]
        assert body["tools"] == wire.tools()
    assert "what does echo say?" in json.dumps(wire.history(first))
    assert wire.last_call_ids(second) == ["call_1"]
    [(call_id, text)] = wire.results(second)
    assert call_id == "call_1"
    assert bash_output(text) == {"returncode": 0, "stdout": "hi\n", "stderr": ""}


def test_several_calls_in_one_turn_run_in_order(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    words = ["one", "two", "three"]
    push_calls(wire, server, *(bash(f"call_{w}", f"echo {w}") for w in words))
    push_final(wire, server)

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert stop.reason == "finished"
    calls = of_kind(journal, "call")
    assert [c["command"] for c in calls] == [f"echo {w}" for w in words]
    assert [c["seq"] for c in calls] == [1, 2, 3]
    # each outcome follows its own declaration: run one after another, in order
    sequence = [(r["kind"], r["seq"]) for r in journal if r["kind"] in ("call", "outcome")]
    assert sequence == [(k, n) for n in (1, 2, 3) for k in ("call", "outcome")]
    assert len(server.requests) == 2
    second = server.bodies()[1]
    assert wire.last_call_ids(second) == [f"call_{w}" for w in words]
    results = wire.results(second)
    assert [call_id for call_id, _ in results] == [f"call_{w}" for w in words]
    assert [bash_output(text)["stdout"] for _, text in results] == [f"{w}\n" for w in words]


def test_final_answer(wire: Wire, server: FakeServer, tmp_path: Path) -> None:
    answer = "Nothing to change: the tests already pass."
    push_final(wire, server, answer, tokens=None)  # usage is optional on the wire

    stop, journal, totals = run_agent(tmp_path, provider_for(wire, server))

    assert (stop.reason, stop.exit_code, stop.steps, stop.final) == ("finished", 0, 1, answer)
    assert [r["text"] for r in of_kind(journal, "final")] == [answer]
    assert of_kind(journal, "call") == []
    assert [r["reason"] for r in of_kind(journal, "stop")] == ["finished"]
    [model] = of_kind(journal, "model")
    assert (model["prompt_tokens"], model["completion_tokens"], model["cached_tokens"]) == (
        None,
        None,
        None,
    )
    assert model["stop_reason"] == wire.stop_final
    assert totals == {"calls": 1}
    report = (tmp_path / "RATIONALE.md").read_text("utf-8")
    assert answer in report
    assert "no token usage reported" in report
    assert len(server.requests) == 1


def test_usage_lands_in_the_journal(wire: Wire, server: FakeServer, tmp_path: Path) -> None:
    push_calls(wire, server, bash("call_1", "echo hi"), tokens=(1200, 40, 1024))
    push_final(wire, server, tokens=(1300, 12, 1152))
    # Anthropic's input_tokens counts only what the cache did not hold
    first, second = (176, 148) if isinstance(wire, AnthropicWire) else (1200, 1300)

    stop, journal, totals = run_agent(tmp_path, provider_for(wire, server))

    assert stop.reason == "finished"
    models = of_kind(journal, "model")
    picked = [
        (
            m["step"],
            m["provider"],
            m["model"],
            m["attempts"],
            m["prompt_tokens"],
            m["completion_tokens"],
            m["cached_tokens"],
            m["stop_reason"],
            m["calls"],
        )
        for m in models
    ]
    assert picked == [
        (1, wire.name, MODEL, 1, first, 40, 1024, wire.stop_calls, 1),
        (2, wire.name, MODEL, 1, second, 12, 1152, wire.stop_final, 0),
    ]
    assert [(m["input_tokens"], m["cache_read_input_tokens"]) for m in models] == [
        (1200, 1024),
        (1300, 1152),
    ]
    for m in models:
        assert isinstance(m["latency"], float)
        assert 0 <= m["latency"] < 10
    assert totals == {
        "calls": 2,
        "prompt_tokens": first + second,
        "completion_tokens": 52,
        "cached_tokens": 2176,
    }
    report = (tmp_path / "RATIONALE.md").read_text("utf-8")
    assert f"`{wire.name}:{MODEL}`" in report
    # the same all-input figure for every provider (Anthropic's own input figure leaves the
    # cache out): never the provider's `prompt_tokens` next to a total that disagrees with it
    assert "2 model call(s), 2,500 input (2,176 read from the cache) + 52 output tokens" in report
    assert "prompt + " not in report
    assert "Tokens: 2,500 input (2,176 read from the prompt cache, 0 written to it)" in report


def test_malformed_arguments_are_rejected_and_the_loop_goes_on(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    bad = [(f"call_bad{n}", "bash", args) for n, args in enumerate(wire.bad_arguments)]
    unknown: Call = ("call_unknown", "launch_rockets", {"target": "moon"})
    push_calls(wire, server, *bad, unknown)
    push_calls(wire, server, bash("call_ok", "echo hi"))
    push_final(wire, server, "Recovered.")

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert (stop.reason, stop.final) == ("finished", "Recovered.")
    rejected = of_kind(journal, "rejected")
    expected_rules = ["args-not-object"] * len(bad) + ["unknown-tool"]
    assert [r["rule"] for r in rejected] == expected_rules
    assert [r["given"] for r in rejected[: len(bad)]] == list(wire.bad_arguments)
    assert rejected[-1]["tool"] == "launch_rockets"
    assert [c["command"] for c in of_kind(journal, "call")] == ["echo hi"]

    assert len(server.requests) == 3
    results = wire.results(server.bodies()[1])
    assert [call_id for call_id, _ in results] == [c[0] for c in [*bad, unknown]]
    for (_, text), rule in zip(results, expected_rules, strict=True):
        assert text.startswith(f"REJECTED {rule}: ")
    if isinstance(wire, AnthropicWire):
        blocks = server.bodies()[1]["messages"][-1]["content"]
        assert [block["is_error"] for block in blocks] == [True] * len(results)
        # what goes back as the assistant's tool_use input is an object, as the API demands
        echoed = [
            b for b in server.bodies()[1]["messages"][-2]["content"] if b["type"] == "tool_use"
        ]
        assert all(isinstance(block["input"], dict) for block in echoed)


def test_call_without_id_is_rejected(wire: Wire, server: FakeServer, tmp_path: Path) -> None:
    push_calls(wire, server, bash(None, "echo should-not-run"))
    push_final(wire, server)

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert stop.reason == "finished"
    [rejected] = of_kind(journal, "rejected")
    assert rejected["rule"] == "call-id-missing"
    assert of_kind(journal, "call") == []
    second = server.bodies()[1]
    # the loop answers under a stand-in id, the same one it echoes in the assistant turn
    assert wire.last_call_ids(second) == ["missing-id-1-1"]
    [(call_id, text)] = wire.results(second)
    assert call_id == "missing-id-1-1"
    assert text.startswith("REJECTED call-id-missing: ")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_empty_openai_call_id_is_rejected(server: FakeServer, tmp_path: Path, stream: bool) -> None:
    wire = OpenAIWire(stream)
    push_calls(wire, server, bash("", "echo should-not-run"))
    push_final(wire, server)

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert stop.reason == "finished"
    assert [r["rule"] for r in of_kind(journal, "rejected")] == ["call-id-missing"]
    assert wire.results(server.bodies()[1])[0][0] == "missing-id-1-1"


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_stop_at_once(
    wire: Wire, server: FakeServer, tmp_path: Path, status: int
) -> None:
    server.push(status, wire.error(status, "invalid x-api-key"))
    push_final(wire, server)  # never asked for

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))

    assert (stop.reason, stop.exit_code, stop.steps) == ("provider-error", 5, 1)
    assert len(server.requests) == 1
    assert f"HTTP {status}" in stop.message
    assert f"${wire.key_env}" in stop.message
    assert "invalid x-api-key" in stop.message
    if status == 403:
        assert "not allowed" in stop.message
    [error] = of_kind(journal, "model-error")
    assert (error["status"], error["retrying"], error["attempt"]) == (status, False, 1)
    assert [r["reason"] for r in of_kind(journal, "stop")] == ["provider-error"]


def test_auth_error_with_the_key_unset_says_so(
    wire: Wire, server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(wire.key_env)
    server.push(401, wire.error(401, "no key"))

    stop, _, _ = run_agent(tmp_path, provider_for(wire, server))

    assert stop.reason == "provider-error"
    assert f"${wire.key_env} is not set" in stop.message
    assert len(server.requests) == 1


def test_rate_limit_is_retried(wire: Wire, server: FakeServer, tmp_path: Path) -> None:
    server.push(429, wire.error(429, "slow down"), headers={"retry-after": "0.2"})
    push_final(wire, server, "Done after a wait.")

    started = time.monotonic()
    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server))
    elapsed = time.monotonic() - started

    assert (stop.reason, stop.final) == ("finished", "Done after a wait.")
    assert len(server.requests) == 2
    assert elapsed >= 0.2  # retry-after outweighs the 1 ms backoff
    first, second = server.bodies()
    assert first == second  # the same request, sent again
    # the SDK's own retries are off: each request is a first attempt, the loop does the retrying
    assert [r.headers.get("x-stainless-retry-count") for r in server.requests] == ["0", "0"]
    [error] = of_kind(journal, "model-error")
    assert (error["status"], error["attempt"], error["retrying"]) == (429, 1, True)
    assert "slow down" in error["message"]
    [model] = of_kind(journal, "model")
    assert model["attempts"] == 2


def test_server_errors_beyond_the_retry_budget(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    for _ in range(4):
        server.push(500, wire.error(500, "boom"))
    push_final(wire, server)

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server), retries=2)

    assert (stop.reason, stop.steps) == ("provider-error", 1)
    assert "HTTP 500" in stop.message and "boom" in stop.message
    assert len(server.requests) == 3
    errors = of_kind(journal, "model-error")
    assert [(e["attempt"], e["status"], e["retrying"]) for e in errors] == [
        (1, 500, True),
        (2, 500, True),
        (3, 500, False),
    ]
    assert of_kind(journal, "model") == []


def test_slow_server_is_retried_as_a_timeout(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    body, headers = wire.response("too late", [], (5, 5, 0))
    server.push(200, body, headers=headers, delay=1.0)
    push_final(wire, server, "in time")

    started = time.monotonic()
    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server, timeout=0.3))
    elapsed = time.monotonic() - started

    assert (stop.reason, stop.final) == ("finished", "in time")
    assert len(server.requests) == 2
    assert elapsed >= 0.3  # the first attempt waited for the whole timeout
    [error] = of_kind(journal, "model-error")
    assert (error["status"], error["retrying"]) == (None, True)
    assert "did not answer in time" in error["message"]


@pytest.mark.system  # end to end, slow for the default tier
def test_slow_server_ends_in_a_provider_error(
    wire: Wire, server: FakeServer, tmp_path: Path
) -> None:
    body, headers = wire.response("too late", [], None)
    for _ in range(3):
        server.push(200, body, headers=headers, delay=1.0)

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server, timeout=0.3), retries=1)

    assert stop.reason == "provider-error"
    assert "did not answer in time" in stop.message
    assert len(server.requests) == 2
    assert [e["retrying"] for e in of_kind(journal, "model-error")] == [True, False]


UNREADABLE = {
    "html": (200, "<html><body>Proxy login required</body></html>", {"Content-Type": "text/html"}),
    "empty-object": (200, {}, {}),
}


@pytest.mark.parametrize("kind", sorted(UNREADABLE))
def test_a_200_that_is_not_an_api_answer_is_an_error(
    wire: Wire, server: FakeServer, tmp_path: Path, kind: str
) -> None:
    status, body, headers = UNREADABLE[kind]
    for _ in range(2):
        server.push(status, body, headers=headers)

    stop, journal, _ = run_agent(tmp_path, provider_for(wire, server), retries=1)

    assert stop.reason == "provider-error"
    assert len(server.requests) == 2
    assert of_kind(journal, "final") == []


# -- construction and make_provider -------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "variable"),
    [
        ("openai:x", "OPENAI_API_KEY"),
        ("openai-responses:x", "OPENAI_API_KEY"),
        ("anthropic:x", "ANTHROPIC_API_KEY"),
    ],
)
def test_missing_key_without_base_url(
    monkeypatch: pytest.MonkeyPatch, spec: str, variable: str
) -> None:
    monkeypatch.delenv(variable)
    with pytest.raises(ProviderError, match=variable) as caught:
        make_provider(spec)
    assert "--api-key-env" in str(caught.value)


def test_missing_key_names_the_chosen_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_LAB_KEY", raising=False)
    with pytest.raises(ProviderError, match="MY_LAB_KEY"):
        make_provider("openai:x", api_key_env="MY_LAB_KEY")


def test_make_provider_builds_each_kind(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"final": "done"}]), "utf-8")

    openai = make_provider("openai:gpt-5.1")
    assert isinstance(openai, OpenAIProvider)
    assert (openai.name, openai.model) == ("openai", "gpt-5.1")

    responses = make_provider("openai-responses:gpt-5.1")
    assert isinstance(responses, OpenAIResponsesProvider)
    assert (responses.name, responses.model) == ("openai-responses", "gpt-5.1")

    anthropic = make_provider("anthropic:claude-sonnet-4-5")
    assert isinstance(anthropic, AnthropicProvider)
    assert (anthropic.name, anthropic.model) == ("anthropic", "claude-sonnet-4-5")

    replay = make_provider(f"replay:{script}")
    assert isinstance(replay, ReplayProvider)
    assert (replay.name, replay.model) == ("replay", str(script))

    # only the first colon separates: local model names carry tags
    assert make_provider("openai:llama3.1:8b", base_url="http://127.0.0.1:9/v1").model == (
        "llama3.1:8b"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "bogus:x",
            "unknown provider 'bogus'; use one of openai, openai-responses, anthropic, replay",
        ),
        ("nocolon", "must be PROVIDER:MODEL"),
        ("openai:", "must be PROVIDER:MODEL"),
        ("", "must be PROVIDER:MODEL"),
        ("replay:/nonexistent/script.json", "does not exist"),
    ],
)
def test_make_provider_rejects_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(ProviderError, match=re.escape(message)):
        make_provider(spec)


# -- the command line ---------------------------------------------------------------------------


def run_cli(
    model: str, url: str, ws: Path, *options: str, **keys: str
) -> subprocess.CompletedProcess[str]:
    """`epistemic run --model MODEL --base-url URL -C WS OPTIONS...` (the task last), with
    only the API keys `keys` in its environment."""
    argv = ("run", "--model", model, "--base-url", url, "-C", str(ws), *options)
    return epistemic(*argv, env=clean_subprocess_env(**keys))


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


@pytest.mark.system  # end to end, slow for the default tier
def test_cli_run_against_the_fake_server(server: FakeServer, tmp_path: Path) -> None:
    wire = OpenAIWire(stream=True)  # `run` streams unless told --no-stream
    push_calls(wire, server, bash("call_1", "echo hi"), tokens=(30, 7, 0))
    push_final(wire, server, "It says hi.", tokens=(40, 3, 16))

    done = run_cli(
        f"openai:{MODEL}",
        server.url + "/v1",
        tmp_path,
        "--json",
        "what does echo say?",
        OPENAI_API_KEY="test",
    )

    assert done.returncode == 0, done.stderr
    seen = events(done.stdout)
    assert [e["event"] for e in seen] == [
        "notice",
        "model-start",
        "model",
        "call-start",
        "call",
        "model-start",
        "model",
        "stop",
    ]
    assert "no price is known for model 'test-model'" in seen[0]["text"]
    assert seen[2]["cost"] is None
    seen = seen[1:]
    assert (seen[2]["seq"], seen[2]["command"]) == (1, "echo hi")  # call-start
    call = seen[3]
    assert (call["status"], call["returncode"], call["stdout"], call["command"]) == (
        "ran",
        0,
        "hi\n",
        "echo hi",
    )
    stop = seen[-1]
    assert (stop["reason"], stop["exit_code"], stop["final"]) == ("finished", 0, "It says hi.")
    assert stop["tokens"] == {
        "calls": 2,
        "prompt_tokens": 70,
        "completion_tokens": 10,
        "cached_tokens": 16,
    }
    assert [r.headers["authorization"] for r in server.requests] == ["Bearer test"] * 2
    assert [r["model"] for r in records(tmp_path, "model")] == [MODEL, MODEL]


@pytest.mark.system  # end to end, slow for the default tier
def test_cli_run_with_a_refused_key_exits_5(server: FakeServer, tmp_path: Path) -> None:
    wire = OpenAIWire()
    server.push(401, wire.error(401, "Incorrect API key provided"))

    done = run_cli(
        f"openai:{MODEL}", server.url + "/v1", tmp_path, "--json", "task", OPENAI_API_KEY="test"
    )

    assert done.returncode == 5, done.stderr
    stop = events(done.stdout)[-1]
    assert (stop["event"], stop["reason"], stop["exit_code"]) == ("stop", "provider-error", 5)
    assert "OPENAI_API_KEY" in stop["message"]
    assert len(server.requests) == 1


def test_cli_run_without_a_key_exits_5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")

    code = cli.main(["run", "--model", "openai:gpt-5.1", "-C", str(tmp_path), "--json", "task"])

    assert code == 5
    err = capsys.readouterr().err
    assert err.startswith("epistemic: OPENAI_API_KEY is not set")
    assert "Traceback" not in err


def test_replay_runs_never_import_the_sdks(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {"calls": [{"tool": "bash", "args": dict(bash(None, "echo hi")[2])}]},
                {"final": "done"},
            ]
        ),
        "utf-8",
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    probe = (
        "import json, sys\n"
        "from epistemic_agent.cli import main\n"
        f"code = main(['run', '--model', 'replay:{script}', '-C', '{workspace}', '--json', 't'])\n"
        "print(json.dumps({'code': code, 'loaded': sorted(\n"
        "    m for m in ('openai', 'anthropic') if m in sys.modules)}))\n"
    )

    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=clean_subprocess_env(),
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    seen = events(done.stdout)
    assert seen[-2]["event"] == "stop" and seen[-2]["reason"] == "finished"
    assert seen[-1] == {"code": 0, "loaded": []}


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--thinking", "500"], "--thinking needs a budget of at least 1024 tokens"),
        (["--thinking", "lots"], "--thinking must be a number of tokens or `adaptive`"),
        (["--reasoning-effort", "high"], "--reasoning-effort is for OpenAI models"),
        (["--max-output-tokens", "0"], "--max-output-tokens must be positive"),
        (["--context-window", "0"], "--context-window must be positive"),
        (["--context-window", "900"], "cannot hold the fixed prompt"),
    ],
)
def test_cli_refuses_bad_model_options(tmp_path: Path, flags: list[str], message: str) -> None:
    done = epistemic(
        "run",
        "--model",
        "anthropic:claude-sonnet-4-5",
        *flags,
        "-C",
        str(tmp_path),
        "task",
        env=clean_subprocess_env(ANTHROPIC_API_KEY="k"),
    )

    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("epistemic: ") and message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / ".epistemic").exists()
    thinking = epistemic(
        "run",
        "--model",
        "openai:gpt-5.1",
        "--thinking",
        "2048",
        "-C",
        str(tmp_path),
        "task",
        env=clean_subprocess_env(OPENAI_API_KEY="k"),
    )
    assert thinking.returncode == 2 and "--thinking is for anthropic models" in thinking.stderr


@pytest.mark.system  # end to end, slow for the default tier
def test_cli_live_view_streams_text_and_usage(server: FakeServer, tmp_path: Path) -> None:
    wire = AnthropicWire(True)
    push_calls(
        wire,
        server,
        bash("c1", "echo hi"),
        text="Let me run echo first.",
        tokens=(3000, 40, 0, 2900),
    )
    push_final(wire, server, "It prints hi.", tokens=(3100, 12, 2900, 180))

    done = run_cli(
        "anthropic:claude-sonnet-4-5",
        server.url,
        tmp_path,
        "what does echo say?",
        ANTHROPIC_API_KEY="k",
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "Let me run echo first." in lines
    assert any(
        line.strip().startswith(
            "tokens: 3,000 in (0 cached, 2,900 written to the cache) + 40 out · $"
        )
        for line in lines
    )
    assert any(line.startswith("cost: $") for line in lines)
    assert len(server.requests) == 2
    assert all(r.json()["stream"] is True for r in server.requests)


@pytest.mark.system  # end to end, slow for the default tier
def test_cli_no_stream_and_responses_provider(server: FakeServer, tmp_path: Path) -> None:
    wire = ResponsesWire(stream=False)
    push_calls(wire, server, bash("call_1", "echo hi"))
    push_final(wire, server, "It prints hi.")

    done = run_cli(
        "openai-responses:gpt-5.1",
        server.url + "/v1",
        tmp_path,
        "--no-stream",
        "--reasoning-effort",
        "low",
        "--json",
        "what does echo say?",
        OPENAI_API_KEY="k",
    )

    assert done.returncode == 0, done.stderr
    first, second = server.bodies()
    assert "stream" not in first and first["reasoning"] == {"effort": "low", "summary": "auto"}
    assert wire.results(second)[0][0] == "call_1"
    stop = events(done.stdout)[-1]
    assert stop["spend"]["model_calls"] == 2 and stop["spend"]["cost"] > 0


def test_every_registered_provider_is_a_provider(tmp_path: Path) -> None:
    from epistemic_agent.providers import PROVIDER_CLASSES, Provider, provider_class

    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"final": "done"}]))
    for kind in PROVIDER_CLASSES:
        model = str(script) if kind == "replay" else MODEL
        made = make_provider(f"{kind}:{model}", base_url="http://127.0.0.1:9/v1")
        assert isinstance(made, provider_class(kind)) and isinstance(made, Provider)
        assert made.name == kind
