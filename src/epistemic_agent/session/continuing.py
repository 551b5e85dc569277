"""What a process that continues a session does first, under the journal's lock: refuse a
policy it merely found when it is not the one the session was under, keep the warning of a
broken chain, close the calls a killed process left without an outcome, and say in the
journal when the policy or the confinement changed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import RECORD_DIR, REPORT_NAMES, atomic_write, now, read_regular, struct
from ..journal import INTACT, TORN, check_journal, read_numbered, stored_unreferenced
from ..journal import chain_notice as notice
from ..policy import MAX_FILE, Policy, PolicyError, preset, read_policy
from .recovery import Orphan, Recovery

if TYPE_CHECKING:
    from typing import Any

    from ..core import Layout
    from ..execute import Confinement
    from ..journal import EvidenceStore, SessionState
    from .in_force import PolicyInForce
    from .recorder import Recorder
    from .results import Settings


def policy_refused(state: SessionState, now_in_force: dict[str, Any]) -> str | None:
    """Why a session continued under a policy it merely found may not go on: the policy
    it was under is gone, or another one is in its place (a file that appeared, or
    changed, or allowed signers that changed). A policy is changed by a human, who names
    it; an agent's act could have written the one found here."""
    last = state.header.get("policy")
    if not isinstance(last, dict):
        return None
    source = last.get("source")
    from_file = isinstance(source, str) and not source.startswith("preset:")
    if from_file and not os.path.exists(str(source)):
        return (
            f"{source}: the policy this session was under is gone. Restore it, or name "
            "the policy to use now (--policy FILE, --approve mutating|none, --read-only)."
        )
    if {k: last.get(k) for k in now_in_force} == now_in_force:
        return None
    return (
        f"the policy found in the workspace ({now_in_force['source']}, sha256 "
        f"{str(now_in_force['sha256'])[:12]}) is not the one this session was under "
        f"({source}, sha256 {str(last.get('sha256'))[:12]}): it appeared or changed since. "
        "A policy is changed by a human: to go on under it, name it (--policy FILE); or "
        "restore the one the session was under."
    )


POLICIES = "policies"  # in a session's record folder: copies of the policies it put in force


def keep_policy(layout: Layout, policy: Policy) -> None:
    """Keep a private copy of a policy file the session puts in force, named by its SHA-256:
    a later process that finds the file changed goes on under this copy. Nothing is kept
    when the file no longer holds the bytes that were loaded."""
    if policy.source.startswith("preset:"):
        return
    copy = layout.folder / POLICIES / policy.sha256
    if copy.is_file():
        return
    try:
        data = read_regular(Path(policy.source), MAX_FILE)
    except OSError:
        return
    if hashlib.sha256(data).hexdigest() == policy.sha256:
        atomic_write(copy, data, mode=0o600)


def recorded_policy(layout: Layout, last: dict[str, Any]) -> Policy | None:
    """The policy a session recorded as in force, from its presets or its private copy; None
    when the record holds no copy of it (a session written before copies were kept)."""
    source, digest = last.get("source"), last.get("sha256")
    if not isinstance(source, str) or not isinstance(digest, str):
        return None
    if source.startswith("preset:"):
        try:
            return preset(source.removeprefix("preset:"))
        except PolicyError:
            return None
    copy = layout.folder / POLICIES / digest
    if not copy.is_file():
        return None
    try:
        policy = read_policy(copy, Path(source))
    except PolicyError:
        return None
    return policy if policy.sha256 == digest else None


@struct
class Recorded:
    """The policy a continued session recorded, to go on under in place of the one found."""

    policy: Policy
    signers: dict[str, str] | None  # allowed_signers file -> the SHA-256 of its copy in force
    found: dict[str, Any]  # the policy found, as the header would name it
    last: dict[str, Any]  # the policy recorded, as the record names it


def recorded_in_force(
    state: SessionState, found: dict[str, Any], layout: Layout
) -> Recorded | str | None:
    """A continued session goes on under the policy it recorded: when the one found is another
    (a file that appeared, changed or went since), the recorded one, from the record's copy;
    None when the one found is the one recorded; why it may not go on, when the record holds
    no copy (a session written before copies were kept)."""
    last = state.header.get("policy")
    if not isinstance(last, dict) or {k: last.get(k) for k in found} == found:
        return None
    recorded = recorded_policy(layout, last)
    if recorded is None:
        return policy_refused(state, found)
    signers = last.get("signers")
    return Recorded(recorded, signers if isinstance(signers, dict) else None, found, last)


def note_ignored(recorder: Recorder, kept: Recorded) -> str | None:
    """Say once, in the journal, that a policy found is not the one in force: the session goes
    on under the one it recorded. The message, for the process to print, the first time."""
    found, last = kept.found, kept.last
    message = (
        f"the policy found ({_described(found)}) is not the one this session was started "
        f"under ({_described(last)}): the session goes on under the one it recorded (the "
        "record keeps a copy). Name another to change it (--policy FILE, --approve "
        "mutating|none, --read-only), or start a new session (--session new): a policy file is "
        "put in force only if no act of this workspace could have written it (`epistemic "
        "policy trust FILE` after you have read it)."
    )
    if found["sha256"] in recorder.state.header.get("ignored_policies", []):
        return None
    record = {"kind": "policy-ignored", "t": now(), **found, "in_force": last}
    recorder.journal.append({**record, "message": message}, durable=True)
    recorder.publish()
    return message


def _described(policy: dict[str, Any]) -> str:
    source, digest = str(policy.get("source")), str(policy.get("sha256"))[:12]
    if source.startswith("preset:"):
        return f"none in the workspace, so {source}" if source == "preset:approve-none" else source
    return f"{source}, sha256 {digest}"


def keep_chain_notice(recorder: Recorder) -> None:
    """A session that goes on in a journal whose chain does not verify (a line edited by
    hand) says so first in every report it writes from now on, as `epistemic report`
    does: what it appends does not make the earlier record trustworthy again.

    This reads the whole journal (a hash per line) on every open: a line edited by hand
    before the last verified point shows only by hashing it again, and nothing kept beside
    the journal (a digest, a time stamp) is out of reach of whoever could edit the journal."""
    journal = recorder.layout.journal
    result = check_journal(journal)
    if result.status not in (INTACT, TORN):  # a torn tail is a crash, closed on open
        numbered, _ = read_numbered(journal)
        recorder.report.warning = notice(result, numbered)


def recover(recorder: Recorder, evidence: EvidenceStore, settings: Settings) -> None:
    """Close the calls a killed session left without an outcome (recovery.py). The caller
    holds the journal's lock."""
    layout, scrubber, history = recorder.layout, recorder.scrubber, recorder.state.history
    orphans = [
        Orphan(
            seq,
            history.pending.get(seq, ""),
            d.get("pid"),
            d.get("t", ""),
            bool(d.get("asked")),
            bool(d.get("answered")),
        )
        for seq, d in history.declared.items()
    ]
    ignored = frozenset((*settings.ignore, RECORD_DIR, *REPORT_NAMES))
    recovery = Recovery(layout.workspace, layout.scratch, evidence, scrubber, ignored)
    recovered = recovery.outcomes(orphans) if orphans else []
    if recovered:  # what the killed session stored before it could journal an outcome
        stored = stored_unreferenced(layout.journal, layout.evidence, recovered)
        if stored:
            last = recovered[-1]
            last["evidence"] = {**last.get("evidence", {}), "stored_before_the_kill": stored}
            last["outcome"] += (
                f"; {len(stored)} evidence blob(s) the killed session stored before it could "
                "journal an outcome are kept with this one (whose they were, it did not record)"
            )
    for record in recovered:
        scrubbed, redacted = scrubber.scrub(record)
        if redacted:
            scrubbed["redacted"] = redacted
        recorder.journal.append(scrubbed, durable=True)
    if layout.scratch.is_dir():
        recovery.sweep(live=set())
    if recovered:
        recorder.publish()


def note_changes(recorder: Recorder, in_force: PolicyInForce, confinement: Confinement) -> None:
    """A later process under another policy or another confinement says so in the journal
    (the caller holds its lock)."""
    session = recorder.state.header
    found = in_force.header()
    if session.get("policy") != found:
        keep_policy(recorder.layout, in_force.policy)
        recorder.journal.append({"kind": "policy", "t": now(), **found}, durable=True)
        recorder.publish()
    header = confinement.header()
    if _confinement_key(session.get("confinement")) != _confinement_key(header):
        recorder.journal.append({"kind": "confinement", "t": now(), **header}, durable=True)
        recorder.publish()


def note_relinked(recorder: Recorder, relinked: list[str]) -> None:
    """Files of the record that had another hard link were moved to their own first (the
    caller holds the journal's lock)."""
    message = (
        f"{', '.join(relinked)} had another hard link (a name elsewhere that could "
        "write the record); each was moved to a file of its own first"
    )
    record = {"kind": "relinked", "t": now(), "files": relinked, "message": message}
    recorder.journal.append(record, durable=True)


def _confinement_key(header: object) -> object:
    """What makes two confinements the same for the record: mechanism and what is not held."""
    if not isinstance(header, dict):
        return None
    grants, readable = header.get("grants"), header.get("readable")
    return header.get("mechanism"), header.get("not_held"), grants, readable
