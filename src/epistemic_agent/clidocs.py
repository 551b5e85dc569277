"""docs/cli.md, generated from the parser's own `--help` text so it cannot drift."""

from __future__ import annotations

import argparse
import os

WIDTH = "100"


def render_cli_docs() -> str:
    from .cli import build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        parts = [
            "# The `epistemic` command line",
            "",
            "Generated from `--help` by `python -m epistemic_agent.clidocs > docs/cli.md`; "
            "a test keeps it current.",
            "",
            "```text",
            parser.format_help().rstrip(),
            "```",
        ]
        for name, sub in _subparsers(parser).items():
            parts += ["", f"## epistemic {name}", "", "```text", sub.format_help().rstrip(), "```"]
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous
    return "\n".join(parts) + "\n"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


if __name__ == "__main__":
    print(render_cli_docs(), end="")
