"""Errors the command line reports in one line (never a traceback)."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: printed as one clear line, exit status 2."""


class SupervisorUnavailable(Exception):
    """A supervisor could not start: the message says why (a bad spec or script, no key).
    Raised before anything ran; the command line reports it as a usage error."""
