"""The `epistemic` command line. Heavy modules are imported inside each command, not here."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import UsageError
from ..policy.rules import PolicyError
from .calls import register_exec, register_tool, silence
from .exits import EXIT_PIPE, EXIT_RECORD, EXIT_USAGE

if TYPE_CHECKING:
    from typing import Any


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # journaled text may hold lone surrogates
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    words = sys.argv[1:] if argv is None else list(argv)
    if words and not words[0].startswith("-") and words[0] not in _COMMANDS:
        from ..core.suggest import did_you_mean

        hint = did_you_mean(words[0], _COMMANDS) or " See `epistemic --help`."
        print(f"epistemic: {words[0]!r} is not a command.{hint}", file=sys.stderr)
        return EXIT_USAGE
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(words)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        if getattr(args, "chdir", None) is not None:
            _enter(args.chdir)
        _find_workspace(args)
        return handler(args)
    except UsageError as error:
        print(f"epistemic: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (
        FileNotFoundError,
        FileExistsError,
        NotADirectoryError,
        IsADirectoryError,
        PermissionError,
    ) as error:
        print(f"epistemic: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("epistemic: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `epistemic log | head`: the reader left; not an error of ours
        silence(sys.stdout)
        return EXIT_PIPE
    except OSError as error:  # the record cannot be written: a file where a folder should be...
        print(f"epistemic: {error}", file=sys.stderr)
        return EXIT_RECORD
    except Exception as error:  # journal and policy errors: clear lines, never a traceback
        from ..journal.log import JournalError

        if isinstance(error, JournalError):
            hint = _salvage_hint(error.journal) if error.journal is not None else ""
            print(f"epistemic: {error}{hint}", file=sys.stderr)  # one line
            return EXIT_RECORD
        if isinstance(error, PolicyError):
            for line in error.errors or [str(error)]:
                print(f"epistemic: {line}", file=sys.stderr)
            return EXIT_USAGE
        raise


def _find_workspace(args: argparse.Namespace) -> None:
    """`-C DIR` names the workspace DIR is in (core/layout.py `discover`), unless `--here`;
    said on stderr when that is not DIR itself."""
    given = getattr(args, "directory", None)
    if not isinstance(given, str) or getattr(args, "here", False) or not os.path.isdir(given):
        return
    from ..core.layout import discover

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


def _salvage_hint(journal: Path) -> str:
    """What to run when the journal is damaged: see what verifies, then continue after it."""
    import shlex

    folder = journal.parent
    workspace = shlex.quote(str(folder.parent if folder.name == ".epistemic" else folder))
    return (
        f"; to continue after its last good line: `epistemic verify --salvage {workspace}` "
        "(the damaged journal and its evidence are kept under .epistemic/damaged/)"
    )


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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; given the command about to run, only its group is built (start-up cost)."""
    parser = _Parser(
        prog="epistemic",
        description="Gated, justified, journaled tool calls: every act says what it is and why.",
    )
    from ..core.version import __version__

    parser.add_argument("--version", action="version", version=f"epistemic-agent {__version__}")
    # an explicit prog spares argparse a help formatter (and its imports) at start-up
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", prog="epistemic")
    groups = (
        [_COMMANDS[command]] if command in _COMMANDS else list(dict.fromkeys(_COMMANDS.values()))
    )
    for register in groups:
        register(sub)
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


def _register_readers(sub: Any) -> None:
    from .readers import register

    register(sub)


def _register_effects(sub: Any) -> None:
    from .effects import register

    register(sub)


def _register_policy(sub: Any) -> None:
    from .policy import register

    register(sub)


def _register_approval(sub: Any) -> None:
    from .approval import register

    register(sub)


def _register_stats(sub: Any) -> None:
    from .stats import register

    register(sub)


def _register_views(sub: Any) -> None:
    from .views import register

    register(sub)


def _register_bundle(sub: Any) -> None:
    from .bundle import register

    register(sub)


def _register_bench(sub: Any) -> None:
    from .bench import register

    register(sub)


def _register_mcp(sub: Any) -> None:
    from .mcp import register

    register(sub)


def _register_init(sub: Any) -> None:
    from .init import register

    register(sub)


def _register_sessions(sub: Any) -> None:
    from .sessions import register

    register(sub)


def _register_trace(sub: Any) -> None:
    from .trace import register

    register(sub)


def _register_agent(sub: Any) -> None:
    from .agent import register

    register(sub)


#: Each command and the function that registers its group (in `--help` order).
_COMMANDS: dict[str, Callable[[Any], None]] = {
    "exec": register_exec,
    "tool": register_tool,
    "run": _register_agent,
    "repl": _register_agent,
    "demo": _register_agent,
    "models": _register_agent,
    "sessions": _register_sessions,
    "show": _register_sessions,
    "log": _register_readers,
    "report": _register_readers,
    "verify": _register_readers,
    "seal": _register_readers,
    "types": _register_readers,
    "rules": _register_readers,
    "classify": _register_effects,
    "doctor": _register_effects,
    "policy": _register_policy,
    "stats": _register_stats,
    "diff": _register_stats,
    "plot": _register_views,
    "html": _register_views,
    "trace": _register_trace,
    "git-hook": _register_trace,
    "lint": _register_bundle,
    "export": _register_bundle,
    "mcp": _register_mcp,
    "init": _register_init,
    "bench": _register_bench,
    "pending": _register_approval,
    "approve": _register_approval,
    "deny": _register_approval,
}
