"""`epistemic run`, `repl` and `demo`: a model behind the gate."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .cli_models import add_model_options, check_window, provider_from_args
from .cliargs import chosen_policy, policy_options, ticket_of, ticket_option, workspace_option
from .errors import UsageError

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from typing import Any

EXIT_PROVIDER = 5


def register(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="one-shot: give a model a task in a workspace",
        description="Run the agent on TASK until the model finishes. Exit 0 when "
        "the model finished; 3 max steps; 4 too many consecutive rejections; "
        "5 provider error; 130 interrupted; 2 usage error.",
    )
    p.add_argument("task", help="the task, as you would tell a colleague")
    _agent_options(p)
    p.add_argument("--json", action="store_true", help="print events as JSON lines")
    p.set_defaults(handler=_cmd_run)
    p = sub.add_parser(
        "repl",
        help="interactive: each message continues the same session",
        description="Read messages from the terminal (or piped stdin), one per "
        "line; each continues the same session and journal. Ctrl-D ends.",
    )
    _agent_options(p)
    p.set_defaults(handler=_cmd_repl)
    p = sub.add_parser(
        "demo",
        help="offline demo: a scripted model fixes a buggy script",
        description="Copy a bundled task to a fresh temporary directory and run "
        "the full loop with a scripted model (no API key), then its oracle.",
    )
    p.add_argument(
        "-o",
        dest="out",
        metavar="DIR",
        help="where to put the workspace (default: a new temporary directory)",
    )
    p.add_argument("--json", action="store_true", help="print events as JSON lines")
    p.set_defaults(handler=_cmd_demo)
    from .cli_models import register as register_models

    register_models(sub)


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
    add_model_options(p)
    policy_options(p)
    ticket_option(p)


def _prepare(args: argparse.Namespace, header: dict[str, Any]) -> tuple[Any, Any]:
    from .agent import Agent, AgentConfig
    from .guard import workspace_policy
    from .session import Session, Settings

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
    provider, _ = provider_from_args(args, spec)
    settings = Settings(timeout=args.timeout, approval_timeout=waits)
    check_window(args, provider, settings.min_reason)
    facts = {"model": spec, **header}
    session = Session(directory, settings, facts, policy, policy_implicit=named is None)
    from .cli import _warn_confinement

    _warn_confinement(session)
    if not session.created:
        session.event("run", model=spec, **header)
    config = AgentConfig(
        max_steps=args.max_steps,
        max_rejections=args.max_rejections,
        context_window=args.context_window,
    )
    return session, Agent(session, provider, config, _events(args))


def _prepare_or_report(args: argparse.Namespace, header: dict[str, Any]) -> tuple[Any, Any] | None:
    """Set up; a provider that cannot start (no key, bad script) is reported in one line."""
    from .providers import ModelSpecError, ProviderError

    try:
        return _prepare(args, header)
    except ModelSpecError as error:  # a malformed --model or script: the user's input
        raise UsageError(str(error)) from None
    except ProviderError as error:
        print(f"epistemic: {error}", file=sys.stderr)
        return None


def _ticket(args: argparse.Namespace) -> dict[str, str]:
    ticket = ticket_of(args)
    return {"ticket": ticket} if ticket is not None else {}


def _events(args: argparse.Namespace) -> Any:
    from .frontend import JsonEvents, LiveEvents

    return JsonEvents() if getattr(args, "json", False) else LiveEvents()


def _cmd_run(args: argparse.Namespace) -> int:
    if not args.task.strip():
        raise UsageError("the task is empty")
    prepared = _prepare_or_report(args, {"task": args.task, **_ticket(args)})
    if prepared is None:
        return EXIT_PROVIDER
    session, agent = prepared
    with session:
        stop = agent.run(args.task)
        agent.events.summary(session, stop)
    return int(stop.exit_code)


def _cmd_repl(args: argparse.Namespace) -> int:
    prepared = _prepare_or_report(args, {"task": None, "mode": "repl", **_ticket(args)})
    if prepared is None:
        return EXIT_PROVIDER
    session, agent = prepared
    interactive = sys.stdin.isatty()
    stop = None
    with session:
        while True:
            if interactive:
                print("epistemic> ", end="", flush=True)
            line = sys.stdin.readline()
            if not line:
                break
            if not line.strip():
                continue
            stop = agent.run(line.strip())
            agent.events.summary(session, stop)
    return 0 if stop is None else int(stop.exit_code)


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(Path(args.out) if args.out else None, json_events=args.json)
