"""The epistemic vocabulary: the seven act types; the one source for schemas, prompts, reports."""

from __future__ import annotations

from .structs import struct


@struct
class Act:
    """One act type: its name, what it means, and whether it mutates the world."""

    name: str
    meaning: str
    mutating: bool


#: The closed vocabulary, in report order. Everything else derives from this table.
ACTS: tuple[Act, ...] = (
    Act(
        "collect-info",
        "read-only observation to build understanding; nothing is tested, nothing changes",
        False,
    ),
    Act(
        "test-hypothesis",
        "an experiment to confirm or refute a belief held now; the reason names the belief "
        "and the observation that would refute it",
        False,
    ),
    Act(
        "verify",
        "re-running a known check to confirm finished work; nothing is in doubt",
        False,
    ),
    Act(
        "change-state",
        "a change meant to persist because it is part of the deliverable",
        True,
    ),
    Act(
        "setup",
        "installs, scaffolding, fixtures: mutating, but a means, never the deliverable",
        True,
    ),
    Act(
        "revert",
        "undoing an earlier change-state that proved wrong",
        True,
    ),
    Act(
        "cleanup",
        "removing the agent's own temporary artifacts",
        True,
    ),
)

ACT_NAMES: tuple[str, ...] = tuple(act.name for act in ACTS)
ACTS_BY_NAME: dict[str, Act] = {act.name: act for act in ACTS}

#: File tools have a fixed act: their type is a property of the tool, not of the situation.
FILE_TOOL_ACTS: dict[str, str] = {
    "read_file": "collect-info",
    "write_file": "change-state",
    "str_replace_edit": "change-state",
}


def is_mutating(act: str) -> bool:
    """Whether an act type mutates the world (unknown names count as mutating)."""
    found = ACTS_BY_NAME.get(act)
    return True if found is None else found.mutating


def normalise_act(value: str) -> str:
    """Forgive case and surrounding spaces: ' Collect-Info ' -> 'collect-info'."""
    return value.strip().lower()


def act_list_text() -> str:
    """The seven acts with their meanings, one per line, for messages and prompts."""
    return "\n".join(f"- {act.name}: {act.meaning}" for act in ACTS)


def act_order(act: str) -> int:
    """Position of an act in report order (unknown acts sort last)."""
    return ACT_NAMES.index(act) if act in ACTS_BY_NAME else len(ACT_NAMES)


#: The guarantees, by stable id, in the order `epistemic doctor` lists them.
GUARANTEES: dict[str, str] = {
    "record-protected": "no act can create, write, truncate, delete, rename or hard-link any "
    "part of the record (journal, head anchor, evidence, pending approvals, the policy in "
    "force and the files it names, the trust store, RATIONALE.md), or move a folder leading "
    "to one",
    "record-private": "no act can read the record's private files (pending approval requests "
    "and answers, evidence, capture files)",
    "observations-write-scratch-only": "observation acts (collect-info, test-hypothesis, "
    "verify) write nothing but the session's scratch dir, anywhere on the file system",
    "observations-keep-metadata": "observation acts cannot change mode, owner, timestamps or "
    "extended attributes in the workspace",
    "mutations-confined": "mutating acts write only the workspace, the scratch dir and the "
    "paths the policy grants",
    "tool-protected": "no act can write the tool's own installation (its Python environment "
    "and the programs the session runs), or move a folder leading to it",
    "processes-isolated": "no act can signal, trace or stop the session or any process "
    "outside its own process tree",
    "secrets-hidden": "no act can see the operator's keys and credentials (`[sandbox] hidden`: "
    "~/.ssh, ~/.gnupg, cloud credentials and the SSH agent's socket by default)",
    "reads-allow-listed": "where an allow-list of readable paths is set (`epistemic run "
    "--readable`), no act can read a file, list a folder or run a program outside it, the "
    "workspace, the scratch dir and its grants",
}
