"""The one factory of a session's collaborators. `open_parts` makes them all at once, when the
session is chosen and the policy in force is known, and none changes once made: a session
that goes on under the policy it recorded is built under that policy from the start."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..approvals import Asking, Signers
from ..core import struct
from ..effects import EffectCache
from ..gate import GateConfig
from ..policy import Alerts
from .alerting import Alerting
from .approval_step import ApprovalStep
from .file_step import FileStep
from .in_force import PolicyInForce
from .opening import Confining, temp_dir
from .pipeline import Pipeline
from .recorder import Recorder
from .review_step import ReviewStep
from .scratch import Scratch
from .scrub import Scrubber
from .shell_step import ShellStep
from .trace_step import TraceStep

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from ..approvals import Approver
    from ..core import Layout, struct
    from ..execute import Confinement, Platform
    from ..journal import EvidenceStore
    from ..policy import Policy
    from ..supervisor import Supervisor
    from .recorder import SessionRecord
    from .results import Settings


@struct
class Given:
    """What a session's parts are made from besides its policy: what the caller gave and
    what opening found (the machine's platform, the session's folders)."""

    workspace: Path
    layout: Layout
    settings: Settings
    platform: Platform
    supervisor: Supervisor | None
    approver: Approver | None
    ticket: str | None
    evidence: EvidenceStore


@struct
class Parts:
    """A session's collaborators: the policy in force and its approval channel, the scrubber
    and the alerts, where records go, the confinement of its acts, the gate's configuration,
    and the pipeline one call travels through."""

    in_force: PolicyInForce
    asking: Asking
    scrubber: Scrubber
    alerts: Alerts
    recorder: Recorder
    effects: EffectCache
    confinement: Confinement
    gate: GateConfig
    scratch: Scratch
    trace: TraceStep
    pipeline: Pipeline


def policy_in_force(
    given: Given, policy: Policy, signers: Mapping[str, str] | None = None
) -> PolicyInForce:
    """`policy` with who may approve under it (`signers`: the allowed_signers copies a session
    recorded, each file's SHA-256)."""
    folder = given.layout.pending.parent / "signers"
    return PolicyInForce(
        policy, given.workspace, Signers(policy, folder, signers), given.ticket or ""
    )


def open_parts(
    given: Given, record: SessionRecord, in_force: PolicyInForce, session_id: str
) -> Parts:
    """Every collaborator of the session `session_id`, under the policy `in_force`."""
    policy, settings, layout, workspace = (
        in_force.policy,
        given.settings,
        given.layout,
        given.workspace,
    )
    scrubber = Scrubber(policy)
    asking = Asking(
        policy, workspace, layout.pending, in_force.signers, settings.approval_timeout,
        settings.approval_channel, given.approver, settings.approval_key,
    )  # fmt: skip
    recorder = Recorder(record, scrubber)
    effects = EffectCache(layout.effects_cache, scrubber.clean)
    confining = Confining(given.platform, layout, policy, settings, given.supervisor)
    confinement = confining.make(session_id)
    gate = GateConfig(
        str(workspace), settings.min_reason, temp_dir(workspace), effects.classify,
        confinement.protected_items(),
    )  # fmt: skip
    scratch = Scratch(confinement, layout, settings.output_limit)
    alerts = Alerts(policy.hooks, str(workspace), runner=scratch.run_hook)
    alerting = Alerting(alerts, scrubber, recorder, workspace)
    evidence = given.evidence
    trace = TraceStep(settings, layout, confinement, recorder, evidence, scratch)
    shell = ShellStep(settings, confinement, recorder, evidence, scratch, trace)
    files = FileStep(settings, confinement, scrubber, evidence, scratch, trace)
    pipeline = Pipeline(
        gate,
        effects,
        recorder,
        in_force,
        ApprovalStep(in_force, asking, scrubber, recorder, alerting),
        ReviewStep(given.supervisor, scrubber, recorder),
        alerting,
        (shell, files),
        given.ticket,
    )
    return Parts(
        in_force, asking, scrubber, alerts, recorder, effects, confinement, gate, scratch,
        trace, pipeline,
    )  # fmt: skip
