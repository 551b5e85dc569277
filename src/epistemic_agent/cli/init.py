"""`epistemic init CLIENT`: write (or print) a client's setup for `epistemic mcp`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import UsageError, one_line

if TYPE_CHECKING:
    import argparse

    from .client_setup import FilePlan, Setup
    from .config_merge import Merged


def define_init(p: argparse.ArgumentParser) -> None:
    from .client_setup import CLIENTS

    p.description = (
        "Write the setup that makes CLIENT run every command and file change "
        "through `epistemic mcp -C DIR`, headless included: the MCP entry, the settings that "
        "take the client's own shell and file tools away, its timeouts, the instructions "
        "file (CLAUDE.md or AGENTS.md) and a .gitignore for the record. Existing files are "
        "merged into, keeping everything else; a value of yours that would change needs "
        "--force. Exit 2 on bad input, with nothing written."
    )
    p.add_argument(
        "client", choices=CLIENTS, metavar="CLIENT", help="the client: " + ", ".join(CLIENTS)
    )
    p.add_argument(
        "-C",
        dest="directory",
        default=".",
        metavar="DIR",
        help="the workspace the client works in (default: the current directory)",
    )
    p.add_argument(
        "--print",
        dest="dry_run",
        action="store_true",
        help="print each file as init would write it, and write nothing",
    )
    p.add_argument("--force", action="store_true", help="replace values of yours that differ")
    p.set_defaults(handler=_cmd_init)


def epistemic_command() -> list[str]:
    """How to start this `epistemic`, by absolute path: no PATH lookup is needed."""
    import shutil

    running = Path(sys.argv[0])
    if running.name == "epistemic" and running.is_file():
        return [str(running.absolute())]
    beside = Path(sys.executable).with_name("epistemic")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("epistemic")
    if found is not None:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "epistemic_agent.cli"]


def _cmd_init(args: argparse.Namespace) -> int:
    from ..session import workspace_policy
    from .client_setup import plan

    directory = Path(args.directory)
    if not directory.is_dir():
        raise UsageError(f"workspace {directory} is not a directory")
    workspace = directory.resolve()
    policy = workspace_policy(workspace)  # a bad epistemic.toml stops here (exit 2)
    from ..approvals import DEFAULT_APPROVAL_TIMEOUT

    waits = policy.approval_timeout or DEFAULT_APPROVAL_TIMEOUT
    setup = plan(args.client, workspace, epistemic_command(), waits)
    merged = [(item, _merge(workspace, item, args.force)) for item in setup.files]
    conflicts = [f"{item.path}: {c}" for item, result in merged for c in result.conflicts]
    if conflicts:
        for line in conflicts:
            print(f"epistemic: {one_line(line)}", file=sys.stderr)
        print("epistemic: nothing was written", file=sys.stderr)
        return 2
    states = [_state(workspace, item, result) for item, result in merged]
    if args.dry_run:
        _print_files(merged, states)
        return 0
    for item, result in merged:
        if result.notes:
            _write(workspace / item.path, result.text)
    _report(workspace, setup, merged, states)
    return 0


def _read(workspace: Path, relative: str) -> str | None:
    path = workspace / relative
    for folder in list(path.relative_to(workspace).parents)[-2::-1]:  # .claude, then deeper
        if (workspace / folder).exists() and not (workspace / folder).is_dir():
            raise UsageError(f"{workspace / folder} is not a directory; nothing was written")
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_file():
        raise UsageError(f"{path} is not a regular file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text; nothing was written") from None


def _merge(workspace: Path, item: FilePlan, force: bool) -> Merged:
    from .config_merge import MergeError, merge_json, merge_lines, merge_section, merge_toml

    before = _read(workspace, item.path)
    try:
        if item.kind == "json":
            return merge_json(before, list(item.wants), force)
        if item.kind == "toml":
            return merge_toml(before, list(item.wants), force, item.header)
        if item.kind == "section":
            return merge_section(before, item.body, force)
        from .client_setup import GITIGNORE, GITIGNORE_COMMENT

        return merge_lines(before, GITIGNORE, GITIGNORE_COMMENT)
    except MergeError as error:
        raise UsageError(f"{workspace / item.path}: {error}; nothing was written") from None


def _write(path: Path, text: str) -> None:
    from ..core import atomic_write

    target = path.resolve() if path.is_symlink() else path
    mode = target.stat().st_mode & 0o7777 if target.exists() else None
    atomic_write(target, text.encode("utf-8"), mode)


def _state(workspace: Path, item: FilePlan, result: Merged) -> str:
    if not (workspace / item.path).exists():
        return "new"
    return "merged" if result.notes else "unchanged"


def _print_files(merged: list[tuple[FilePlan, Merged]], states: list[str]) -> None:
    """Each file as it would be written, under a `==> PATH (STATE) <==` line."""
    for number, ((item, result), state) in enumerate(zip(merged, states, strict=True)):
        if number:
            print()
        print(f"==> {item.path} ({state}) <==")
        print(_for_terminal(result.text) if sys.stdout.isatty() else result.text, end="")


def _for_terminal(text: str) -> str:
    """A file's text with its control characters escaped (piped, it is printed exactly)."""
    return "".join(c if c in "\t\n" or c.isprintable() else repr(c)[1:-1] for c in text)


def _report(
    workspace: Path, setup: Setup, merged: list[tuple[FilePlan, Merged]], states: list[str]
) -> None:
    print(f"epistemic init {setup.client}: {workspace}")
    verbs = {"new": "created", "merged": "merged into", "unchanged": "unchanged"}
    for (item, result), state in zip(merged, states, strict=True):
        print(f"  {verbs[state]} {item.path}")
        for note in result.notes:  # values from the user's files: escaped
            print(f"      {one_line(note)}")
    for note in setup.notes:
        print(f"Then {note}.")
    if setup.headless:
        print("Run it headless:")
        for line in setup.headless:
            print(f"  {line}")
