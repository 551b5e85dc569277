"""Commits that point back to the record: `epistemic git-hook install` (a prepare-commit-msg
hook adding `Epistemic-Session:`, `Epistemic-Calls:` and `Epistemic-Head:` trailers) and
`epistemic trace --commit REV` (from those trailers to the calls, checked against the
journal). docs/traceability.md says what the hook is and is not: trailers are claims, which
`trace --commit` checks; the hook is a convenience, never a boundary.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import GitTimeout, UsageError, read_regular, run_git
from ..session import CHANGES_ENV, HOOK, MARK, parse_trailers
from .options import workspace_option

if TYPE_CHECKING:
    import argparse


def define_git_hook(p: argparse.ArgumentParser) -> None:
    p.description = (
        "`install` writes a prepare-commit-msg hook into the workspace's git "
        "repository: each commit then gets the trailers Epistemic-Session (the session), "
        "Epistemic-Calls (the calls whose changes it contains: calls that changed a staged "
        "file and that no earlier commit names) and Epistemic-Head (the journal's head). "
        "`trailers` is what the hook runs. Exit 2 when the folder is not a git work tree, or "
        "another hook is there (unless --force)."
    )
    hooks = p.add_subparsers(dest="hook_command", metavar="COMMAND", required=True)
    q = hooks.add_parser("install", help="write the prepare-commit-msg hook")
    workspace_option(q)
    q.add_argument("--force", action="store_true", help="replace a hook that is not this one")
    q.set_defaults(handler=_cmd_install)
    q = hooks.add_parser("trailers", help="add the trailers to a commit message file (the hook)")
    workspace_option(q)
    q.add_argument("message", metavar="MSGFILE", help="the commit message file git gives")
    q.add_argument("source", nargs="?", default="", help="git's commit source (ignored)")
    q.add_argument("sha", nargs="?", default="", help="git's commit (ignored)")
    q.set_defaults(handler=_cmd_trailers)


def git(directory: Path, *args: str, check: bool = True) -> str:
    """Run git in `directory` (identity.run_git); a failure is a usage error when `check`."""
    try:
        done = run_git(directory, *args)
    except GitTimeout as error:
        raise UsageError(str(error)) from None
    if done is None:
        raise UsageError("git could not run")
    if check and done.returncode != 0:
        raise UsageError(f"git {args[0]}: {done.stderr.strip() or 'failed'}")
    return done.stdout


def _cmd_install(args: argparse.Namespace) -> int:
    directory = Path(args.directory).resolve()
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory")
    inside = git(directory, "rev-parse", "--is-inside-work-tree", check=False).strip()
    if inside != "true":
        raise UsageError(f"{directory} is not a git work tree (run `git init` first)")
    hooks = Path(git(directory, "rev-parse", "--git-path", "hooks").strip())
    hook = hooks if hooks.is_absolute() else directory / hooks
    target = hook / HOOK
    if target.exists() and MARK not in _head(target) and not args.force:
        raise UsageError(f"{target} exists and is not this hook: give --force to replace it")
    hook.mkdir(parents=True, exist_ok=True)
    program = f"'{sys.executable}' -m epistemic_agent.cli git-hook trailers"
    script = (
        f"#!/bin/sh\n{MARK}: Epistemic-* trailers (`epistemic git-hook install`)\n"
        f'{program} "$@" || echo "epistemic: no Epistemic-* trailers added" >&2\nexit 0\n'
    )
    target.write_text(script, encoding="utf-8")
    target.chmod(0o755)
    print(f"installed {target}")
    return 0


def _head(path: Path) -> str:
    try:
        return read_regular(path, 512, whole=False).decode("utf-8", "replace")
    except OSError:
        return ""


def _cmd_trailers(args: argparse.Namespace) -> int:
    directory = Path(git(Path(args.directory), "rev-parse", "--show-toplevel").strip())
    found = trailers_for(directory)
    if found is None:
        return 0  # no session here: the commit is nobody's business of ours
    command = ["interpret-trailers", "--in-place", "--if-exists", "replace"]
    for key, value in found.items():
        command += ["--trailer", f"{key}: {value}"]
    git(directory, *command, args.message)
    return 0


def trailers_for(directory: Path) -> dict[str, str] | None:
    """The trailers for what is staged now: from the journal if it can be read (a human's
    commit), else from what the session left for the act making the commit."""
    staged = [p for p in git(directory, "diff", "--cached", "--name-only", "-z").split("\0") if p]
    named = named_calls(directory)
    left = os.environ.get(CHANGES_ENV)
    from ..journal import ReadError, journal_of, load
    from ..reports import build

    try:
        loaded = load(journal_of(directory), verify=False)
    except ReadError:
        loaded = None
    if loaded is not None and loaded.header.get("session"):
        trace = build(loaded)
        changed = {path: [c.seq for c in trace.of_file(path)] for path in trace.files()}
        session, head = trace.session_id, journal_head(loaded.journal)
    elif left:
        found = _left_for_the_act(Path(left))
        if found is None:
            return None
        session, head, changed = found
    else:
        return None
    calls = sorted(
        {seq for path in staged for seq in changed.get(path, [])} - named.get(session, set())
    )
    return {
        "Epistemic-Session": session,
        "Epistemic-Calls": ", ".join(map(str, calls)) or "none",
        "Epistemic-Head": head,
    }


def _left_for_the_act(path: Path) -> tuple[str, str, dict[str, list[int]]] | None:
    """What the session left for a commit inside an act (the act could have changed it: only
    hex ids and integer calls are taken, so no text of its own reaches the message)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        session, head, changes = data["session"], data["head"], data["changes"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    hexes = re.compile(r"[0-9a-f]{32}|[0-9a-f]{64}")
    if not (isinstance(session, str) and hexes.fullmatch(session)):
        return None
    if not (isinstance(head, str) and hexes.fullmatch(head)) or not isinstance(changes, dict):
        return None
    calls = {
        str(p): [n for n in seqs if isinstance(n, int) and not isinstance(n, bool)]
        for p, seqs in changes.items()
        if isinstance(seqs, list)
    }
    return session, head, calls


def named_calls(directory: Path) -> dict[str, set[int]]:
    """The calls earlier commits' trailers name, by session (none when there is no HEAD)."""
    if not git(directory, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip():
        return {}
    log = git(directory, "log", "--format=%B%x00", check=False)
    found: dict[str, set[int]] = {}
    for message in log.split("\0"):
        parsed = parse_trailers(message)
        if "Epistemic-Session" in parsed:
            found.setdefault(parsed["Epistemic-Session"], set()).update(calls_of(parsed))
    return found


def calls_of(parsed: dict[str, str]) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", parsed.get("Epistemic-Calls", ""))]


def journal_head(journal: Path) -> str:
    """The hash of the journal's last complete line (what head.json and verify print)."""
    from ..journal import GENESIS, line_hash

    head = GENESIS
    with journal.open("rb") as handle:
        for line in handle:
            if line.endswith(b"\n"):
                head = line_hash(line[:-1])
    return head


def line_of_head(journal: Path, head: str) -> int | None:
    from ..journal import line_hash

    with journal.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            if line.endswith(b"\n") and line_hash(line[:-1]) == head:
                return number
    return None
