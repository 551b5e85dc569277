"""What a call's records say, as sentences: the static check, the policy's decision, what the
call was seen to change, and how it was confined. Plain text, built from the journal's fields;
each reader escapes it for its medium (`show` for the terminal, the HTML page with `esc`,
RATIONALE.md with mdsafe), since paths, rule ids, messages and reasons are recorded text.

`confinement` is the one place that says what the outcome's `enforcement` field means:
`enforcement` tells how the *workspace was kept read-only* for an observation act (`landlock`,
`bwrap`), and is `none` for every mutating act, which may write the workspace. It never says
whether a call was confined: the outcome's `confinement` (the session's mechanism) does, and
the session header's `confinement` object says what that mechanism guaranteed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import struct

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from ..journal import Record

PATHS_SHOWN = 10  # paths a sentence names before `and N more`
_CLASSES = {
    "read-only": "read-only: every part of the command is known not to change anything",
    "mutating": "mutating",
    "unknown": "of unknown effect: nothing in it is known to write, but some part of it "
    "cannot be vouched for",
}


def listed(paths: object, total: object = None) -> str:
    """`a, b and c`; past PATHS_SHOWN, `a, b, ... and N more` (`total`: the whole count when
    the record kept only the first paths)."""
    items = [str(p) for p in paths] if isinstance(paths, list) else []
    count = total if isinstance(total, int) and total > len(items) else len(items)
    shown = items[:PATHS_SHOWN]
    rest = count - len(shown)
    if rest > 0:
        return ", ".join(shown) + f" and {rest} more"
    if len(shown) < 2:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def static_check(effect: Mapping[str, Any]) -> str:
    """The classifier's verdict on a shell command (the call's `effect`), with its reasons."""
    kind = str(effect.get("class", "?"))
    parts = [f"the command is {_CLASSES.get(kind, kind)}"]
    if effect.get("writes"):
        parts.append(f"it writes {listed(effect['writes'])}")
    if effect.get("deletes"):
        parts.append(f"it deletes {listed(effect['deletes'])}")
    if effect.get("dynamic") is True:
        parts.append("some of what it writes is known only when it runs")
    sentence = "; ".join(parts) + "."
    reasons = [str(r) for r in effect.get("reasons") or [] if isinstance(r, str)]
    if reasons:
        sentence += " Because " + "; ".join(reasons) + "."
    return sentence[0].upper() + sentence[1:]


def policy_source(policy: object) -> str | None:
    """The policy in force as the session header (or a `policy` record) names it: its file's
    path, or `preset:NAME`."""
    if isinstance(policy, dict) and isinstance(policy.get("source"), str):
        return str(policy["source"])
    return None


def policy_in_force(records: Iterable[Record], upto: Record | None = None) -> str | None:
    """The policy in force when `upto` was written (the header's, or the last `policy` record
    before it); the last one when `upto` is None."""
    source = None
    for record in records:
        if record is upto:
            break
        if record.get("kind") in ("session", "policy"):
            named = policy_source(
                record.get("policy") if record.get("kind") == "session" else record
            )
            source = named or source
    return source


def policy_decision(decision: object, source: str | None) -> str:
    """What the policy decided about a call (the declaration's `policy`), naming the policy in
    force as recorded; a call without a decision was decided by a policy with no rules."""
    named = f"the policy {source}" if source else "the policy"
    if not isinstance(decision, dict):
        if source is None:
            return "No policy decision was recorded, and the session names no policy in force."
        return (
            f"The policy in force, {source}, has no rules and allows every call by default, so "
            "it recorded no decision for this one."
        )
    rule = decision.get("rule")
    by = f"its rule {rule}" if rule else "its default"
    verdict = decision.get("decision")
    said = {
        "allow": f"{named} allowed it ({by})",
        "ask": f"{named} asked a human about it ({by})",
        "deny": f"{named} denied it ({by})",
    }.get(str(verdict), f"{named} decided {verdict} ({by})")
    message = decision.get("message")
    sentence = said[0].upper() + said[1:]
    return sentence + (f": {message}" if isinstance(message, str) and message else ".")


def observed(seen: Mapping[str, Any]) -> str:
    """What the observer saw the call change in the workspace, and how it looked."""
    changes = [
        f"{verb} {listed(seen.get(key), seen.get(f'{key}_total'))}"
        for key, verb in (("created", "created"), ("modified", "modified"), ("deleted", "deleted"))
        if seen.get(key)
    ]
    said = ("It " + "; ".join(changes)) if changes else "It changed nothing in the workspace"
    method = seen.get("method")
    how = {
        "fanotify": "seen by fanotify",
        "snapshot": "found by comparing snapshots",
        "file-tool": "as the file tool did it",
        "recovered": "recovered after the session was killed: every entry changed since the "
        "call was declared, deletions unseen",
    }.get(str(method), f"seen by {method}" if method else "")
    notes = [how] if how else []
    if seen.get("complete") is False and method != "recovered":
        notes.append("incomplete: the kernel's event queue overflowed, so some changes are unseen")
    return said + (f" ({'; '.join(notes)})" if notes else "") + "."


@struct
class Confined:
    """How one call was confined, from its outcome and the session's `confinement` object."""

    mechanism: str | None  # the mechanism, or None when the record does not say
    source: str | None  # `outcome` or `session`: where `mechanism` was read
    confined: bool | None  # None: it did not run, or the record cannot tell
    workspace_read_only: bool | None  # None: not a shell command that ran
    sentence: str

    def to_json(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism,
            "from": self.source,
            "confined": self.confined,
            "workspace_read_only": self.workspace_read_only,
            "sentence": self.sentence,
        }


def confinement(
    tool: object,
    act: object,
    mutating: object,
    outcome: Mapping[str, Any] | None,
    session: object,
    rejected: bool = False,
) -> Confined:
    """How the call was confined: which mechanism held for it, what it could write, and what
    `enforcement` recorded (see the module's docstring); `session` is the `confinement` object
    in force when it was declared (the header's, or a later `confinement` record's)."""
    header = session if isinstance(session, dict) else {}
    if rejected:
        return Confined(None, None, None, None, "It never ran: it was rejected.")
    if outcome is None:
        return Confined(None, None, None, None, "It has no outcome: it never ran, or has not yet.")
    if outcome.get("denied") is True:
        return Confined(None, None, None, None, "It did not run: it was denied.")
    if outcome.get("cancelled") is True and "returncode" not in outcome and tool == "bash":
        return Confined(None, None, None, None, "It did not run: it was cancelled first.")
    recorded = outcome.get("confinement")
    mechanism = recorded if isinstance(recorded, str) else header.get("mechanism")
    source = "outcome" if isinstance(recorded, str) else ("session" if mechanism else None)
    if not isinstance(mechanism, str):
        return Confined(
            None,
            None,
            None,
            None,
            "The record does not say how it was confined (it was written before confinement "
            "was recorded).",
        )
    if outcome.get("not_run") is True:
        return Confined(
            mechanism,
            source,
            None,
            None,
            f"It did not run: it could not be confined by {mechanism}.",
        )
    writable = _writable(header, str(act), mutating is True)
    if tool != "bash":
        return _file_tool(mechanism, source, str(act), writable)
    if mechanism == "none":
        return Confined(
            mechanism,
            source,
            False,
            False,
            "Not confined: the session had no confinement mechanism (none), so the command "
            "could write whatever its OS user can.",
        )
    enforcement = outcome.get("enforcement")
    if source == "session":  # an outcome from before outcomes named it, or a recovered one
        mechanism_said = f"{mechanism} (the session's mechanism: the outcome names none)"
    else:
        mechanism_said = mechanism
    if mutating is True:
        sentence = (
            f"Confined by {mechanism_said} as a {act} act: it could write {writable}. The "
            "workspace was not read-only for it, since its act may change it"
            + (
                " (that is all the record's `enforcement: none` says)."
                if enforcement == "none"
                else "."
            )
        )
        return Confined(mechanism, source, True, False, sentence + _not_held(header))
    if isinstance(enforcement, str) and enforcement != "none":
        sentence = (
            f"Confined by {mechanism_said}: the workspace was read-only for it "
            f"({enforcement}), "
            f"and it could write {writable}."
        )
        return Confined(mechanism, source, True, True, sentence + _not_held(header))
    sentence = (
        f"Confined by {mechanism_said}, but the record does not say the workspace was read-only "
        f"for it (enforcement {enforcement or 'absent'})."
    )
    return Confined(mechanism, source, True, None, sentence + _not_held(header))


def _file_tool(mechanism: str, source: str | None, act: str, writable: str) -> Confined:
    if mechanism.startswith("landlock"):
        sentence = (
            f"Its file I/O ran in a thread confined by {mechanism} as a {act} act: it could "
            f"write {writable}."
        )
        return Confined(mechanism, source, True, None, sentence)
    if mechanism == "none":
        sentence = (
            "Not confined: the session had no confinement mechanism (none); the tool's own "
            "checks of the path applied."
        )
        return Confined(mechanism, source, False, None, sentence)
    sentence = (
        f"Its file I/O ran in the session's own process, not confined ({mechanism} confines "
        "commands only); the tool's own checks of the path applied."
    )
    return Confined(mechanism, source, False, None, sentence)


def _writable(header: Mapping[str, Any], act: str, mutating: bool) -> str:
    """What an act of this kind could write, as the session's confinement object says."""
    scratch = header.get("scratch")
    folder = (
        f"the session's scratch folder ({scratch})" if scratch else "the session's scratch folder"
    )
    if not mutating:
        missing = header.get("not_held")
        if isinstance(missing, dict) and "observations-write-scratch-only" in missing:
            return folder + ", and perhaps more (observations-write-scratch-only did not hold)"
        return "nothing but " + folder
    grants = header.get("grants")
    granted = grants.get(act) if isinstance(grants, dict) else None
    if granted:
        return f"the workspace, {folder} and the folders granted to {act} acts ({listed(granted)})"
    return f"the workspace and {folder}"


def _not_held(header: Mapping[str, Any]) -> str:
    missing = header.get("not_held")
    if not isinstance(missing, dict) or not missing:
        return ""
    return (
        f" {len(missing)} guarantee(s) did not hold on that machine: "
        + "; ".join(f"{key} ({why})" for key, why in missing.items())
        + "."
    )
