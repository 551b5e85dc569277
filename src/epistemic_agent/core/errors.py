"""Errors the command line reports in one line (never a traceback)."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: printed as one clear line, exit status 2."""
