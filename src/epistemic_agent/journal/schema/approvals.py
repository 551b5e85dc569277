"""The records of a human's decision on a call the policy asked about: `approval`, and
`approval-rejected` for an answer that did not count."""

from __future__ import annotations

from .types import BOOLEAN, INTEGER, NUMBER, STRING, Field, Kind, choices, nullable, opt, req
from .values import ApprovalDecision


def _claims(meaning: str) -> tuple[Field, Field, Field]:
    """`uid`, `host`, `pid`: what an answer says of the process that gave it."""
    return (
        opt("uid", INTEGER, meaning),
        opt("host", STRING, meaning),
        opt("pid", INTEGER, meaning),
    )


APPROVAL = Kind(
    "approval",
    "a human's decision on a call the policy asked about",
    (
        req("seq", INTEGER, "the call it decides"),
        req("t", STRING, "when it was recorded"),
        req("decision", STRING, "`approved` or `denied`", choices(ApprovalDecision)),
        req(
            "by",
            nullable(STRING),
            "who: the `--as NAME` given to `epistemic approve`/`deny`, or the OS user (at a "
            "terminal, the session's user); null when nobody answered",
        ),
        req(
            "channel",
            STRING,
            "`terminal` (asked at the session's terminal) or `file` (answered with `epistemic "
            "approve`/`deny`); an approver added to `approvals/approvers.py` names its own",
        ),
        req("rule", nullable(STRING), "the policy rule that asked (null: the policy's default)"),
        req(
            "comment",
            STRING,
            "the human's comment (\"\" when none); a denial's comment goes back to the model",
        ),
        req("requested", STRING, "when the question was asked"),
        req("answered", STRING, "when it was answered"),
        req("waited", NUMBER, "seconds between the two"),
        opt(
            "timed_out",
            BOOLEAN,
            "present and true when nobody answered in time (the call is denied)",
        ),
        *_claims(
            "file channel: the OS user id, host and process of `epistemic approve`/`deny`, as "
            "its answer states them (claims, not proof; `approve` finds the verdict on its own "
            "answer by them)"
        ),
        opt(
            "signed",
            BOOLEAN,
            "whether a signature vouches for the answer (false only where the policy says "
            '`signatures = "optional"`)',
        ),
        opt(
            "signer",
            STRING,
            "signed: the principal the allowed_signers file gives the key that signed; `by` is "
            "the same",
        ),
        opt("key", STRING, "signed: the SHA256 fingerprint of that key"),
        opt(
            "statement",
            STRING,
            "signed: the exact text that was signed (session, seq, the call's line hash, "
            "decision, time, comment; see [policy.md](policy.md#signed-approvals))",
        ),
        opt(
            "signature",
            STRING,
            "signed: the armored SSH signature (`ssh-keygen -Y sign`, namespace "
            "`epistemic-approval`)",
        ),
        opt("claimed_by", STRING, "a name the answer gave (`--as`) that is not the signer's"),
        opt(
            "unsigned",
            STRING,
            "a denial at the terminal that could not be signed where the policy requires "
            "signatures: why (a denial stands unsigned; an approval would not)",
        ),
    ),
)

_TERMINAL_ANSWER = (
    "an answer given at the session's terminal that did not count (unsigned where signatures "
    "are required, or signed by a key the allowed signers do not know): what the person "
    "answered (`approved` or `denied`), `terminal`, and their comment; the call then waits "
    "for a signed answer from another shell"
)

APPROVAL_REJECTED = Kind(
    "approval-rejected",
    "an answer that did not count",
    (
        req("seq", INTEGER, "the call the answer was for"),
        req("t", STRING, "when it was refused"),
        req(
            "why",
            STRING,
            "why: unsigned where signatures are required, signed by a key the allowed signers "
            "do not know, by another principal than the one named, over a statement that does "
            "not match the request (another session, call or decision), outside the time the "
            "request was open, with no matching nonce (replayed or forged), or unreadable",
        ),
        opt(
            "claimed_by",
            nullable(STRING),
            "the name the answer gave (`--as`; at a terminal, the session's OS user), which is "
            "only a claim",
        ),
        *_claims("what the answer file says of the process that wrote it (also only claims)"),
        opt("decision", STRING, _TERMINAL_ANSWER, choices(ApprovalDecision)),
        opt("channel", STRING, _TERMINAL_ANSWER, ("terminal",)),
        opt("comment", STRING, _TERMINAL_ANSWER),
    ),
)

KINDS = (APPROVAL, APPROVAL_REJECTED)
