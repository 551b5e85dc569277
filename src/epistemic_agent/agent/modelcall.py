"""One model request as the loop makes it: streamed to the front end, retried with backoff,
kept inside the context window, priced, and journaled (`model`, `thinking`, `compaction`)."""

from __future__ import annotations

import json
import time
from typing import Any, Protocol

from ..core import ACTS_BY_NAME, FILE_TOOL_ACTS, ProviderError, field, normalise_act, struct
from ..journal import Record
from ..providers import Message, ModelInfo, Provider, Turn, Usage, arguments_text
from ..session import CallResult, Session
from .compaction import Compaction, Compactor


@struct
class AgentConfig:
    max_steps: int = 50
    max_rejections: int = 5
    retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 30.0
    context_window: int | None = None  # None: the model table's (or the configuration's)


class Events(Protocol):
    """What a front end (live terminal lines, JSON lines) hears from the loop."""

    def model_started(self, step: int) -> None: ...
    def model_delta(self, step: int, kind: str, text: str) -> None: ...
    def model_finished(self, step: int, turn: Turn, latency: float) -> None: ...
    def call_started(self, record: Record) -> None: ...
    def call_finished(self, step: int, result: CallResult, command: str) -> None: ...
    def notice(self, text: str) -> None: ...
    def interrupt_requested(self) -> bool:
        """The first Ctrl-C came (called from a signal handler: set a flag, no more); True
        when the front end shows it, else the loop says so on stderr."""
        ...


class QuietEvents:
    def model_started(self, step: int) -> None:
        pass

    def model_delta(self, step: int, kind: str, text: str) -> None:
        pass

    def model_finished(self, step: int, turn: Turn, latency: float) -> None:
        pass

    def call_started(self, record: Record) -> None:
        pass

    def call_finished(self, step: int, result: CallResult, command: str) -> None:
        pass

    def notice(self, text: str) -> None:
        pass

    def interrupt_requested(self) -> bool:
        return False


@struct
class _Sink:
    """A stream's deltas, passed on to the front end for one step."""

    events: Events
    step: int

    def text(self, delta: str) -> None:
        self.events.model_delta(self.step, "text", delta)

    def thinking(self, delta: str) -> None:
        self.events.model_delta(self.step, "thinking", delta)


@struct(frozen=False)
class ModelCalls:
    session: Session
    provider: Provider
    config: AgentConfig
    events: Events
    system: str
    compactor: Compactor
    info: ModelInfo | None = None  # prices; None for a scripted model
    _warned: bool = field(default=False)

    def complete(self, step: int, messages: list[Message]) -> Turn:
        """One model call, retried with backoff on 429/5xx/timeouts/cut streams, journaled
        either way; shrunk and retried when the provider says it does not fit."""
        self._warn_unpriced()
        if self.compactor.due(messages):
            self._compacted(step, self.compactor.shrink(messages, "near-limit"))
        attempt = shrunk = 0
        while True:
            attempt += 1
            self.events.model_started(step)
            started = time.monotonic()
            try:
                turn = self._ask(step, messages)
            except ProviderError as error:
                done = (
                    self.compactor.shrink(messages, "provider-limit")
                    if error.context_limit
                    else None
                )
                if done is not None:  # it did not fit, and something could shrink: again
                    self._model_error(step, attempt, error, retrying=True)
                    self._compacted(step, done)
                    shrunk += 1  # a retry that does not count against the budget
                    continue
                if error.context_limit:
                    error = ProviderError(
                        f"{error}; the conversation does not fit the context window and "
                        "nothing is left to compact",
                        status=error.status,
                    )
                retry = error.retryable and attempt - shrunk <= self.config.retries
                self._model_error(step, attempt, error, retrying=retry)
                if not retry:
                    raise error from None
                self.events.notice(f"model call failed ({error}); retrying")
                time.sleep(self._delay(attempt - shrunk, error.retry_after))
                continue
            latency = time.monotonic() - started
            self.compactor.learn(messages, turn.usage.input_tokens)
            turn = self._journal(step, attempt, turn, latency)
            self.events.model_finished(step, turn, latency)
            return turn

    def _ask(self, step: int, messages: list[Message]) -> Turn:
        if self.provider.streams:
            return self.provider.complete(self.system, messages, _Sink(self.events, step))
        return self.provider.complete(self.system, messages)  # read, never kept or changed

    def _model_error(self, step: int, attempt: int, error: ProviderError, retrying: bool) -> None:
        self.session.event(
            "model-error",
            step=step,
            attempt=attempt,
            status=error.status,
            message=str(error),
            retrying=retrying,
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        delay: float = self.config.backoff * 2.0 ** (attempt - 1)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self.config.max_backoff)

    def _compacted(self, step: int, done: Compaction | None) -> None:
        if done is None:
            return
        self.session.event(
            "compaction",
            step=step,
            trigger=done.trigger,
            context_window=self.compactor.context_window,
            estimated_tokens_before=done.before,
            estimated_tokens_after=done.after,
            calls=list(done.calls),
            results=done.results,
            chars_removed=done.chars_removed,
            reasoning_dropped=done.reasoning_dropped,
        )
        self.events.notice(
            f"compacted {done.results} old tool output(s) to fit the context window "
            f"(about {done.before} -> {done.after} tokens)"
        )

    def _journal(self, step: int, attempt: int, turn: Turn, latency: float) -> Turn:
        usage = turn.usage
        cost = None
        if self.info is not None:
            cost = self.info.cost(
                usage.input_tokens,
                usage.completion_tokens,
                usage.cached_tokens,
                usage.cache_creation_input_tokens,
            )
        reasons = reason_share(turn)
        self.session.event(
            "model",
            step=step,
            provider=self.provider.name,
            model=self.provider.model,
            latency=round(latency, 6),
            attempts=attempt,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens,
            input_tokens=usage.input_tokens,
            cache_read_input_tokens=usage.cached_tokens,
            cache_creation_input_tokens=usage.cache_creation_input_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            cost=cost,
            price=self.info.price() if self.info is not None else None,
            stop_reason=turn.stop_reason,
            calls=len(turn.calls),
            acts=[declared_act(call.name, call.arguments) for call in turn.calls],
            **reasons,
            thinking=len(turn.reasoning),
        )
        for item in turn.reasoning:
            self.session.event(
                "thinking", step=step, provider=self.provider.name, block=item.kind, text=item.text
            )
        if cost is None:
            return turn
        priced = Usage(**{**_fields(usage), "cost": cost})
        return Turn(turn.text, turn.calls, priced, turn.stop_reason, turn.reasoning)

    def _warn_unpriced(self) -> None:
        if self.info is None or self.info.priced or self._warned:
            return
        self._warned = True
        self.events.notice(
            f"no price is known for model {self.provider.model!r}: each model record's cost "
            "is null; add its prices to models.toml (see docs/models.md)"
        )


def _fields(usage: Usage) -> dict[str, Any]:
    names: tuple[str, ...] = ("prompt_tokens", "completion_tokens", "cached_tokens")
    names += ("cache_creation_input_tokens", "input_tokens", "reasoning_tokens")
    return {name: getattr(usage, name) for name in names}


def parsed(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return {}
    return arguments if isinstance(arguments, dict) else {}


def declared_act(tool: str | None, arguments: Any) -> str | None:
    """The act a call declares (bash: its `type`; a file tool: the tool's act); None when the
    call declares none the vocabulary knows."""
    if tool in FILE_TOOL_ACTS:
        return FILE_TOOL_ACTS[tool]
    act = parsed(arguments).get("type")
    if tool == "bash" and isinstance(act, str) and normalise_act(act) in ACTS_BY_NAME:
        return normalise_act(act)
    return None


def reason_share(turn: Turn) -> dict[str, int | None]:
    """Characters of the turn's output spent on `reason` fields, and the output tokens that
    share stands for (an estimate: output tokens split by character share)."""
    reasons = sum(
        len(r) for c in turn.calls if isinstance(r := parsed(c.arguments).get("reason"), str)
    )
    output = len(turn.text) + sum(len(arguments_text(c.arguments)) for c in turn.calls)
    usage = turn.usage
    if usage.reasoning_tokens is None:
        output += sum(len(item.text) for item in turn.reasoning)
    tokens = None
    if usage.completion_tokens is not None and output:
        visible = max(usage.completion_tokens - (usage.reasoning_tokens or 0), 0)
        tokens = round(visible * reasons / output)
    return {"reason_chars": reasons, "output_chars": output, "reason_tokens": tokens}
