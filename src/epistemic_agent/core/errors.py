"""The root of the errors the command line reports in a line each (never a traceback), with
the exit status each ends in; and the error of a model call (`ProviderError`, which providers/
raises and everything above catches).

Every error a user can meet derives from `EpistemicError`: its `exit_status` is the exit status
(docs/cli.md, "Exit statuses"), its `hint` what to do about it, said after the message. The
command line has one handler for them all (cli/app.py)."""

from __future__ import annotations

EXIT_USAGE = 2  # bad input: a usage error, a path that holds no journal, a bad policy
EXIT_PROVIDER = 5  # a model provider that cannot start or answer (`run`, `repl`)
EXIT_RECORD = 74  # the record cannot be written or read


class EpistemicError(Exception):
    """An error the command line reports as `epistemic: MESSAGE` on stderr, then exits
    `exit_status`."""

    exit_status: int = EXIT_USAGE
    hint: str | None = None

    def lines(self) -> list[str]:
        """What the command line prints, each line after `epistemic: `: the message, and the
        hint after it when there is one."""
        return [f"{self}; {self.hint}" if self.hint else str(self)]


class UsageError(EpistemicError):
    """Bad input from the user: printed as one clear line, exit status 2."""


class ProviderError(EpistemicError):
    """A model call failed. `retryable` errors (429, 5xx, timeouts) are retried with backoff."""

    exit_status = EXIT_PROVIDER

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
        self.status = status  # the HTTP status, if any
        self.retryable = retryable
        self.retry_after = retry_after
        self.context_limit = context_limit  # the request did not fit the context window


class SupervisorUnavailable(ProviderError):
    """A supervisor could not start: the message says why (a bad spec or script, no key).
    Raised before anything ran; the command line reports it as a usage error. It is a
    `ProviderError`: code that catches those catches it too."""

    exit_status = EXIT_USAGE
