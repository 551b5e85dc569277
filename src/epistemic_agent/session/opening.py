"""What a session decides as it opens, before and as it writes its first record: the machine's
platform, the confinement its acts run under, the supervisor, and a new session's header."""

from __future__ import annotations

import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import GitTimeout, __version__, git_head, now, user
from ..execute import Confinement, ConfinementError, Platform, detect, unmet, unprotected
from ..policy import ROLE, PolicyError, SupervisorSpec, trust_folder
from ..supervisor import start_supervisor

if TYPE_CHECKING:
    from typing import Any

    from ..core import Layout
    from ..journal import Record
    from ..policy import Policy
    from ..supervisor import Supervisor
    from .in_force import PolicyInForce
    from .results import Settings
    from .scrub import Scrubber


def platform_for(settings: Settings) -> Platform:
    """The platform the caller gave, none when it turned enforcement off, else detected."""
    if settings.platform is not None:
        return settings.platform
    if not settings.enforce:
        off = "turned off by the caller (Settings.enforce=False)"
        return Platform(None, off, None, off, None, off)
    return detect()


def supervisor_for(policy: Policy, model: str | None) -> Supervisor | None:
    """The supervisor `--supervisor` or the policy's [supervisor] names (the flag's model over
    the file's, with the file's other settings); None when neither names a model. Raises
    `SupervisorUnavailable` when the one named cannot start."""
    spec = (policy.supervisor or SupervisorSpec()).with_model(model)
    if spec.model is None:
        return None

    return start_supervisor(spec)


class Confining:
    """Makes the confinement of a session's acts: what it guards, hides and grants."""

    def __init__(
        self,
        platform: Platform,
        layout: Layout,
        policy: Policy,
        settings: Settings,
        supervisor: Supervisor | None,
    ) -> None:
        self.platform = platform
        self.layout = layout
        self.policy = policy
        self.settings = settings
        self.supervisor = supervisor

    def require(self) -> None:
        """A policy that requires guarantees this machine cannot give stops the session here,
        before anything is written; so does a layout of the tool or the policy that this
        machine would protect but cannot (execute/sandbox/layouts.py)."""
        confinement, wanted = self.make(""), self.policy.require_confinement
        problem = unmet(wanted, confinement) if wanted else None
        if problem is not None:
            raise PolicyError(f"{self.policy.source}: {problem}")
        files = [] if self.policy.source.startswith("preset:") else [self.policy.source]
        problem = unprotected(confinement, (*files, *self.policy.signer_files()))
        if problem is not None:
            raise PolicyError(problem)

    def make(self, session_id: str) -> Confinement:
        policy, workspace = self.policy, self.layout.workspace
        guarded = [self.layout.report]
        if not policy.source.startswith("preset:"):
            guarded.append(Path(policy.source).resolve())
        signers = [policy.allowed_signers, *(r.allowed_signers for r in policy.rules)]
        guarded += [Path(path) for path in dict.fromkeys(signers) if path]
        guarded += [path for path in self.layout.client_settings() if path.exists()]
        if self.supervisor is not None:
            guarded += self.supervisor.files
        guarded += git_setup(workspace)
        confinement = Confinement(
            self.platform,
            workspace,
            scratch_path(workspace, session_id),
            self.layout.record,
            tuple(guarded),
            policy.writable,
            tuple(Path(path) for path in self.settings.hidden),
            secrets=policy.hidden,
            covers=tuple((Path(path), Path(decoy)) for path, decoy in self.settings.decoys),
            readable=_as_paths(self.settings.readable),
        )
        trusted = trust_store(confinement)
        if trusted is not None:
            confinement.guard(trusted)
        return confinement


def trust_store(confinement: Confinement) -> Path | None:
    """The trust store (policy/trust.py), to be read-only for every act: made when missing
    where some act could write, so that no act can make it with entries of its own."""
    folder = trust_folder(create=False)
    assert folder is not None
    if not folder.is_dir() and confinement.writable_by_an_act(str(folder)):
        folder = trust_folder(create=True)
    return folder if folder is not None and folder.is_dir() else None


def git_setup(workspace: Path) -> list[Path]:
    """What of the workspace's repository runs programs when git runs in it (the session's
    own git, and the human's next `git commit`): its hooks and its configuration (hooks
    paths, fsmonitor, aliases, filters, pagers). Acts may commit; they may not change these."""
    git = workspace / ".git"
    if git.is_symlink() or not git.is_dir():
        return []
    hooks, config = git / "hooks", git / "config"  # as a folder and a file: anything else
    found = [hooks] if hooks.is_dir() and not hooks.is_symlink() else []  # cannot be bound
    return found + ([config] if config.is_file() and not config.is_symlink() else [])


def session_record(
    session_id: str,
    workspace: Path,
    header: dict[str, Any],
    scrubber: Scrubber,
    in_force: PolicyInForce,
    confinement: Confinement,
    supervisor: Supervisor | None,
) -> Record:
    """The first record of a new session (docs/journal-format.md, `session`)."""
    record: Record = {
        "kind": "session",
        "session": session_id,
        "started": now(),
        "started_epoch": time.time(),
        "tool_version": __version__,
        "workspace": str(workspace),
        **_git_head(workspace, confinement),
        "user": user(),
        "host": os.uname().nodename,
        "pid": os.getpid(),
        "python": sys.version.split()[0],
    }
    record.update(scrubber.scrub(header)[0])
    if supervisor is not None:
        spec = supervisor.spec.with_model(supervisor.model)
        record["supervisor"] = {**spec.to_json(), "role": ROLE}
    record["policy"] = in_force.header()
    record["confinement"] = confinement.header()
    return record


def _git_head(workspace: Path, confinement: Confinement) -> dict[str, str | None]:
    """`git rev-parse HEAD`, confined like an observation: the workspace's git config and
    hooks are the agent's to change, so git runs with no more rights than its acts. When git
    did not answer in time, `git_head_unknown` says so."""
    try:
        return {"git_head": confinement.run("collect-info", partial(git_head, workspace))}
    except ConfinementError:
        return {"git_head": None}
    except GitTimeout as error:
        return {"git_head": None, "git_head_unknown": str(error)}


def scratch_path(workspace: Path, session_id: str) -> Path:
    return Path(temp_dir(workspace)) / "epistemic" / (session_id[:16] or "session")


def temp_dir(workspace: Path) -> str:
    """The system temp directory, for scratch files; never one inside the workspace."""
    for candidate in (os.environ.get("TMPDIR"), "/tmp", "/var/tmp"):
        if candidate:
            folder = os.path.realpath(candidate)
            if not (folder + "/").startswith(str(workspace) + "/"):
                return folder
    return str(workspace.parent)


def _as_paths(paths: tuple[str, ...] | None) -> tuple[Path, ...] | None:
    return None if paths is None else tuple(Path(path) for path in paths)
