"""The one small interface every model provider implements, and the neutral transcript."""

from __future__ import annotations

from typing import Any, Protocol

from ..structs import field, struct


@struct
class ToolCall:
    """A tool call as the model sent it. `arguments` is raw: a JSON string or a parsed value."""

    id: str | None
    name: str | None
    arguments: Any


@struct
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None


@struct
class Turn:
    """One assistant turn: its prose, its tool calls (possibly none), token usage."""

    text: str
    calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None


@struct
class UserMessage:
    text: str


@struct
class ToolResult:
    call_id: str
    text: str
    is_error: bool


@struct
class AssistantMessage:
    """An assistant turn as it goes back to the model; every call here has an id."""

    text: str
    calls: tuple[ToolCall, ...]


@struct
class ToolResults:
    results: tuple[ToolResult, ...]


Message = UserMessage | AssistantMessage | ToolResults


class ProviderError(Exception):
    """A model call failed. `retryable` errors (429, 5xx, timeouts) are retried with backoff."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class ModelSpecError(ProviderError):
    """The model string or scripted session is malformed: the user's input, not the provider."""


class Provider(Protocol):
    """A model behind the loop: given the system prompt and transcript, produce one turn."""

    name: str
    model: str

    def complete(self, system: str, messages: list[Message]) -> Turn: ...


def http_error(
    status: int | None, detail: str, key_hint: str, retry_after: float | None = None
) -> ProviderError:
    """Map an HTTP failure to a ProviderError with a message a user can act on."""
    if status in (401, 403):
        what = "missing or refused" if status == 401 else "not allowed to use this model"
        return ProviderError(
            f"HTTP {status}: the API key is {what} ({key_hint}). {detail}", status=status
        )
    retryable = status is None or status in (408, 409, 429) or status >= 500
    return ProviderError(
        f"HTTP {status}: {detail}" if status else detail,
        status=status,
        retryable=retryable,
        retry_after=retry_after,
    )
