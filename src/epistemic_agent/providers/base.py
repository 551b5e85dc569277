"""The one small interface every model provider implements, and the neutral transcript."""

from __future__ import annotations

import os
from collections.abc import Callable
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


def api_key(env: str, base_url: str | None, vendor: str) -> tuple[str | None, str]:
    """The key from its environment variable, and how to name it in an error message."""
    key = os.environ.get(env)
    if not key and base_url is None:
        raise ProviderError(
            f"{env} is not set: export your {vendor} API key, or name another "
            "variable with --api-key-env"
        )
    return key, (f"from ${env}" if key else f"${env} is not set")


def call_sdk(sdk: Any, key_hint: str, request: Callable[[], Any]) -> Any:
    """Run one SDK request; map its errors (the openai and anthropic SDKs share their names)."""
    try:
        return request()
    except sdk.APIStatusError as error:
        raise http_error(
            error.status_code, _detail(error), key_hint, _retry_after(error.response.headers)
        ) from None
    except sdk.APITimeoutError:
        raise ProviderError("the model server did not answer in time", retryable=True) from None
    except sdk.APIConnectionError as error:
        raise ProviderError(f"cannot reach the model server: {error}", retryable=True) from None
    except (ValueError, TypeError) as error:  # a 200 whose body is not the API's JSON
        raise ProviderError(
            f"the model server's answer could not be read: {error}", retryable=True
        ) from None


def _detail(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(error, "message", error))


def _retry_after(headers: Any) -> float | None:
    try:
        return float(headers.get("retry-after"))
    except (TypeError, ValueError):
        return None
