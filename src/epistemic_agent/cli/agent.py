"""`epistemic run`, `repl` and `demo`: a model behind the gate."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import SupervisorUnavailable, UsageError
from .calls import head_line, warn_opening
from .models import add_model_options, check_window, provider_from_args
from .options import (
    chosen_policy,
    policy_options,
    session_choice,
    session_option,
    supervisor_error,
    supervisor_option,
    ticket_of,
    ticket_option,
    workspace_option,
)

if TYPE_CHECKING:
    from typing import Any


def define_run(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run the agent on TASK until the model finishes. Exit 0 when "
        "the model finished; 3 max steps; 4 too many consecutive rejections; "
        "5 provider error; 130 interrupted; 2 usage error."
    )
    p.add_argument("task", help="the task, as you would tell a colleague")
    _agent_options(p)
    p.add_argument(
        "--resume",
        metavar="ID",
        help="continue that session's conversation with the model (its id or a unique "
        "prefix): the messages so far are rebuilt from its journal, then TASK is the next one",
    )
    p.add_argument("--json", action="store_true", help="print events as JSON lines")
    p.set_defaults(handler=_cmd_run)


def define_repl(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Read messages from the terminal (or piped stdin), one per "
        "line; each continues the same session and journal. On a terminal: line "
        "editing, history across sessions, /help for the slash commands; Ctrl-C "
        "clears the line or stops the running call, Ctrl-D ends."
    )
    _agent_options(p)
    p.set_defaults(handler=_cmd_repl)


def define_demo(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Copy a bundled task to a fresh temporary directory and run "
        "the full loop with a scripted model (no API key), then its oracle."
    )
    p.add_argument(
        "-o",
        dest="out",
        metavar="DIR",
        help="where to put the workspace (default: a new temporary directory)",
    )
    p.add_argument("--json", action="store_true", help="print events as JSON lines")
    color_option(p)
    p.set_defaults(handler=_cmd_demo)


def _agent_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        help="PROVIDER:MODEL, e.g. openai:gpt-5.1, openai-responses:gpt-5.1, "
        "anthropic:claude-sonnet-4-5, replay:session.json (default: $EPISTEMIC_MODEL)",
    )
    workspace_option(p)
    p.add_argument(
        "--max-steps",
        type=int,
        default=50,
        metavar="N",
        help="model calls before stopping (default 50)",
    )
    p.add_argument(
        "--max-rejections",
        type=int,
        default=5,
        metavar="N",
        help="consecutive rejected calls before stopping (default 5)",
    )
    p.add_argument(
        "--base-url", help="an OpenAI-compatible server, e.g. http://localhost:11434/v1 (Ollama)"
    )
    p.add_argument("--api-key-env", metavar="VAR", help="read the API key from this variable")
    p.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="per-command timeout in seconds (default 120)",
    )
    p.add_argument(
        "--request-timeout",
        type=float,
        default=600.0,
        metavar="S",
        help="seconds to wait for one model request before retrying it (default 600)",
    )
    p.add_argument(
        "--hide",
        action="append",
        default=[],
        metavar="PATH",
        help="make PATH invisible to every act (an empty read-only folder, or an empty file, "
        "in its place); repeatable",
    )
    p.add_argument(
        "--decoy",
        action="append",
        nargs=2,
        default=[],
        metavar=("FOLDER", "DECOY"),
        help="acts see the folder DECOY (read-only) in place of FOLDER; repeatable",
    )
    p.add_argument(
        "--readable",
        action="append",
        default=None,
        metavar="PATH",
        help="allow acts to read, list and run only beneath PATH (repeatable), the workspace, "
        "the scratch dir and their writable grants: give the system folders the task needs "
        "(e.g. /usr /etc /dev /proc); default: everything the OS user can read",
    )
    p.add_argument(
        "--key",
        metavar="FILE",
        help="the SSH key an approval given at this terminal is signed with, where the policy "
        "requires signed approvals (default: the first key ssh-agent holds, else "
        "~/.ssh/id_ed25519)",
    )
    add_model_options(p)
    policy_options(p)
    color_option(p)
    session_option(p, writer=True)
    supervisor_option(p)
    ticket_option(p)


def color_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-color",
        action="store_true",
        help="no colour in the live view (also: the NO_COLOR variable, or output that is "
        "not a terminal)",
    )


def _hiding(args: argparse.Namespace) -> dict[str, Any]:
    """--hide, --decoy and --readable as Settings fields; a path that is not there is a usage
    error (a typo must not leave something visible that was meant to be hidden)."""
    hidden = []
    for path in args.hide:
        if not os.path.lexists(path):
            raise UsageError(f"--hide {path}: no such file or folder")
        hidden.append(os.path.abspath(path))
    decoys = []
    for folder, decoy in args.decoy:
        for name in (folder, decoy):
            if not os.path.isdir(name):
                raise UsageError(f"--decoy {folder} {decoy}: {name} is not a folder")
        decoys.append((os.path.abspath(folder), os.path.abspath(decoy)))
    readable = None
    if args.readable is not None:
        missing = [path for path in args.readable if not os.path.lexists(path)]
        if missing:  # a typo must not leave a folder a task needs unreadable, unexplained
            raise UsageError(f"--readable {missing[0]}: no such file or folder")
        readable = tuple(os.path.abspath(path) for path in args.readable)
    return {"hidden": tuple(hidden), "decoys": tuple(decoys), "readable": readable}


def _prepare(args: argparse.Namespace, header: dict[str, Any]) -> tuple[Any, Any]:
    from ..agent import Agent, AgentConfig
    from ..session import Session, Settings, workspace_policy

    spec = args.model or os.environ.get("EPISTEMIC_MODEL")
    if not spec:
        raise UsageError(
            "name a model with --model or $EPISTEMIC_MODEL, e.g. openai:gpt-5.1, "
            "anthropic:claude-sonnet-4-5, or replay:FILE for a scripted session"
        )
    waits = args.approval_timeout
    limits = (args.max_steps, args.max_rejections, args.timeout, args.request_timeout)
    if min(limits) <= 0:
        raise UsageError("--max-steps, --max-rejections and the timeouts must be positive")
    directory = Path(args.directory)
    if not directory.is_dir():
        raise UsageError(f"workspace {directory} is not a directory")
    # the policy first: a broken one stops the run before anything happens
    named = chosen_policy(args)
    policy = named or workspace_policy(directory.resolve())
    hiding = _hiding(args)
    supervisor = _supervisor(args, policy)
    provider, _ = provider_from_args(args, spec)
    chosen = _chosen_session(args)
    if args.key is not None and not os.path.isfile(args.key):
        raise UsageError(f"--key {args.key}: no such key file")
    settings = Settings(
        timeout=args.timeout,
        approval_timeout=waits,
        approval_key=args.key,
        session=chosen,
        owns_session=True,
        **hiding,
    )
    check_window(args, provider, settings.min_reason)
    facts = {"model": spec, **header}
    session = Session(
        directory, settings, facts, policy, policy_implicit=named is None, supervisor=supervisor
    ).open()
    warn_opening(session)
    if not session.created:
        session.event("run", model=spec, **header)
    config = AgentConfig(
        max_steps=args.max_steps,
        max_rejections=args.max_rejections,
        context_window=args.context_window,
    )
    events = _events(args)
    agent = Agent(session, provider, config, events)
    if getattr(args, "resume", None) is not None:
        from ..agent import rebuild
        from ..journal import read_records

        records, _ = read_records(session.layout.journal)
        agent.messages = rebuild(records, session.layout.evidence, settings.output_limit)
    follow = getattr(events, "follow", None)
    if follow is not None:
        follow(session)  # the live view tails the session's running commands
    return session, agent


def _chosen_session(args: argparse.Namespace) -> str | None:
    """--session ID|new, or --resume ID (which names the session whose conversation goes on)."""
    chosen = session_choice(args)
    resume = getattr(args, "resume", None)
    if resume is None:
        return chosen
    if chosen is not None:
        raise UsageError("give --resume ID or --session, not both")
    args.session = resume
    wanted = session_choice(args)
    if wanted == "new":
        raise UsageError("--resume needs a session id (`epistemic sessions` lists them)")
    return wanted


def _supervisor(args: argparse.Namespace, policy: Any) -> Any:
    """The supervisor --supervisor or the policy names, started now: a bad one is a usage
    error before the model is asked anything."""
    from ..session import supervisor_for as make

    try:
        return make(policy, args.supervisor)
    except SupervisorUnavailable as error:
        raise UsageError(supervisor_error(error)) from None


def _ticket(args: argparse.Namespace) -> dict[str, str]:
    ticket = ticket_of(args)
    return {"ticket": ticket} if ticket is not None else {}


def _events(args: argparse.Namespace) -> Any:
    from ..agent import JsonEvents, LiveEvents

    if getattr(args, "json", False):
        return JsonEvents()
    return LiveEvents(color=False if getattr(args, "no_color", False) else None)


def _end_on_signals() -> None:
    """SIGTERM and SIGHUP end `run` and `repl` as a second Ctrl-C does: the running call is
    stopped and its outcome recorded, the session closed (`closed`), exit 128 + the signal."""

    def stop(number: int, frame: object) -> None:
        raise SystemExit(128 + number)

    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, stop)


def _cmd_run(args: argparse.Namespace) -> int:
    if not args.task.strip():
        raise UsageError("the task is empty")
    # a provider that cannot start (no key, a bad script) ends here: ProviderError, exit 5
    session, agent = _prepare(args, {"task": args.task, **_ticket(args)})
    _end_on_signals()
    with session:
        stop = agent.run(args.task)
        session.end()  # before the summary, which prints the journal's final head
        agent.events.summary(session, stop)
    return int(stop.exit_code)


def _cmd_repl(args: argparse.Namespace) -> int:
    session, agent = _prepare(args, {"task": None, "mode": "repl", **_ticket(args)})
    from .repl import Repl

    model = args.model or os.environ.get("EPISTEMIC_MODEL", "")
    shell = Repl(session, agent, agent.events, model, args.run_cli)
    _end_on_signals()
    with session:  # /new closes it and opens another: the REPL's current one is closed here
        try:
            code = shell.run()
            shell.session.end()
        finally:
            shell.session.close()
    print(head_line(shell.session.journal.position), file=sys.stderr)
    return code


def _cmd_demo(args: argparse.Namespace) -> int:
    from ..demo import run_demo

    color = False if args.no_color else None
    return run_demo(Path(args.out) if args.out else None, json_events=args.json, color=color)
