"""Every `epistemic` command, in `--help` order: the module of cli/ that defines it, the function
there that fills in its parser (its arguments, its description, the handler that runs it), and
the summary `epistemic --help` lists.

A command's module is imported only when that command runs or its own help is asked for:
`epistemic --help` lists the summaries without importing any."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import argparse


class Command(NamedTuple):
    module: str  # under epistemic_agent.cli
    define: str  # its function that takes the command's parser and fills it in
    summary: str  # its line in `epistemic --help`


COMMANDS: dict[str, Command] = {
    "exec": Command("calls", "define_exec", "run one gated shell act"),
    "tool": Command("calls", "define_tool", "call any tool with raw JSON arguments"),
    "run": Command("agent", "define_run", "one-shot: give a model a task in a workspace"),
    "repl": Command("agent", "define_repl", "interactive: each message continues the same session"),
    "demo": Command("agent", "define_demo", "offline demo: a scripted model fixes a buggy script"),
    "models": Command(
        "models", "define_models", "the model table: prices, context windows, output limits"
    ),
    "sessions": Command(
        "sessions",
        "define_sessions",
        "the workspace's sessions: id, start, task, model, calls, status",
    ),
    "show": Command(
        "sessions",
        "define_show",
        "one call in full: reason, command, checks, approval, output, diff",
    ),
    "log": Command("readers", "define_log", "the session's calls, one merged record each"),
    "report": Command("readers", "define_report", "re-render RATIONALE.md from the journal"),
    "verify": Command(
        "verify", "define_verify", "check the journal's hash chain, its evidence and its seals"
    ),
    "seal": Command("verify", "define_seal", "sign the journal's head with your SSH key"),
    "types": Command("readers", "define_types", "the act vocabulary"),
    "rules": Command("readers", "define_rules", "the gate's rule ids"),
    "classify": Command(
        "effects",
        "define_classify",
        "what a shell command would do: read-only, mutating or unknown",
    ),
    "doctor": Command(
        "effects",
        "define_doctor",
        "what this machine can confine and observe: each guarantee, tried here",
    ),
    "policy": Command(
        "policy",
        "define_policy",
        "check a policy file, or explain what it decides about a call",
    ),
    "stats": Command(
        "stats",
        "define_stats",
        "the numbers of one session or many: acts, rejections, reverts, tokens",
    ),
    "diff": Command(
        "stats",
        "define_diff",
        "two sessions side by side: shape, aligned acts, first divergence, endings",
    ),
    "plot": Command("views", "define_plot", "draw a session's timeline and shape (PNG or SVG)"),
    "html": Command("views", "define_html", "write a session as one self-contained HTML page"),
    "trace": Command(
        "trace",
        "define_trace",
        "which declared act changed each file (or line, or commit), who approved it, "
        "what verified it",
    ),
    "git-hook": Command(
        "git_hook",
        "define_git_hook",
        "add Epistemic-* trailers to each commit made in a workspace with a session",
    ),
    "lint": Command(
        "bundle", "define_lint", "re-run the declared-versus-done checks on a recorded journal"
    ),
    "export": Command("bundle", "define_export", "pack a session into an audit bundle (a zip)"),
    "mcp": Command("mcp", "define_mcp", "serve the four tools to any MCP client (stdio)"),
    "init": Command(
        "init",
        "define_init",
        "set up an MCP client (Claude Code, Codex, any other) to act through epistemic",
    ),
    "bench": Command(
        "bench", "define_bench", "run a model on the benchmark's tasks, judged by their oracles"
    ),
    "pending": Command("approval", "define_pending", "list calls waiting for a human's approval"),
    "approve": Command("approval", "define_approve", "approve a call that waits for approval"),
    "deny": Command("approval", "define_deny", "deny a call that waits for approval"),
}


def define(name: str, parser: argparse.ArgumentParser) -> None:
    """Fill in `parser`, made for command `name`: import the command's module, call its
    function."""
    command = COMMANDS[name]
    module = importlib.import_module(f"{__package__}.{command.module}")
    getattr(module, command.define)(parser)
