"""Whether a session may put a policy in force: never one that an act could have written.

A policy file, and every file it names (allowed signers, a supervisor's verdict script), is
put in force by a new session, or by a process that names another policy for the session it
continues, only when one of these holds:

1. a session of this workspace was started under exactly these bytes (its header records
   their SHA-256): they were checked then;
2. a human put these bytes in force with `epistemic policy trust FILE` (policy/trust.py), and
   the trust entry itself did not change while an act could write;
3. no call of this workspace's record wrote the file, or was running (a mutating act that
   could write there) when its ctime was set (journal/writers.py): a human wrote it between
   sessions, or before the first.

Otherwise the session does not start, and says which call wrote the file and how a human
puts it in force. This is the record's side of the boundary; the kernel's side keeps acts
from writing the policy in force and the folders leading to it while a session runs
(execute/sandbox, pins).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..journal import find_writer, listing
from ..policy import TrustError, file_digest, trust_folder, trusted

if TYPE_CHECKING:
    from ..core import Layout
    from ..policy import Policy
    from ..supervisor import Supervisor


def opening(
    policy: Policy, layout: Layout, implicit: bool, supervisor: Supervisor | None
) -> str | None:
    """Why a session opening in `layout` may not put `policy` in force: checked for a new
    session, and for a policy named for one it continues (a policy merely found for a session
    that goes on does not replace the one it recorded: continuing.recorded_in_force)."""
    journal = layout.journal
    if implicit and journal.is_file() and journal.stat().st_size:
        return None
    extra = supervisor.files if supervisor is not None else ()
    return refusal(policy, layout.workspace, extra)


def policy_files(policy: Policy, extra: tuple[Path, ...] = ()) -> list[Path]:
    """The files a policy puts in force: itself, its allowed_signers files, `extra`."""
    if policy.source.startswith("preset:"):
        return list(extra)
    named = [Path(policy.source), *(Path(path) for path in policy.signer_files())]
    return list(dict.fromkeys((*named, *extra)))


def refusal(policy: Policy, workspace: Path, extra: tuple[Path, ...] = ()) -> str | None:
    """Why `policy` (with `extra` files it names) may not be put in force in `workspace`:
    one line per file an act could have written; None when every file may."""
    files = policy_files(policy, extra)
    if not files:
        return None
    known = _recorded(workspace)
    folder = trust_folder(create=False)
    problems = []
    for file in files:
        problem = _problem(file, workspace, known, folder)
        if problem is not None:
            problems.append(problem)
    return "\n".join(problems) or None


def _problem(file: Path, workspace: Path, known: set[str], folder: Path | None) -> str | None:
    real = os.path.realpath(file)
    try:
        digest = file_digest(Path(real))
        ctime = os.stat(real).st_ctime
    except (TrustError, OSError):
        return None  # what cannot be read is refused where it is loaded, with its reason
    if digest in known:
        return None
    entry = trusted(real, digest, folder)
    if entry is not None and not _written_by_act(Path(entry.location), workspace):
        return None
    writer = find_writer(workspace, real, ctime)
    if writer is None:
        return None
    return (
        f"{file}: not put in force: {writer.describe()}, so the agent could have written "
        f"it. Read it; if it is what you want, run `epistemic policy trust {file}` and start "
        "again."
    )


def _written_by_act(location: Path, workspace: Path) -> bool:
    """Whether a trust entry's file changed while an act of this workspace could write it."""
    try:
        ctime = os.stat(location).st_ctime
    except OSError:
        return True
    return find_writer(workspace, str(location), ctime) is not None


def _recorded(workspace: Path) -> set[str]:
    """The SHA-256 of every policy file and allowed_signers file a session of this workspace
    was started under (from the headers: the catalog reads only their first lines)."""
    found: set[str] = set()
    for entry in listing(workspace):
        policy = entry.header.get("policy")
        if not isinstance(policy, dict):
            continue
        source, digest = policy.get("source"), policy.get("sha256")
        if isinstance(source, str) and not source.startswith("preset:") and digest:
            found.add(str(digest))
        signers = policy.get("signers")
        if isinstance(signers, dict):
            found.update(str(value) for value in signers.values() if isinstance(value, str))
    return found
