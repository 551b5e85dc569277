"""Errors the command line reports in one line (never a traceback), and the error of a model
call (`ProviderError`, which providers/ raises and everything above catches)."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: printed as one clear line, exit status 2."""


class ProviderError(Exception):
    """A model call failed. `retryable` errors (429, 5xx, timeouts) are retried with backoff."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        context_limit: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.context_limit = context_limit  # the request did not fit the context window


class SupervisorUnavailable(ProviderError):
    """A supervisor could not start: the message says why (a bad spec or script, no key).
    Raised before anything ran; the command line reports it as a usage error. It is a
    `ProviderError`: code that catches those catches it too."""
