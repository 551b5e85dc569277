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
