"""The declared reason of a call: present, long enough, more than the command's own words, and
for a test-hypothesis both a belief and what would refute it."""

from __future__ import annotations

import re

from .config import GateConfig

_FILLER = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "bash",
        "call",
        "cat",
        "check",
        "cmd",
        "command",
        "do",
        "does",
        "execute",
        "executing",
        "file",
        "files",
        "for",
        "from",
        "in",
        "into",
        "invoke",
        "is",
        "it",
        "its",
        "just",
        "let",
        "lets",
        "me",
        "my",
        "now",
        "of",
        "on",
        "open",
        "our",
        "please",
        "read",
        "run",
        "running",
        "runs",
        "see",
        "shell",
        "show",
        "the",
        "then",
        "this",
        "to",
        "us",
        "use",
        "using",
        "via",
        "view",
        "we",
        "will",
        "with",
        "would",
    ]
)
_BELIEF = re.compile(
    r"\b(believe[sd]?|belief|expect(s|ed|ing)?|suspect(s|ed)?|hypothes\w*|think|assum\w*|"
    r"predict\w*|presum\w*|guess|theory|should|likely|probably)\b"
)
_REFUTATION = re.compile(
    r"\b(refut\w*|disprov\w*|falsif\w*|contradict\w*|otherwise|unless|rule[sd]? out|"
    r"(is|be|am|was|were) wrong|if not|would (mean|show|prove|indicate)|instead)\b"
)
HYPOTHESIS_EXAMPLE = (
    "I believe parse_rows() drops the last row because of an off-by-one; if the count "
    "printed equals the number of lines in the file, that belief is refuted."
)


def check_reason(
    reason: str | None, restated: str, act: str, config: GateConfig
) -> tuple[str, str] | None:
    if reason is None or not reason.strip():
        return "reason-missing", (
            "`reason` is mandatory: say why this act, now, in a sentence. "
            "Explain the intent, not the syntax."
        )
    trimmed = reason.strip()
    if len(trimmed) < config.min_reason:
        return "reason-too-short", (
            f"`reason` is too terse ({len(trimmed)} chars, need >= {config.min_reason}). "
            "Explain the intent, not the syntax."
        )
    if restates(trimmed, restated):
        return "reason-restates-command", (
            "`reason` only restates the command. Say what you want to learn or achieve "
            "and why it matters now."
        )
    if act == "test-hypothesis":
        lowered = trimmed.lower()
        missing = [
            part
            for part, pattern in (
                ("the belief under test", _BELIEF),
                ("what would refute it", _REFUTATION),
            )
            if not pattern.search(lowered)
        ]
        if missing:
            return "hypothesis-incomplete", (
                "test-hypothesis requires the `reason` to state the belief under test and "
                f"what would refute it; missing: {' and '.join(missing)}. "
                f"For example: {HYPOTHESIS_EXAMPLE!r}"
            )
    return None


def restates(reason: str, command: str) -> bool:
    """Whether a reason says nothing beyond the command's own words and filler."""
    command_words = set(_words(command))
    rest = [word for word in _words(reason) if word not in _FILLER]
    return all(word in command_words for word in rest)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())
