"""The records of the agent's loop (written by `run`, `repl`, `demo`, and `mcp`'s `run` and
`closed`), the supervisor's `review`, `alert` and the writer's own `recovery`."""

from __future__ import annotations

from .types import (
    ARRAY,
    BOOLEAN,
    INTEGER,
    NUMBER,
    OBJECT,
    STRING,
    Field,
    Kind,
    choices,
    nullable,
    opt,
    req,
)
from .values import (
    Act,
    AlertEvent,
    Mode,
    OnError,
    ReviewFailure,
    Role,
    StopReason,
    ThinkingBlock,
    Trigger,
    Verdict,
)

T = req("t", STRING, "when it was recorded")
STEP = req("step", INTEGER, "the loop's step (one model request and what it asked for), from 1")
REDACTED = opt(
    "redacted", INTEGER, "how many secrets were replaced in this record; absent when none"
)
SUPERVISOR_TOKENS = (
    "the supervisor's tokens, as its provider reported them (null: not reported, or not asked)"
)

REVIEW = Kind(
    "review",
    "the supervisor's second opinion on a call, before it ran",
    (
        req("seq", INTEGER, "the call reviewed"),
        req("t", STRING, "when the review ended"),
        req("role", STRING, "`second-opinion`", choices(Role)),
        req(
            "provider",
            STRING,
            "the supervisor's provider (`replay` for a verdict script) and model (or script path)",
        ),
        req(
            "model",
            STRING,
            "the supervisor's provider (`replay` for a verdict script) and model (or script path)",
        ),
        req("act", STRING, "the act the call declared", choices(Act)),
        req(
            "verdict",
            nullable(STRING),
            "`ok`, `flag` or `block`; null when the review failed",
            choices(Verdict),
        ),
        opt(
            "note",
            STRING,
            "the supervisor's note (required for `flag` and `block`), as written; absent on a "
            "failure",
        ),
        opt(
            "beliefs",
            ARRAY,
            "the supervisor's verdicts on earlier beliefs: `seq`, `verdict` (`confirmed`, "
            "`refuted`, `unsettled`), `why`; absent when none",
        ),
        opt(
            "failure",
            STRING,
            "on a failed review: `provider-error`, `malformed` (not a verdict) or `over-budget`",
            choices(ReviewFailure),
        ),
        opt("error", STRING, "on a failed review: what went wrong"),
        opt(
            "on_error",
            STRING,
            "on a failed review: what the policy did about it (`allow`: the call went on; "
            "`deny`: rejected with rule `supervisor`; `ask`: a human decided)",
            choices(OnError),
        ),
        opt("answer", STRING, "on a malformed answer: its first 500 characters, as received"),
        req("latency", NUMBER, "seconds the review took"),
        *(
            req(name, nullable(INTEGER), SUPERVISOR_TOKENS)
            for name in ("prompt_tokens", "input_tokens", "completion_tokens", "cached_tokens")
        ),
        req(
            "cost",
            nullable(NUMBER),
            "US dollars, from the model table (null: no price known, or a script)",
        ),
        req("budget", INTEGER, "the supervisor's token budget for the session"),
    ),
)

ALERT = Kind(
    "alert",
    "hooks fired on an event",
    (
        T,
        req("seq", INTEGER, "the call the event is about"),
        req(
            "event",
            STRING,
            "`first-revert`, `revert`, `rejection`, `flag`, `denial` or `supervisor-flag`",
            choices(AlertEvent),
        ),
        req(
            "hooks",
            ARRAY,
            "what each hook came to: `hook` (its id), `via` (`command` or `stderr`), `ok`, and "
            "for commands `returncode`, `duration` or `error`",
        ),
    ),
)

RUN = Kind(
    "run",
    "a new run continuing an existing session",
    (
        T,
        opt("model", STRING, "`PROVIDER:MODEL` (`run`, `repl`)"),
        opt("task", nullable(STRING), "the task given to `epistemic run` (null for `repl`)"),
        opt("mode", STRING, "`repl` or `mcp`, as in the header", choices(Mode)),
        opt("mcp_client", OBJECT, "`mcp`: the client, as in the header"),
        opt("ticket", STRING, "when `--ticket` was given"),
        REDACTED,
    ),
)

USER = Kind(
    "user",
    "a user message (the task, or a REPL line)",
    (T, req("text", STRING, "the message"), REDACTED),
)


def _later_model_fields() -> tuple[Field, ...]:
    """The `model` record's fields added without a new `v` (see [models.md](models.md)): a
    record without them is an older one."""
    return (
        opt("input_tokens", nullable(INTEGER), "all input tokens of the request, cached or not"),
        opt(
            "cache_read_input_tokens",
            nullable(INTEGER),
            "input tokens read from the prompt cache (the same as `cached_tokens`)",
        ),
        opt(
            "cache_creation_input_tokens",
            nullable(INTEGER),
            "input tokens written to the prompt cache (null when the provider does not report "
            "writes)",
        ),
        opt(
            "reasoning_tokens",
            nullable(INTEGER),
            "output tokens spent thinking (part of `completion_tokens`)",
        ),
        opt(
            "cost",
            nullable(NUMBER),
            "US dollars for the request, from the model table; null when the price or the "
            "counts are unknown",
        ),
        opt(
            "price",
            nullable(OBJECT),
            "the rates used, in dollars per million tokens: `input`, `output`, `cache_write`, "
            "`cache_read`",
        ),
        opt(
            "acts",
            ARRAY,
            "the act each tool call of the answer declared, in order (null for a call that "
            "declared none the vocabulary knows)",
        ),
        opt("reason_chars", INTEGER, "characters of the calls' `reason` fields"),
        opt(
            "output_chars",
            INTEGER,
            "characters of the answer's visible output (text and arguments)",
        ),
        opt(
            "reason_tokens",
            nullable(INTEGER),
            "the output tokens the reasons took, estimated by character share",
        ),
        opt("thinking", INTEGER, "how many `thinking` records follow for this step"),
    )


TOKENS = "integer or null"
MODEL = Kind(
    "model",
    "one successful model request",
    (
        T,
        STEP,
        req("provider", STRING, "the provider's name"),
        req("model", STRING, "the model asked"),
        req("latency", NUMBER, "seconds the request took"),
        req(
            "attempts",
            INTEGER,
            "how many attempts it took (failed ones have `model-error` records)",
        ),
        req(
            "prompt_tokens",
            nullable(INTEGER),
            "the provider's own input figure: all input for OpenAI, the input after the last "
            "cache breakpoint for Anthropic; null when the provider does not report it",
        ),
        req("completion_tokens", nullable(INTEGER), "output tokens; null when not reported"),
        req(
            "cached_tokens",
            nullable(INTEGER),
            "input tokens read from the prompt cache; null when not reported",
        ),
        req("stop_reason", nullable(STRING), "why the model stopped, as the provider said it"),
        req("calls", INTEGER, "how many tool calls the answer made"),
        *_later_model_fields(),
        REDACTED,
    ),
)

THINKING = Kind(
    "thinking",
    "what the provider showed of its thinking in a step's answer",
    (
        T,
        STEP,
        req("provider", STRING, "the provider's name"),
        req(
            "block",
            STRING,
            "`thinking`, `redacted_thinking` or `reasoning`",
            choices(ThinkingBlock),
        ),
        req(
            "text",
            STRING,
            'Anthropic\'s thinking text ("" for a redacted block), an OpenAI reasoning summary',
        ),
        REDACTED,
    ),
)

COMPACTION = Kind(
    "compaction",
    "old tool output was compacted to fit the context window before that step's request "
    "([models.md](models.md#context-windows-and-compaction))",
    (
        T,
        STEP,
        req("trigger", STRING, "`near-limit` or `provider-limit`", choices(Trigger)),
        req(
            "context_window", nullable(INTEGER), "the model's context window, in tokens, when known"
        ),
        req("estimated_tokens_before", INTEGER, "the request's estimated tokens before"),
        req("estimated_tokens_after", INTEGER, "the same, after"),
        req("calls", ARRAY, "the seqs of the calls whose outputs were shrunk"),
        req("results", INTEGER, "how many tool results were shrunk"),
        req("chars_removed", INTEGER, "characters removed"),
        req(
            "reasoning_dropped",
            INTEGER,
            "thinking blocks and reasoning items of older turns dropped",
        ),
        REDACTED,
    ),
)

MODEL_ERROR = Kind(
    "model-error",
    "a failed model request",
    (
        T,
        STEP,
        req("attempt", INTEGER, "which attempt failed"),
        req("status", nullable(INTEGER), "the HTTP status, or null"),
        req("message", STRING, "what went wrong"),
        req("retrying", BOOLEAN, "whether the request is tried again"),
        REDACTED,
    ),
)

TEXT = Kind(
    "text",
    "the model's prose in a turn that also made tool calls",
    (T, STEP, req("text", STRING, "the prose"), REDACTED),
)
FINAL = Kind(
    "final",
    "the model's final answer (a turn without tool calls)",
    (T, STEP, req("text", STRING, "the answer"), REDACTED),
)
INTERRUPT = Kind(
    "interrupt",
    "the first Ctrl-C",
    (T, req("message", STRING, "what the session does about it"), REDACTED),
)
STOP = Kind(
    "stop",
    "why the loop stopped",
    (
        T,
        req(
            "reason",
            STRING,
            "`finished`, `max-steps`, `rejections`, `provider-error` or `interrupted`",
            choices(StopReason),
        ),
        req("message", STRING, "the same, for humans"),
        req("steps", INTEGER, "how many steps the loop took (each one model request)"),
        REDACTED,
    ),
)
CLOSED = Kind(
    "closed",
    "the process that owned the session (`run`, `repl`, `mcp`) ended it",
    (
        T,
        req(
            "stop",
            nullable(STRING),
            "the last `stop` record's `reason` (`finished`, `max-steps`, `rejections`, "
            "`provider-error` or `interrupted`), or null when the loop never stopped, as in `mcp`",
            choices(StopReason),
        ),
    ),
)

RECOVERY = Kind(
    "recovery",
    "a torn line closed",
    (
        req("torn_line", INTEGER, "the number of the previous line, which a crash cut mid-write"),
        req("torn_bytes", INTEGER, "how long it is, in bytes"),
    ),
)

KINDS: tuple[Kind, ...] = (REVIEW, ALERT, RUN, USER, MODEL, THINKING, COMPACTION, MODEL_ERROR)
KINDS += (TEXT, FINAL, INTERRUPT, STOP, CLOSED, RECOVERY)
