"""A session's part in commits its acts make (git_hook.py, docs/traceability.md).

Inside an act the journal cannot be read (`.epistemic/` is hidden), so for a workspace with
the hook installed the session leaves in its scratch folder what the hook needs: the session,
the journal's head and which calls changed which paths (`EPISTEMIC_CHANGES` names the file).
The act can change that file: trailers are claims, and `trace --commit` checks them against
the journal. After each mutating shell act the session looks at the branch: commits the act
made are listed in its outcome (`commits`), and one without this session's trailers raises
the flag `commit-without-trailers`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.identity import run_git
from ..journal.sessions import ReadError, load
from ..reports.trace.model import build

if TYPE_CHECKING:
    from typing import Any

MARK = "# epistemic-agent prepare-commit-msg hook"
HOOK = "prepare-commit-msg"
TRAILER = re.compile(r"^(Epistemic-(?:Session|Calls|Head)):[ \t]*(\S.*?)\s*$", re.MULTILINE)
#: Where a session leaves, for a commit made inside an act, what the hook cannot read there.
CHANGES_ENV = "EPISTEMIC_CHANGES"
SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
MOST_COMMITS = 50


def is_installed(workspace: Path) -> bool:
    """Whether the trailers hook is in the workspace's `.git/hooks` (git_hook.py)."""
    try:
        with (workspace / ".git" / "hooks" / HOOK).open("rb") as handle:
            return MARK.encode() in handle.read(512)
    except OSError:
        return False


def parse_trailers(message: str) -> dict[str, str]:
    """The Epistemic-* trailers of a commit message (the last of each key wins)."""
    return dict(TRAILER.findall(message))


def head_commit(workspace: Path) -> str | None:
    """The commit HEAD names, read from `.git` as files (no git process: cheap per call)."""
    git = workspace / ".git"
    try:
        head = (git / "HEAD").read_text(encoding="ascii", errors="replace").strip()
        if SHA.fullmatch(head):
            return head
        if not head.startswith("ref: refs/"):
            return None
        ref = head[5:]
        loose = git / ref
        if loose.is_file() and not loose.is_symlink():
            found = loose.read_text(encoding="ascii", errors="replace").strip()
            return found if SHA.fullmatch(found) else None
        for line in (
            (git / "packed-refs").read_text(encoding="ascii", errors="replace").splitlines()
        ):
            parts = line.split(" ")
            if len(parts) == 2 and parts[1] == ref and SHA.fullmatch(parts[0]):
                return parts[0]
    except OSError:
        return None
    return None


def changes_file(workspace: Path, journal: Path, head: str, scratch: Path) -> dict[str, str]:
    """For a workspace with the hook: the file the hook reads inside an act, and its env."""
    if not is_installed(workspace):
        return {}

    try:
        trace = build(load(journal, verify=False), evidence=False)
    except ReadError:
        return {}
    data = {
        "session": trace.session_id,
        "head": head,
        "changes": {path: [c.seq for c in trace.of_file(path)] for path in trace.files()},
    }
    target = scratch / "epistemic-changes.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    return {CHANGES_ENV: str(target)}


def commits_made(
    workspace: Path, before: str | None, after: str, session: str
) -> list[dict[str, Any]]:
    """The commits from `before` to `after` (at most MOST_COMMITS), each with whether it
    carries this session's trailers. Runs git; the caller confines it."""
    span = [after] if before is None else [f"{before}..{after}"]
    listed = _git(workspace, "rev-list", f"--max-count={MOST_COMMITS}", *span)
    found = []
    for sha in listed.split():
        if not SHA.fullmatch(sha):
            continue
        body = _git(workspace, "cat-file", "commit", sha).split("\n\n", 1)[-1]
        trailers = parse_trailers(body)
        found.append({"commit": sha, "trailers": trailers.get("Epistemic-Session") == session})
    return found


def _git(workspace: Path, *args: str) -> str:
    """git's output, or nothing when it failed (a commit it cannot read is not flagged)."""
    done = run_git(workspace, *args, timeout=10)
    return done.stdout if done is not None and done.returncode == 0 else ""


def commit_flag(commits: list[dict[str, Any]]) -> dict[str, str] | None:
    missing = [c["commit"][:12] for c in commits if not c["trailers"]]
    if not missing:
        return None
    return {
        "flag": "commit-without-trailers",
        "message": f"the call made commit(s) {', '.join(missing)} without this session's "
        "Epistemic-* trailers (`epistemic git-hook install` adds them)",
    }
