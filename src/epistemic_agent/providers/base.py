"""The one small interface every model provider implements, and the neutral transcript."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from ..core import EXIT_USAGE, field, struct
from ..core import ProviderError as ProviderError
from .models import ModelInfo


@struct
class ToolCall:
    """A tool call as the model sent it. `arguments` is raw: a JSON string or a parsed value."""

    id: str | None
    name: str | None
    arguments: Any


@struct
class Usage:
    """Token counts as the provider reported them (None: not reported), and their cost.

    `prompt_tokens` is the provider's own input figure (OpenAI: all input; Anthropic: input
    after the last cache breakpoint); `input_tokens` is all input, cached or not, for both.
    `cached_tokens` were read from the prompt cache, `cache_creation_input_tokens` written
    to it. `reasoning_tokens` are the output tokens spent thinking (part of the output).
    """

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    input_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: float | None = None  # US dollars, set by the loop from the model table


@struct
class Reasoning:
    """Thinking or a reasoning summary the provider returned with a turn.

    `native` is the block or item exactly as received (with its signature or encrypted
    content): it goes back to the provider unchanged on the next request. `text` is what a
    reader can see ("" when the provider redacted or omitted it)."""

    kind: str  # thinking | redacted_thinking | reasoning
    text: str
    native: dict[str, Any]


@struct
class Turn:
    """One assistant turn: its prose, its tool calls (possibly none), token usage."""

    text: str
    calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    reasoning: tuple[Reasoning, ...] = ()


@struct
class UserMessage:
    text: str


@struct
class ToolResult:
    """A call's result as the model sees it; `seq`, `act` and `evidence` (the SHA-256 of
    each stored output) say where the full output is, for compaction."""

    call_id: str
    text: str
    is_error: bool
    seq: int | None = None
    act: str | None = None
    evidence: tuple[tuple[str, str], ...] = ()


@struct
class AssistantMessage:
    """An assistant turn as it goes back to the model; every call here has an id."""

    text: str
    calls: tuple[ToolCall, ...]
    reasoning: tuple[Reasoning, ...] = ()


@struct
class ToolResults:
    results: tuple[ToolResult, ...]


Message = UserMessage | AssistantMessage | ToolResults


class ModelSpecError(ProviderError):
    """The model string or scripted session is malformed: the user's input, not the provider."""

    exit_status = EXIT_USAGE


class StreamSink(Protocol):
    """Hears a streamed answer as it arrives: its text, and its thinking when shown."""

    def text(self, delta: str) -> None: ...
    def thinking(self, delta: str) -> None: ...


@struct
class ModelOptions:
    """How to ask: limits, reasoning, caching and streaming (see docs/models.md)."""

    info: ModelInfo
    max_output: int | None = None  # None: the model table's default
    thinking: int | str | None = None  # Anthropic: a budget of tokens, or "adaptive"
    reasoning_effort: str | None = None  # OpenAI: none, minimal, low, medium, high...
    cache: bool = True  # cache breakpoints (Anthropic), prompt_cache_key (OpenAI)
    cache_key: str | None = None  # OpenAI's prompt_cache_key (the session id)
    stream: bool = True

    @property
    def output_limit(self) -> int:
        return self.max_output or self.info.max_output


@runtime_checkable
class Provider(Protocol):
    """A model behind the loop: given the system prompt and transcript, produce one turn.
    Every ability the loop uses is declared here; the loop reads nothing else of a provider."""

    name: str
    model: str
    #: whether `complete` streams the answer into the sink it is given as it arrives
    streams: bool
    #: how to ask, and what is known of the model (its context window, its output limit);
    #: None for a scripted model
    options: ModelOptions | None
    #: the prompt-cache key sent with each request (OpenAI's `prompt_cache_key`); the loop
    #: sets one left None to its session's id
    cache_key: str | None

    @property
    def leftover(self) -> int:
        """Turns a scripted model still had when the loop stopped (0 for a real one)."""
        ...

    def complete(
        self, system: str, messages: Sequence[Message], sink: StreamSink | None = None
    ) -> Turn: ...


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
        context_limit=status in (400, 413) and bool(_TOO_LONG.search(detail)),
    )


#: How the providers say a request is longer than the context window (400 or 413).
_TOO_LONG = re.compile(
    r"(prompt|input) is too long|exceeds? (the )?context|context[ _]length|context window"
    r"|maximum context|too many (input )?tokens",
    re.IGNORECASE,
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


def arguments_text(arguments: Any) -> str:
    """Arguments as the wire carries them: the string the model sent, or JSON."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, default=str)
