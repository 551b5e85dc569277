"""The scripted model (`replay:PATH`): plays a JSON file of assistant turns in order."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core import EpistemicError, field, struct
from .base import Message, ModelOptions, ProviderError, StreamSink, ToolCall, Turn


class ScriptError(EpistemicError, ValueError):
    """The script file is missing or malformed; the message says where."""


def load_script(path: Path) -> list[Turn]:
    """Read and check a script file: a JSON array of `{"calls": [...]}` / `{"final": ...}`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScriptError(f"script {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ScriptError(f"script {path} cannot be read: {error}") from None
    except (ValueError, RecursionError) as error:
        raise ScriptError(f"script {path} is not valid JSON: {error}") from None
    if not isinstance(data, list) or not data:
        raise ScriptError(f"script {path} must be a non-empty JSON array of turns")
    return [_turn(path, index, item) for index, item in enumerate(data, start=1)]


def _turn(path: Path, index: int, item: Any) -> Turn:
    where = f"{path}: turn {index}"
    if not isinstance(item, dict):
        raise ScriptError(f"{where} must be an object with `calls` or `final`")
    unknown = set(item) - {"calls", "final", "text"}
    if unknown or ("calls" in item) == ("final" in item):
        raise ScriptError(
            f"{where} must have exactly one of `calls` and `final` "
            f"(and optionally `text`); it has {sorted(item)}"
        )
    if "final" in item:
        if not isinstance(item["final"], str):
            raise ScriptError(f"{where}: `final` must be a string")
        return Turn(item["final"], (), stop_reason="end_turn")
    calls = item["calls"]
    if not isinstance(calls, list) or not calls:
        raise ScriptError(f"{where}: `calls` must be a non-empty array")
    text = item.get("text", "")
    if not isinstance(text, str):
        raise ScriptError(f"{where}: `text` must be a string")
    parsed = (
        _call(f"{where}, call {n}", f"replay-{index}-{n}", c) for n, c in enumerate(calls, start=1)
    )
    return Turn(text, tuple(parsed), stop_reason="tool_use")


def _call(where: str, default_id: str, call: Any) -> ToolCall:
    """A scripted call; `args` may be malformed on purpose, and `"id": null` means no id."""
    if not isinstance(call, dict) or "tool" not in call or "args" not in call:
        raise ScriptError(f"{where} must be an object with `tool` and `args`")
    call_id = call.get("id", default_id)
    tool = call["tool"]
    return ToolCall(
        call_id if isinstance(call_id, str) else None,
        tool if isinstance(tool, str) else None,
        call["args"],
    )


@struct(frozen=False)
class ReplayProvider:
    """Plays the turns in order; reports clearly when they run out or are left over."""

    path: Path
    name: str = "replay"
    turns: list[Turn] = field(default_factory=list)
    played: int = 0
    options: ModelOptions | None = None  # no model behind it: no window to keep to
    cache_key: str | None = None  # nothing is cached

    def __post_init__(self) -> None:
        self.model = str(self.path)
        self.turns = load_script(self.path)

    streams = False  # a script's turns come whole

    def complete(
        self, system: str, messages: Sequence[Message], sink: StreamSink | None = None
    ) -> Turn:
        if self.played >= len(self.turns):
            raise ProviderError(
                f"the script {self.path} has no turn left: all {len(self.turns)} "
                "were played and the loop asked for another"
            )
        turn = self.turns[self.played]
        self.played += 1
        return turn  # a script has no token usage: Usage() stays empty

    @property
    def leftover(self) -> int:
        return len(self.turns) - self.played
