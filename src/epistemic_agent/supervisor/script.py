"""The scripted supervisor (`--supervisor replay:PATH`): verdicts from a JSON file, no model.

The script is a JSON array of entries. Each answers reviews:
- `{"when": TEXT, ...}` answers every review whose call (reason, command, path, edit) holds
  TEXT; these are tried first, in order, and never used up;
- `{"default": true, ...}` answers every review nothing else answers (at most one);
- any other entry answers the next review, once, in order.

What an entry answers with: `"verdict"` (with `"note"` and `"beliefs"`) is sent as the JSON a
model would write; `"text"` is sent exactly as given (to play a malformed answer); `"error"`
is a provider failure with that message. `"usage"` reports token counts, as a model would.
With nothing left to answer, the review fails as a provider error would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import EpistemicError, ProviderError, field, read_regular, struct
from ..providers import Message, ModelOptions, StreamSink, Turn, Usage, UserMessage

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

ANSWERS = ("verdict", "text", "error")
ENTRY_KEYS = (*ANSWERS, "note", "beliefs", "when", "default", "usage")
USAGE_KEYS = ("input_tokens", "completion_tokens")
SCRIPT_MAX_BYTES = 16 << 20


class SupervisorScriptError(EpistemicError, ValueError):
    """The script is missing or malformed; the message says where."""


def load_verdicts(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(read_regular(path, SCRIPT_MAX_BYTES).decode("utf-8"))
    except FileNotFoundError:
        raise SupervisorScriptError(f"supervisor script {path} does not exist") from None
    except OSError as error:
        raise SupervisorScriptError(
            f"supervisor script {path} cannot be read: {error.strerror or error}"
        ) from None
    except UnicodeDecodeError as error:
        raise SupervisorScriptError(f"supervisor script {path} cannot be read: {error}") from None
    except (ValueError, RecursionError) as error:
        raise SupervisorScriptError(
            f"supervisor script {path} is not valid JSON: {error}"
        ) from None
    if not isinstance(data, list) or not data:
        raise SupervisorScriptError(
            f"supervisor script {path} must be a non-empty JSON array of verdict entries"
        )
    for index, entry in enumerate(data, start=1):
        _check(f"supervisor script {path}: entry {index}", entry)
    if sum(1 for entry in data if entry.get("default") is True) > 1:
        raise SupervisorScriptError(f"supervisor script {path}: more than one default entry")
    return data


def _check(where: str, entry: Any) -> None:
    if not isinstance(entry, dict):
        raise SupervisorScriptError(f"{where} must be an object")
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        raise SupervisorScriptError(f"{where}: unknown key(s) {unknown} (it may have {ENTRY_KEYS})")
    answers = [key for key in ANSWERS if key in entry]
    if len(answers) != 1:
        raise SupervisorScriptError(f"{where} must have exactly one of {', '.join(ANSWERS)}")
    if answers[0] in ("text", "error") and not isinstance(entry[answers[0]], str):
        raise SupervisorScriptError(f"{where}: `{answers[0]}` must be a string")
    if "when" in entry and (not isinstance(entry["when"], str) or not entry["when"]):
        raise SupervisorScriptError(f"{where}: `when` must be a non-empty string")
    if "default" in entry and entry["default"] is not True:
        raise SupervisorScriptError(f"{where}: `default` can only be true")
    if "when" in entry and "default" in entry:
        raise SupervisorScriptError(f"{where}: an entry has `when` or `default`, not both")
    usage = entry.get("usage", {})
    if not isinstance(usage, dict) or not all(
        key in USAGE_KEYS and isinstance(n, int) and not isinstance(n, bool) and n >= 0
        for key, n in usage.items()
    ):
        raise SupervisorScriptError(
            f"{where}: `usage` must map {' and '.join(USAGE_KEYS)} to token counts"
        )


@struct(frozen=False)
class ScriptedSupervisor:
    """A provider for the supervisor that answers from a verdict script."""

    path: Path
    name: str = "replay"
    entries: list[dict[str, Any]] = field(default_factory=list)
    played: int = 0
    options: ModelOptions | None = None  # no model behind it: no window to keep to
    cache_key: str | None = None  # nothing is cached

    def __post_init__(self) -> None:
        self.model = str(self.path)
        self.entries = load_verdicts(self.path)
        self._ordered = [e for e in self.entries if "when" not in e and "default" not in e]

    streams = False  # a verdict comes whole
    leftover = 0  # verdicts left over are not a stop of the loop's

    def complete(
        self, system: str, messages: Sequence[Message], sink: StreamSink | None = None
    ) -> Turn:
        entry = self._entry(_call_text(messages))
        if entry is None:
            raise ProviderError(
                f"the supervisor script {self.path} has no verdict left: all "
                f"{len(self._ordered)} were played and another call was reviewed"
            )
        usage = entry.get("usage", {})
        counts = Usage(
            prompt_tokens=usage.get("input_tokens"),
            input_tokens=usage.get("input_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )
        if "error" in entry:
            raise ProviderError(str(entry["error"]))
        if "text" in entry:
            return Turn(str(entry["text"]), usage=counts, stop_reason="end_turn")
        answer = {k: entry[k] for k in ("verdict", "note", "beliefs") if k in entry}
        return Turn(json.dumps(answer, ensure_ascii=False), usage=counts, stop_reason="end_turn")

    def _entry(self, call: str) -> dict[str, Any] | None:
        for entry in self.entries:
            if "when" in entry and entry["when"] in call:
                return entry
        if self.played < len(self._ordered):
            self.played += 1
            return self._ordered[self.played - 1]
        return next((entry for entry in self.entries if entry.get("default") is True), None)


def _call_text(messages: Sequence[Message]) -> str:
    """The reviewed call's own words (not the digest of earlier ones), to match `when`."""
    last = messages[-1] if messages else None
    if not isinstance(last, UserMessage):
        return ""
    try:
        request = json.loads(last.text)
    except ValueError:
        return last.text
    call = request.get("call") if isinstance(request, dict) else None
    if not isinstance(call, dict):
        return last.text
    return "\n".join(str(value) for value in call.values() if isinstance(value, str))
