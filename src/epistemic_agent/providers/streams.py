"""Reading an SDK's server-sent event stream safely: a cut, unreadable or failing stream is a
ProviderError (retryable), never a half-parsed answer and never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .base import ProviderError, http_error

#: Error types a provider may send inside a stream that retrying cannot fix.
FINAL_ERRORS = (
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "not_found_error",
    "request_too_large",
    "invalid_prompt",
    "context_length_exceeded",
)


def events(sdk: Any, key_hint: str, stream: Any) -> Iterator[Any]:
    """The stream's events, one by one; whatever goes wrong while reading becomes a
    ProviderError that says how far the stream got. The stream is closed either way."""
    iterator = iter(stream)
    count = 0
    try:
        while True:
            try:
                event = next(iterator)
            except StopIteration:
                return
            except sdk.APIStatusError as error:  # an `error` event (Anthropic)
                raise mid_stream_error(_detail(error), _error_type(error), key_hint) from None
            except sdk.APIConnectionError as error:  # OpenAI's name for a cut (or a timeout)
                raise cut(count, error) from None
            except sdk.APIError as error:  # an error object in the stream (OpenAI)
                raise mid_stream_error(str(error), _error_type(error), key_hint) from None
            except (ValueError, TypeError) as error:  # an event whose data is not JSON
                raise ProviderError(
                    f"the model server sent a malformed stream event after {count} "
                    f"event(s) ({error}); the answer was discarded",
                    retryable=True,
                ) from None
            except Exception as error:  # the connection dropped or timed out mid-stream
                raise cut(count, error) from None
            count += 1
            yield event
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def cut(count: int, error: Exception) -> ProviderError:
    cause = getattr(error, "__cause__", None) or error
    return ProviderError(
        f"the stream was cut after {count} event(s) ({cause or type(cause).__name__}); the "
        "partial answer was discarded",
        retryable=True,
    )


def mid_stream_error(message: str, kind: str | None, key_hint: str) -> ProviderError:
    """An error the server reported inside a stream: retried unless it cannot help."""
    if kind in ("authentication_error", "permission_error"):
        return http_error(401 if kind == "authentication_error" else 403, message, key_hint)
    text = f"the model server reported an error mid-stream ({kind or 'error'}): {message}"
    final = kind in FINAL_ERRORS
    limit = kind == "context_length_exceeded" or http_error(400, message, key_hint).context_limit
    status = 400 if final else None
    return ProviderError(text, retryable=not final, status=status, context_limit=limit)


def incomplete(what: str, count: int) -> ProviderError:
    return ProviderError(
        f"the stream ended after {count} event(s) without {what}; the partial answer was discarded",
        retryable=True,
    )


def malformed(what: str) -> ProviderError:
    return ProviderError(
        f"the model server sent a malformed stream event ({what}); the answer was discarded",
        retryable=True,
    )


def _error_type(error: Any) -> str | None:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            for key in ("type", "code"):
                if isinstance(inner.get(key), str):
                    return str(inner[key])
    code = getattr(error, "code", None) or getattr(error, "type", None)
    return code if isinstance(code, str) else None


def _detail(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(error, "message", error))


def get(obj: Any, name: str) -> Any:
    """An attribute of an SDK object, or a key of a dict (SDKs pass unknown events as dicts)."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def count(value: Any) -> int | None:
    """A token count as sent: an integer, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
