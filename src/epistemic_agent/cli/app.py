"""The `epistemic` command line. Heavy modules are imported inside each command, not here."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import EXIT_RECORD, EXIT_USAGE, EpistemicError, UsageError
from .commands import COMMANDS, define
from .exits import EXIT_PIPE, silence

if TYPE_CHECKING:
    from typing import Any


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # journaled text may hold lone surrogates
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    words = sys.argv[1:] if argv is None else list(argv)
    if words and not words[0].startswith("-") and words[0] not in COMMANDS:
        from ..core import did_you_mean

        hint = did_you_mean(words[0], COMMANDS) or " See `epistemic --help`."
        print(f"epistemic: {words[0]!r} is not a command.{hint}", file=sys.stderr)
        return EXIT_USAGE
    parser = build_parser(words[0] if words else "", every=False)
    args = parser.parse_args(words)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        if getattr(args, "chdir", None) is not None:
            _enter(args.chdir)
        _find_workspace(args)
        return handler(args)
    except KeyboardInterrupt:
        print("epistemic: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `epistemic log | head`: the reader left; not an error of ours
        silence(sys.stdout)
        return EXIT_PIPE
    except (EpistemicError, OSError) as error:  # clear lines, never a traceback
        lines, status = _diagnosis(error)
        for line in lines:
            print(f"epistemic: {line}", file=sys.stderr)
        return status


#: OSErrors about a path the user named: bad input. Any other means the record cannot be written
#: (a file where a folder should be, a full disk...).
_BAD_PATH = (
    FileNotFoundError,
    FileExistsError,
    NotADirectoryError,
    IsADirectoryError,
    PermissionError,
)


def _diagnosis(error: EpistemicError | OSError) -> tuple[list[str], int]:
    """What the command line says about an error a command ended in, and its exit status."""
    if isinstance(error, EpistemicError):
        return error.lines(), error.exit_status
    return [str(error)], EXIT_USAGE if isinstance(error, _BAD_PATH) else EXIT_RECORD


def _find_workspace(args: argparse.Namespace) -> None:
    """`-C DIR` names the workspace DIR is in (core/layout.py `discover`), unless `--here`;
    said on stderr when that is not DIR itself."""
    given = getattr(args, "directory", None)
    if not isinstance(given, str) or getattr(args, "here", False) or not os.path.isdir(given):
        return
    from ..core import discover

    found, why = discover(Path(given))
    if why is not None:
        print(f"epistemic: workspace {found} ({why}; --here for {given} itself)", file=sys.stderr)
        args.directory = str(found)


def _enter(folder: str) -> None:
    """`-C DIR` on a command whose workspace is a path argument: run as if started in DIR."""
    try:
        os.chdir(folder)
    except OSError as error:
        raise UsageError(f"-C {folder}: {error.strerror or error}") from None


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, sized without importing shutil (it runs at every start-up)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, width or _columns() - 2)


def _columns() -> int:
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def build_parser(command: str | None = None, *, every: bool = True) -> argparse.ArgumentParser:
    """The parser. Given the command about to run, only that command is added (start-up
    cost); else every command, each in full, or (`every` False: `epistemic --help`) by its
    summary alone, its module not imported."""
    parser = _Parser(
        prog="epistemic",
        description="Gated, justified, journaled tool calls: every act says what it is and why.",
    )
    from ..core import __version__

    parser.add_argument("--version", action="version", version=f"epistemic-agent {__version__}")
    # an explicit prog spares argparse a help formatter (and its imports) at start-up
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", prog="epistemic")
    for name, entry in COMMANDS.items():
        if command in COMMANDS and name != command:
            continue
        made = sub.add_parser(name, help=entry.summary)
        if name == command or every:
            define(name, made)
    for child in _children(parser):
        _name_the_workspace(child)
    parser.set_defaults(run_cli=main)  # the REPL's slash commands run the CLI in-process
    return parser


def _children(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every subcommand's parser, nested ones (`policy check`) included."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += [child, *_children(child)]
    return found


def _name_the_workspace(parser: argparse.ArgumentParser) -> None:
    """One way to name the workspace for every command: `-C DIR`. A command that has no `-C`
    of its own (its workspace is a path argument, default `.`) runs as if started in DIR."""
    if "-C" in parser._option_string_actions or any(
        isinstance(action, argparse._SubParsersAction) for action in parser._actions
    ):
        return
    parser.add_argument(
        "-C",
        dest="chdir",
        metavar="DIR",
        help="run as if started in DIR (paths, the default `.` among them, are read from there)",
    )
