"""The exit statuses the commands share (docs/cli.md lists every one), and what exiting on a
reader that went away needs."""

from __future__ import annotations

import os
from typing import Any

from ..core import EXIT_PROVIDER, EXIT_RECORD, EXIT_USAGE

__all__ = [
    "EXIT_PIPE",
    "EXIT_PROVIDER",
    "EXIT_RECORD",
    "EXIT_REJECTED",
    "EXIT_TIMEOUT",
    "EXIT_USAGE",
    "silence",
]

EXIT_REJECTED = 2  # the gate rejected the call, or a human denied it
EXIT_TIMEOUT = 124
EXIT_PIPE = 141  # what a shell reports for a reader that went away (128 + SIGPIPE)


def silence(stream: Any) -> None:
    """Point a stream whose reader went away at /dev/null, so exiting cannot fail on it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, stream.fileno())
    os.close(devnull)
