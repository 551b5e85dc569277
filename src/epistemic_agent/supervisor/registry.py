"""Who reads a call before it runs: the supervisors a session can be given, by name.

A supervisor (supervisor.py, docs/supervisor.md) is a second opinion on each call. It is named
here by the import path of its factory, like the providers, observers and approvers, so that a
session given none (the usual case, and every `epistemic exec` without `[supervisor]`) never
imports the model layer behind one. A factory takes the spec and a timeout in seconds and
returns a `Supervisor`, or raises `core.errors.SupervisorUnavailable` when it cannot start one
(a bad spec or script, no API key): before anything ran, which the command line reports as a
usage error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import load

if TYPE_CHECKING:
    from ..policy import SupervisorSpec
    from .model import Supervisor

#: Each kind of supervisor's factory. `model` asks a model through the providers (a spec's
#: `replay:PATH` plays a verdict script instead: supervisor_script.py).
SUPERVISORS: dict[str, str] = {
    "model": "epistemic_agent.supervisor.model.start",
}


def start_supervisor(
    spec: SupervisorSpec, timeout: float = 120.0, kind: str = "model"
) -> Supervisor:
    """The supervisor of the kind named, built from its spec; `SupervisorUnavailable` when it
    cannot start, KeyError (naming the known kinds) for a kind not registered."""
    supervisor: Supervisor = load(SUPERVISORS, kind, "supervisor")(spec, timeout)
    return supervisor
