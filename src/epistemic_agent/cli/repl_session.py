"""The REPL's `/new`: end the current session and start a fresh one with the same settings.

The new session is a session of its own (`.epistemic/sessions/<id>/`), as a new `epistemic
repl` would start: the same workspace, header facts (model, mode), settings, approver and
supervisor, and the same policy (the workspace's, read again, when none was named). The
agent goes on with the same model and limits and an empty conversation, and the live view
follows the new session's commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import replace

if TYPE_CHECKING:
    from ..agent import Agent
    from ..session import Session


def fresh(session: Session, agent: Agent) -> tuple[Session, Agent]:
    """A new session and an agent over it; then `session` is ended (a `closed` record: `exec`
    no longer continues it) and closed. When the new one cannot open (a policy that no longer
    loads: PolicyError, OSError; a supervisor it names that cannot start: SupervisorUnavailable),
    the exception reaches the caller and `session` goes on."""
    from ..agent import Agent
    from ..session import Session, workspace_policy

    # the workspace's epistemic.toml is read again, as a new `epistemic repl` would read it
    policy = workspace_policy(session.workspace) if session.policy_implicit else session.policy
    settings = replace(session.settings, session=None, owns_session=True)  # None: a new one
    opened = Session(
        session.workspace,
        settings,
        dict(session.header),
        policy,
        session.approver,
        policy_implicit=session.policy_implicit,
        supervisor=session.supervisor,
    ).open()
    session.end()
    session.close()
    provider = agent.provider
    if provider.cache_key == session.session_id:
        provider.cache_key = None  # the new session's id, below
    renewed = Agent(opened, provider, agent.config, agent.events)
    follow = getattr(agent.events, "follow", None)
    if follow is not None:
        follow(opened)
    return opened, renewed
