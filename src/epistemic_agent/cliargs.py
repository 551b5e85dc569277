"""Arguments several commands share: the workspace, and a command given after `--`."""

from __future__ import annotations

import argparse

COMMAND_HELP = "one argument is a shell command line; several are quoted as argv"


def workspace_option(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    parser.add_argument(
        "-C",
        dest="directory",
        default=".",
        metavar="DIR",
        help=help or "the workspace (default: the current directory)",
    )


def command_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "words", nargs=argparse.REMAINDER, metavar="-- COMMAND...", help=COMMAND_HELP
    )


def command_words(words: list[str]) -> list[str]:
    """The words after `--` (argparse may or may not keep the `--` itself)."""
    return words[1:] if words and words[0] == "--" else list(words)


def command_text(words: list[str]) -> str:
    """One word is a shell command line as given; several are quoted as an argv."""
    if len(words) == 1:
        return words[0]
    import shlex

    return shlex.join(words)
