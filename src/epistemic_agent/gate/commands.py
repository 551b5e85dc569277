"""What a shell command says it does, against the call's declaration: no answering approvals,
no change to the record or the policy, and no writes from an act declared an observation.

The effect comes from the static classifier (effects.classify), which is advice: the kernel
confinement and the observers hold the boundary.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from ..core import ACTS_BY_NAME, POLICY_NAME, is_guarded
from ..effects import classifier
from .config import GateConfig

if TYPE_CHECKING:
    from ..effects import Effect

_TMPDIR = re.compile(r"\$\{TMPDIR(?::-[^}]*)?\}|\$TMPDIR\b")

_LAUNCHERS = frozenset(
    [
        "sudo",
        "doas",
        "env",
        "nice",
        "nohup",
        "setsid",
        "time",
        "command",
        "exec",
        "stdbuf",
        "timeout",
        "python",
        "python3",
        "-m",
    ]
)
_APPROVERS = frozenset(["epistemic", "epistemic_agent", "epistemic_agent.cli"])


def answers_approval(command: str) -> bool:
    """Whether a simple command in `command` runs `epistemic approve` or `deny`."""
    if "approve" not in command and "deny" not in command:
        return False
    for segment in re.split(r"[;&|\n()`{}]|\$\(", command):
        words = [word.strip("'\"") for word in segment.split()]
        index = 0
        while index < len(words) and (
            words[index].rsplit("/", 1)[-1] in _LAUNCHERS
            or "=" in words[index]
            or words[index][:1] == "-"
            or words[index].replace(".", "").isdigit()
        ):
            index += 1
        runs_epistemic = index < len(words) and words[index].rsplit("/", 1)[-1] in _APPROVERS
        if runs_epistemic and {"approve", "deny"} & set(words[index + 1 :]):
            return True
    return False


def check_effects(command: str, act: str, config: GateConfig) -> tuple[str, str] | None:
    """What the command says it does, against the record and against the declared act."""
    classify = config.classify or classifier()
    effect = classify(_TMPDIR.sub(config.temp, command))
    if effect.cls != "mutating":
        return None
    changed = effect.writes + effect.deletes
    record = [p for p in changed if _touches_record(p, config)]
    if record:
        return "path-protected", (
            f"the command would change {record[0]!r}, which holds the session's record "
            f"(.epistemic/ and RATIONALE.md) or its policy ({POLICY_NAME}); no act may write or "
            "delete it. Leave it out of the command (for git clean, add -e .epistemic -e "
            "RATIONALE.md and name paths); a policy is changed by a human, not by the agent."
        )
    for path in changed:
        item = _protected_by(path, config)
        if item is not None:
            return "path-protected", (
                f"the command would change {path!r}, which is or leads to {item!r}: a file "
                "the session runs or obeys (its policy and the files it names, the tool's "
                "installation, git's hooks and config, the client's settings). No act may "
                "write, move, replace or delete it, or any folder on the way to it; leave it "
                "out of the command."
            )
    if ACTS_BY_NAME[act].mutating:
        return None
    return _check_observation(effect, act, config)


def _touches_record(path: str, config: GateConfig) -> bool:
    """A path that is, holds, or lies inside the record."""
    full = posixpath.normpath(posixpath.join(config.workspace, path))
    root = posixpath.normpath(config.workspace)
    if full == root and posixpath.normpath(path) != ".":
        return True  # the workspace itself, named from outside: `cd .. && rm -rf ws`
    if full != root and (root + "/").startswith(full.rstrip("/") + "/"):
        return True  # a folder holding the workspace: the record goes with it
    # "." (find . -delete, git clean) usually comes with filters; the session restores the
    # journal if a command removes it anyway, and flags that call.
    if not full.startswith(root.rstrip("/") + "/"):
        return False
    return is_guarded(full[len(root.rstrip("/")) + 1 :])


def _protected_by(path: str, config: GateConfig) -> str | None:
    """The protected item a changed path is, holds or lies inside (None: none). The workspace
    itself, named as ".", is left to the kernel: `find . -delete` comes with filters."""
    if not config.protected:
        return None
    full = posixpath.normpath(posixpath.join(config.workspace, path))
    if full == posixpath.normpath(config.workspace):
        return None
    for item in config.protected:
        if full == item or _under(item, full) or _under(full, item):
            return item
    return None


def _check_observation(effect: Effect, act: str, config: GateConfig) -> tuple[str, str] | None:
    """An observation whose command writes outside the temp directory is not an observation."""
    stray = [p for p in effect.writes + effect.deletes if not _under(p, config.temp)]
    if not stray and not effect.dynamic and (effect.writes or effect.deletes):
        return None  # scratch files under the temp directory
    culprit = next((r for r in effect.reasons if any(p in r for p in stray)), None)
    culprit = culprit or next(iter(effect.reasons), "the command changes state")
    return "observation-writes", (
        f"declared an observation ({act}), wrote an effect: {culprit}; if this output is the "
        "deliverable, use change-state; if it is a scratch file, write it under "
        f"{config.temp} ($TMPDIR)."
    )


def _under(path: str, folder: str) -> bool:
    full = posixpath.normpath(path)
    return full == folder or full.startswith(folder.rstrip("/") + "/")
