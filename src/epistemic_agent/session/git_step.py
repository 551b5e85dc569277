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
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import GitTimeout, atomic_write, read_regular, run_git
from ..journal import ReadError, load
from ..reports import build

if TYPE_CHECKING:
    from typing import Any

MARK = "# epistemic-agent prepare-commit-msg hook"
HOOK = "prepare-commit-msg"
TRAILER = re.compile(r"^(Epistemic-(?:Session|Calls|Head)):[ \t]*(\S.*?)\s*$", re.MULTILINE)
#: Where a session leaves, for a commit made inside an act, what the hook cannot read there.
CHANGES_ENV = "EPISTEMIC_CHANGES"
SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
MOST_COMMITS = 50
GIT_TIMEOUT = 10.0  # seconds, for all the git processes that read one act's commits
#: The most the session reads of `.git`'s files itself: HEAD and a loose ref are one line;
#: packed-refs holds one line per ref (a million refs is about 60 MiB).
REF_MAX = 4096
PACKED_REFS_MAX = 64 << 20


def is_installed(workspace: Path) -> bool:
    """Whether the trailers hook is in the workspace's `.git/hooks` (git_hook.py)."""
    try:
        found = read_regular(workspace / ".git" / "hooks" / HOOK, 512, whole=False)
    except OSError:
        return False
    return MARK.encode() in found


def parse_trailers(message: str) -> dict[str, str]:
    """The Epistemic-* trailers of a commit message (the last of each key wins)."""
    return dict(TRAILER.findall(message))


def head_commit(workspace: Path) -> tuple[str | None, str | None]:
    """The commit HEAD names, read from `.git` as files (no git process: cheap per call):
    `(commit, None)`; `(None, None)` when there is none (no repository, an unborn branch);
    `(None, why)` when `.git` holds what the session will not read (a FIFO, a socket, a
    symlink loop, a file over its size), each read bounded (saferead.py)."""
    git = workspace / ".git"
    where = git / "HEAD"
    try:
        head = _ref_text(where, REF_MAX)
        if head is None or SHA.fullmatch(head):
            return head, None
        ref = head[5:]
        if not head.startswith("ref: refs/") or ".." in ref.split("/"):
            return None, None
        where = git / ref
        found = _ref_text(where, REF_MAX, follow=False)
        if found is not None:
            return (found if SHA.fullmatch(found) else None), None
        where = git / "packed-refs"
        for line in (_ref_text(where, PACKED_REFS_MAX) or "").splitlines():
            parts = line.split(" ")
            if len(parts) == 2 and parts[1] == ref and SHA.fullmatch(parts[0]):
                return parts[0], None
    except OSError as error:
        return None, f"{where.relative_to(workspace)}: {error.strerror or error}"
    return None, None


def _ref_text(path: Path, limit: int, follow: bool = True) -> str | None:
    """A file of `.git` as text, stripped; None when there is none."""
    try:
        data = read_regular(path, limit, follow=follow)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return data.decode("ascii", "replace").strip()


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
    target = scratch / "epistemic-changes.json"  # acts write scratch: never written through
    atomic_write(target, json.dumps(data).encode("utf-8"))
    return {CHANGES_ENV: str(target)}


def commits_made(
    workspace: Path, before: str | None, after: str, session: str
) -> list[dict[str, Any]]:
    """The commits from `before` to `after` (at most MOST_COMMITS), each with whether it
    carries this session's trailers. Runs git; the caller confines it. GitTimeout when git
    did not answer in time."""
    span = [after] if before is None else [f"{before}..{after}"]
    deadline = time.monotonic() + GIT_TIMEOUT
    listed = _git(workspace, deadline, "rev-list", f"--max-count={MOST_COMMITS}", *span)
    found = []
    for sha in listed.split():
        if not SHA.fullmatch(sha):
            continue
        body = _git(workspace, deadline, "cat-file", "commit", sha).split("\n\n", 1)[-1]
        trailers = parse_trailers(body)
        found.append({"commit": sha, "trailers": trailers.get("Epistemic-Session") == session})
    return found


def _git(workspace: Path, deadline: float, *args: str) -> str:
    """git's output, or nothing when it failed (a commit it cannot read is not flagged);
    GitTimeout when the time for all of them (`deadline`, monotonic) runs out."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise GitTimeout(f"git {args[0]}: the {GIT_TIMEOUT:g} s for reading the commits ran out")
    done = run_git(workspace, *args, timeout=left)
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
