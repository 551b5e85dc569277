"""The supervisors' registry: each kind it names loads, an unknown kind is refused by name, and
a supervisor that cannot start says why as `SupervisorUnavailable`, the one error a caller
that never imports the providers can catch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from epistemic_agent.core.errors import SupervisorUnavailable
from epistemic_agent.core.registry import load
from epistemic_agent.policy.supervisor import SupervisorSpec
from epistemic_agent.supervisor.model import Supervisor
from epistemic_agent.supervisor.registry import SUPERVISORS, start_supervisor


@pytest.mark.parametrize("kind", sorted(SUPERVISORS))
def test_every_registered_supervisor_loads(kind: str) -> None:
    assert callable(load(SUPERVISORS, kind, "supervisor"))


def test_an_unknown_supervisor_is_refused_by_name() -> None:
    with pytest.raises(KeyError, match="no supervisor named 'oracle'; known: model"):
        start_supervisor(SupervisorSpec("replay:verdicts.json"), kind="oracle")


def test_a_verdict_script_makes_a_supervisor(tmp_path: Path) -> None:
    script = tmp_path / "verdicts.json"
    script.write_text(json.dumps([{"default": True, "verdict": "ok"}]))
    supervisor = start_supervisor(SupervisorSpec(f"replay:{script}"))
    assert isinstance(supervisor, Supervisor) and supervisor.model == f"replay:{script}"


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("replay:/nonexistent/verdicts.json", "does not exist"),
        ("no-such-provider:model", "unknown provider 'no-such-provider'"),
        (None, "no supervisor model"),
    ],
)
def test_a_supervisor_that_cannot_start_says_why(model: str | None, message: str) -> None:
    with pytest.raises(SupervisorUnavailable, match=message):
        start_supervisor(SupervisorSpec(model))


def test_a_model_without_its_key_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EPISTEMIC_TEST_NO_KEY", raising=False)
    spec = SupervisorSpec("openai:gpt-4o-mini", api_key_env="EPISTEMIC_TEST_NO_KEY")
    with pytest.raises(SupervisorUnavailable, match="EPISTEMIC_TEST_NO_KEY"):
        start_supervisor(spec)


def test_a_session_whose_supervisor_cannot_start_raises_a_provider_error(ws: Path) -> None:
    """What the Python API raised before supervisors were loaded by name: a ProviderError."""
    from epistemic_agent.providers import ProviderError
    from epistemic_agent.session.session import Session, Settings

    session = Session(ws, Settings(supervisor="replay:/nonexistent/verdicts.json"))
    with pytest.raises(ProviderError, match="does not exist"):
        session.open()
    assert not (ws / ".epistemic").exists()
