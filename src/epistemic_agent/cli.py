"""The `epistemic` command line. Heavy modules are imported inside each command, not here."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .cliargs import (
    chosen_policy,
    command_option,
    command_text,
    command_words,
    policy_options,
    session_choice,
    session_option,
    supervisor_option,
    ticket_of,
    ticket_option,
    workspace_option,
)
from .errors import UsageError
from .policy import PolicyError

if TYPE_CHECKING:
    from typing import Any

EXIT_REJECTED = 2
EXIT_USAGE = 2
EXIT_RECORD = 74  # the record cannot be written (a broken or unreadable journal)
EXIT_TIMEOUT = 124
EXIT_PIPE = 141  # what a shell reports for a reader that went away (128 + SIGPIPE)


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # journaled text may hold lone surrogates
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    words = sys.argv[1:] if argv is None else list(argv)
    if words and not words[0].startswith("-") and words[0] not in _COMMANDS:
        from .suggest import did_you_mean

        hint = did_you_mean(words[0], _COMMANDS) or " See `epistemic --help`."
        print(f"epistemic: {words[0]!r} is not a command.{hint}", file=sys.stderr)
        return EXIT_USAGE
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(words)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        if getattr(args, "chdir", None) is not None:
            _enter(args.chdir)
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
        _silence(sys.stdout)
        return EXIT_PIPE
    except OSError as error:  # the record cannot be written: a file where a folder should be...
        print(f"epistemic: {error}", file=sys.stderr)
        return EXIT_RECORD
    except Exception as error:  # journal and policy errors: clear lines, never a traceback
        from .journal import JournalError

        if isinstance(error, JournalError):
            hint = _salvage_hint(error.journal) if error.journal is not None else ""
            print(f"epistemic: {error}{hint}", file=sys.stderr)  # one line
            return EXIT_RECORD
        if isinstance(error, PolicyError):
            for line in error.errors or [str(error)]:
                print(f"epistemic: {line}", file=sys.stderr)
            return EXIT_USAGE
        raise


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


def _english_only() -> None:
    """argparse looks up every message it builds with gettext, and the first lookup imports
    locale and searches the disk for catalogues (about 10 ms of every `epistemic exec` here).
    CPython ships no argparse translations and our own messages are English: skip it."""
    setattr(argparse, "_", str)  # noqa: B010 - typeshed does not declare argparse._
    setattr(argparse, "ngettext", _plural)  # noqa: B010


def _plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; given the command about to run, only its group is built (start-up cost)."""
    _english_only()
    parser = _Parser(
        prog="epistemic",
        description="Gated, justified, journaled tool calls: every act says what it is and why.",
    )
    from . import __version__

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


def _register_exec(sub: Any) -> None:
    p = sub.add_parser(
        "exec",
        help="run one gated shell act",
        description="Run one shell command through the gate, policy, journal and report. "
        "Exits with the command's status; 2 when rejected or denied; 124 on timeout.",
    )
    p.add_argument("--type", dest="act", help="the act type (see `epistemic types`)")
    p.add_argument("--reason", help="why this act, now")
    workspace_option(p)
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds before the command's process group is killed (default 120)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    policy_options(p)
    session_option(p, writer=True)
    supervisor_option(p)
    ticket_option(p)
    command_option(p)
    p.set_defaults(handler=_cmd_exec)


def _register_tool(sub: Any) -> None:
    p = sub.add_parser(
        "tool",
        help="call any tool with raw JSON arguments",
        description="Call bash, read_file, write_file or str_replace_edit with "
        "the JSON arguments a model would send.",
    )
    p.add_argument("name", help="the tool name")
    p.add_argument("--args", required=True, metavar="JSON", help="the arguments object")
    workspace_option(p)
    p.add_argument("--timeout", type=float, metavar="S")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    policy_options(p)
    session_option(p, writer=True)
    supervisor_option(p)
    p.set_defaults(handler=_cmd_tool)


def _register_readers(sub: Any) -> None:
    p = sub.add_parser("log", help="the session's calls, one merged record each")
    p.add_argument("dir", nargs="?", default=".", metavar="DIR")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    session_option(p)
    p.set_defaults(handler=_cmd_log)
    p = sub.add_parser("report", help="re-render RATIONALE.md from the journal")
    p.add_argument("dir", nargs="?", default=".", metavar="DIR")
    session_option(p)
    p.set_defaults(handler=_cmd_report)
    from .cli_verify import register

    register(sub)  # verify and seal
    p = sub.add_parser("types", help="the act vocabulary")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_cmd_types)
    p = sub.add_parser("rules", help="the gate's rule ids")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_cmd_rules)


def _open_session(args: argparse.Namespace) -> Any:
    from .session import Session, Settings

    directory = Path(args.directory)
    if not directory.is_dir():
        raise UsageError(f"workspace {directory} is not a directory")
    timeout = getattr(args, "timeout", None)
    if timeout is not None and not timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    waits = getattr(args, "approval_timeout", None)
    if waits is not None and not waits > 0:
        raise UsageError("--approval-timeout must be a positive number of seconds")
    chosen = session_choice(args)
    supervisor = getattr(args, "supervisor", None)
    settings = Settings(approval_timeout=waits, session=chosen, supervisor=supervisor)
    if timeout is not None:
        settings = Settings(
            timeout=timeout, approval_timeout=waits, session=chosen, supervisor=supervisor
        )
    from .layout import moved_note
    from .providers import ProviderError

    moved = moved_note(directory)  # the workspace has a RATIONALE.md of its own
    ticket = ticket_of(args)
    header = {"ticket": ticket} if ticket is not None else {}

    try:
        session = Session(directory, settings, header, policy=chosen_policy(args))
    except ProviderError as error:  # the supervisor could not start: before anything ran
        from .cliargs import supervisor_error

        raise UsageError(supervisor_error(error)) from None
    _warn_confinement(session)
    if moved is not None:
        print(f"epistemic: note: {moved}", file=sys.stderr)
    return session


def _warn_confinement(session: Any) -> None:
    from .confine import warning

    note = warning(session.confinement)
    if note is not None:
        print(note, file=sys.stderr)


def _cmd_exec(args: argparse.Namespace) -> int:
    words = command_words(args.words)
    payload: dict[str, Any] = {}
    if words:
        payload["command"] = command_text(words)
    for key, value in (("type", args.act), ("reason", args.reason)):
        if value is not None:
            payload[key] = value
    return _run_call(args, "bash", payload)


def _cmd_tool(args: argparse.Namespace) -> int:
    from .tools import TOOL_NAMES

    if args.name not in TOOL_NAMES:  # the gate says so, whatever --args holds
        return _run_call(args, args.name, {})
    try:
        payload = json.loads(args.args)
    except (ValueError, RecursionError) as error:
        from .gate import Rejected

        rejected = Rejected(
            "args-not-object", f"--args is not valid JSON ({error}).", args.name, given=args.args
        )
        with _open_session(args) as session:
            result = session.reject(rejected)
        return _print_result(args, result, False, session.journal.position)
    return _run_call(args, args.name, payload)


def _run_call(args: argparse.Namespace, tool: str, payload: Any) -> int:
    streamed = not args.json and tool == "bash"
    sink = _stream_output if streamed else None
    with _open_session(args) as session:
        result = session.call(tool, payload, on_output=sink)
    return _print_result(args, result, streamed, session.journal.position)


def _stream_output(done: Any) -> None:
    """Copy the command's complete output to our stdout and stderr."""
    for path, stream in ((done.stdout, sys.stdout), (done.stderr, sys.stderr)):
        try:
            stream.flush()
            with open(path, "rb") as handle:
                while block := handle.read(1 << 16):
                    stream.buffer.write(block)
            stream.flush()
        except BrokenPipeError:  # the reader left (`| head`): the call still counts
            _silence(stream)
        except FileNotFoundError:  # the command deleted its own capture file
            print(
                "epistemic: the command's output was lost (it deleted the capture file)",
                file=sys.stderr,
            )


def _silence(stream: Any) -> None:
    """Point a stream whose reader went away at /dev/null, so exiting cannot fail on it."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, stream.fileno())
    os.close(devnull)


def head_line(position: Any) -> str:
    """The journal's head after a session, printed so that logs keep an anchor outside the
    workspace (`epistemic verify --expect-head`; docs/security.md)."""
    return f"epistemic: journal head {position.head} (line {position.lines})"


def _print_result(args: argparse.Namespace, result: Any, streamed: bool, position: Any) -> int:
    if args.json:
        head = {"lines": position.lines, "head": position.head}
        print(json.dumps({**result.to_json(), "journal_head": head}, ensure_ascii=False))
    else:
        _print_text(result, streamed)
        print(head_line(position), file=sys.stderr)
    if result.status in ("rejected", "denied"):
        return EXIT_REJECTED
    if result.timed_out:
        return EXIT_TIMEOUT
    if result.returncode is not None:
        code = int(result.returncode)
        return 128 - code if code < 0 else code  # killed by signal N: 128+N, as shells do
    return 0 if result.ok else 1


def _print_text(result: Any, streamed: bool) -> None:
    review = result.review
    if review is not None and review.get("verdict") != "ok":
        from .safetext import one_line

        said = review.get("verdict") or f"failed to review ({review.get('failure')})"
        print(f"epistemic: supervisor {said}: {one_line(str(review['note']))}", file=sys.stderr)
    if result.status in ("rejected", "denied"):
        from .safetext import visible

        print(visible(result.for_model()), file=sys.stderr)  # agent text: no escape codes
    elif not streamed:
        text = result.stdout if result.ok else result.outcome
        print(
            text,
            end="" if text.endswith("\n") else "\n",
            file=sys.stdout if result.ok else sys.stderr,
        )
    if result.timed_out and streamed and result.status not in ("rejected", "denied"):
        print(f"epistemic: {result.outcome}", file=sys.stderr)


def _journal_path(target: str, session: str | None = None) -> Path:
    from .catalog import find_layout

    path = Path(target)
    journal = path if path.is_file() else find_layout(path, session).journal
    if not journal.is_file():
        raise UsageError(f"no journal at {journal}")
    return journal


def _cmd_log(args: argparse.Namespace) -> int:
    from .chain_notice import announce, check_journal
    from .journal import read_numbered
    from .records import merge_calls

    journal = _journal_path(args.dir, session_choice(args))
    numbered, notes = read_numbered(journal)
    records = [record for _, record in numbered]
    views = merge_calls(records)
    if records:
        announce(check_journal(journal), numbered)  # first: what follows may not be as recorded
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if not records and journal.stat().st_size:
        raise UsageError(f"{journal} holds no journal records")
    if args.json:
        print(json.dumps([v.to_json() for v in views], ensure_ascii=False, indent=1))
        return 0
    from .tables import calls_table

    calls_table(views)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .catalog import find_layout
    from .chain_notice import announce, check_journal, exit_status, notice
    from .journal import read_numbered
    from .report import rebuild

    journal = _journal_path(args.dir, session_choice(args))
    layout = find_layout(journal)
    from .layout import moved_note

    moved = moved_note(layout.workspace)
    if moved is not None:
        print(f"epistemic: note: {moved}", file=sys.stderr)
    checked = check_journal(journal)
    numbered = read_numbered(journal)[0]
    announce(checked, numbered)  # first, and at the top of the report
    position = rebuild(layout, warning=notice(checked, numbered))
    print(f"{layout.report} re-rendered from {position.lines} journal line(s)")
    return exit_status(checked)  # a verdict: the record does not verify


def _cmd_types(args: argparse.Namespace) -> int:
    from .vocabulary import ACTS, FILE_TOOL_ACTS

    if args.json:
        print(
            json.dumps(
                {
                    "acts": [
                        {"name": a.name, "meaning": a.meaning, "mutating": a.mutating} for a in ACTS
                    ],
                    "file_tools": FILE_TOOL_ACTS,
                },
                indent=1,
            )
        )
        return 0
    width = max(len(a.name) for a in ACTS)
    for act in ACTS:
        flag = "mutating" if act.mutating else "read-only"
        print(f"{act.name:<{width}}  {flag:<9}  {act.meaning}")
    print("\nfile tools: " + ", ".join(f"{k} = {v}" for k, v in FILE_TOOL_ACTS.items()))
    return 0


def _cmd_rules(args: argparse.Namespace) -> int:
    from .gate import RULES

    if args.json:
        print(json.dumps(RULES, indent=1))
        return 0
    width = max(map(len, RULES))
    for rule, meaning in RULES.items():
        print(f"{rule:<{width}}  {meaning}")
    return 0


def _register_effects(sub: Any) -> None:
    from .cli_effects import register

    register(sub)


def _register_policy(sub: Any) -> None:
    from .cli_policy import register

    register(sub)


def _register_approval(sub: Any) -> None:
    from .cli_approval import register

    register(sub)


def _register_stats(sub: Any) -> None:
    from .cli_stats import register

    register(sub)


def _register_views(sub: Any) -> None:
    from .cli_views import register

    register(sub)


def _register_bundle(sub: Any) -> None:
    from .cli_bundle import register

    register(sub)


def _register_bench(sub: Any) -> None:
    from .cli_bench import register

    register(sub)


def _register_mcp(sub: Any) -> None:
    from .mcp_server import register

    register(sub)


def _register_init(sub: Any) -> None:
    from .cli_init import register

    register(sub)


def _register_sessions(sub: Any) -> None:
    from .cli_sessions import register

    register(sub)


def _register_trace(sub: Any) -> None:
    from .cli_trace import register

    register(sub)


def _register_agent(sub: Any) -> None:
    from .cli_agent import register

    register(sub)


#: Each command and the function that registers its group (in `--help` order).
_COMMANDS: dict[str, Callable[[Any], None]] = {
    "exec": _register_exec,
    "tool": _register_tool,
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

if __name__ == "__main__":
    sys.exit(main())
