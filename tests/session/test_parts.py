"""A session's parts (session/parts.py): made by one factory, once, under the policy in force;
and "decide" one level deep: the pipeline asks the policy in force, which asks the policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from epistemic_agent import Session
from epistemic_agent.core.structs import FrozenInstanceError
from epistemic_agent.gate.check import Call, check
from epistemic_agent.journal.state import SessionState
from epistemic_agent.policy.rules import PolicyError
from epistemic_agent.session.results import Settings

LOOK = "See which files the workspace holds before changing anything"
ACME = 'default = "allow"\n[secrets]\npatterns = ["ACME-[0-9]{8}"]\n'
PLAIN = 'default = "allow"\n'
REQUIRES = 'default = "allow"\n[sandbox]\nrequire_confinement = true\n'
DENY_RM = (
    'default = "allow"\n[[rule]]\nid = "no-rm"\nwhen = \'command.startsWith("rm ")\'\n'
    'decision = "deny"\nmessage = "nothing is removed here"\n'
)


def test_the_parts_are_made_once_and_are_the_same_everywhere(ws: Path) -> None:
    with Session(ws) as session:
        parts = session._parts
        with pytest.raises(FrozenInstanceError):
            parts.scrubber = parts.scrubber  # type: ignore[misc]
        assert parts.recorder.scrubber is parts.scrubber is session.scrubber
        pipeline = parts.pipeline
        assert pipeline.in_force is parts.in_force and pipeline.approval.asking is parts.asking
        assert pipeline.recorder is parts.recorder and pipeline.gate is session.gate
        assert session.alerts is parts.alerts and parts.alerts.runner == parts.scratch.run_hook
        assert parts.asking.signers is parts.in_force.signers  # one view of who may approve
        assert session.bash("ls", "collect-info", LOOK).status == "ran"
        assert session._parts is parts


def test_a_session_that_goes_on_under_its_recorded_policy_is_built_under_it(ws: Path) -> None:
    """The policy found changed since (it names no secrets now): the session goes on under
    the one it recorded, and every part is that policy's, its scrubber included."""
    (ws / "epistemic.toml").write_text(ACME)
    with Session(ws) as session:
        session.bash("true", "collect-info", LOOK)
    (ws / "epistemic.toml").write_text(PLAIN)
    with Session(ws) as session:
        assert session._parts.in_force.policy.secret_patterns  # the recorded one
        done = session.bash("echo ACME-12345678", "collect-info", LOOK)
    assert "ACME-12345678" not in done.stdout and "[REDACTED:policy:1]" in done.stdout
    assert "ACME-12345678" not in (ws / ".epistemic" / "journal.jsonl").read_text()


@pytest.mark.system  # needs a machine that confines acts
def test_the_recorded_policy_s_confinement_is_required_when_a_session_goes_on_under_it(
    ws: Path,
) -> None:
    """A policy that requires confinement stops a later process that cannot give it, even when
    the policy found since requires nothing: the session would go on under the recorded one."""
    (ws / "epistemic.toml").write_text(REQUIRES)
    with Session(ws) as session:
        if session.platform.mechanism() == "none":
            pytest.skip("this machine cannot confine acts")
        session.bash("true", "collect-info", LOOK)
    (ws / "epistemic.toml").write_text(PLAIN)
    with pytest.raises(PolicyError, match="require"):
        Session(ws, Settings(enforce=False)).open()


def test_decide_is_one_level_the_policy_in_force_puts_the_facts_to_the_policy(
    ws: Path,
) -> None:
    (ws / "epistemic.toml").write_text(DENY_RM)
    with Session(ws) as session:
        in_force = session._parts.in_force
        state: SessionState = session.state
        rm = check("bash", {"command": "rm -f x", "type": "cleanup", "reason": LOOK}, session.gate)
        assert isinstance(rm, Call)
        decision = in_force.decide(rm, session.effects.classify("rm -f x"), state, 1)
        assert (decision.decision, decision.rule) == ("deny", "no-rm")
        assert in_force.denial(rm, decision).rule == "policy"
        refused = session.bash("rm -f x", "cleanup", LOOK)
    assert refused.status == "rejected" and refused.rule == "policy"
