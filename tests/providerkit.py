"""Helpers shared by the provider tests: a provider for a wire format, one run of the real
loop over it, what it recorded (the clean environment and the fake server are fixtures in
conftest.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from conftest import PROXY_VARS, SDK_VARS
from epistemic_agent.agent.loop import Agent, AgentConfig, Stop
from epistemic_agent.providers import Provider, make_provider
from epistemic_agent.providers.base import ModelOptions
from epistemic_agent.providers.models import ModelInfo, lookup
from epistemic_agent.session.session import Session
from fakeserver import FakeServer
from wire import MODEL, Call, Tokens, Wire

REASON = "see what the shell prints here before changing anything"


def bash(call_id: str | None, command: str, act: str = "collect-info") -> Call:
    return (call_id, "bash", {"command": command, "type": act, "reason": REASON})


def provider_for(
    wire: Wire,
    server: FakeServer,
    timeout: float = 10.0,
    info: ModelInfo | None = None,
    **options: Any,
) -> Provider:
    found = info or lookup(wire.name, MODEL, {})
    chosen = ModelOptions(found, stream=wire.stream, **options)
    return make_provider(
        f"{wire.name}:{MODEL}", base_url=wire.base_url(server), timeout=timeout, options=chosen
    )


def push_calls(
    wire: Wire,
    server: FakeServer,
    *calls: Call,
    text: str | None = None,
    tokens: Tokens = (5, 5, 0),
    **extra: Any,
) -> None:
    body, headers = wire.response(text, list(calls), tokens, **extra)
    server.push(200, body, headers=headers)


def push_final(
    wire: Wire,
    server: FakeServer,
    text: str = "All done.",
    tokens: Tokens | None = (5, 5, 0),
    **extra: Any,
) -> None:
    body, headers = wire.response(text, [], tokens, **extra)
    server.push(200, body, headers=headers)


def run_agent(
    workspace: Path, provider: Provider, task: str = "say hi", events: Any = None, **config: Any
) -> tuple[Stop, list[dict[str, Any]], dict[str, Any]]:
    """One run of the real loop; returns the stop, the journal and the report's model totals."""
    with Session(workspace) as session:
        extra = {"events": events} if events is not None else {}
        agent = Agent(session, provider, AgentConfig(backoff=0.001, **config), **extra)
        stop = agent.run(task)
        totals = dict(session.state.model)
    return stop, records(workspace), totals


def records(workspace: Path, kind: str | None = None) -> list[dict[str, Any]]:
    lines = (workspace / ".epistemic" / "journal.jsonl").read_text("utf-8").splitlines()
    found = [json.loads(line) for line in lines]
    return [r for r in found if kind is None or r["kind"] == kind]


def of_kind(journal: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [record for record in journal if record["kind"] == kind]


def bash_output(text: str) -> dict[str, Any]:
    """The tool result text of a bash call that ran."""
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def clean_subprocess_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS + SDK_VARS}
    env.pop("OPENAI_API_KEY", None)
    env.pop("ANTHROPIC_API_KEY", None)
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", **extra)
    return env


class Recorder:
    """Events as a front end hears them, in order (deltas included)."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def model_started(self, step: int) -> None:
        self.seen.append(("started", step))

    def model_delta(self, step: int, kind: str, text: str) -> None:
        self.seen.append(("delta", step, kind, text))

    def model_finished(self, step: int, turn: Any, latency: float) -> None:
        self.seen.append(("finished", step, turn))

    def call_started(self, record: Any) -> None:
        self.seen.append(("call-start", record["seq"]))

    def call_finished(self, step: int, result: Any, command: str) -> None:
        self.seen.append(("call", step, command))

    def notice(self, text: str) -> None:
        self.seen.append(("notice", text))

    def interrupt_requested(self) -> bool:
        return False

    def deltas(self, kind: str = "text") -> list[str]:
        return [item[3] for item in self.seen if item[0] == "delta" and item[2] == kind]
