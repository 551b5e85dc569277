"""The shape of a policy file as it is read: its rules and examples before they are compiled,
and where in the text each table and key was written (`tomllib` does not say, so `Spots`
scans the text once for table headers and keys, skipping multi-line strings).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..core import struct

if TYPE_CHECKING:
    from typing import Any

_HEADER = re.compile(r"\s*(\[\[?)\s*([^\]]*?)\s*\]")
_KEY = re.compile(r"""\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*=(?!=)(.*)""")

Errors = list[tuple[int, str]]


@struct
class Example:
    """Facts a rule's condition must hold for (`match`) or must not."""

    label: str
    line: int
    facts: dict[str, Any]
    match: bool


@struct
class RuleSpec:
    """A well-formed rule, not yet compiled; `when_line` is the condition's first line."""

    id: str
    when: str
    decision: str
    message: str
    line: int
    when_line: int
    examples: tuple[Example, ...]
    allowed_signers: str | None = None  # who may approve what this rule asks about


class Spots:
    """The first line of each key: at top level, in each [[rule]], in each [[rule.example]]."""

    def __init__(self, text: str) -> None:
        self.top: dict[str, int] = {}
        self.rules: list[dict[str, int]] = []
        self.examples: dict[tuple[int, int], dict[str, int]] = {}
        self.hooks: list[dict[str, int]] = []
        self.tables: dict[str, dict[str, int]] = {}
        self.lines = text.count("\n") + 1
        context: dict[str, int] | None = self.top
        open_string: str | None = None
        for number, line in enumerate(text.splitlines(), start=1):
            if open_string is not None:
                if open_string in line:
                    open_string = None
                continue
            header = _HEADER.match(line)
            key = None if header else _KEY.match(line)
            if header:
                context = self._enter(header.group(1), re.sub(r"[\s\"']", "", header[2]), number)
            elif key and context is not None:
                name = next(group for group in key.groups()[:3] if group is not None)
                context.setdefault(name, number)
                if name == "when":
                    multi = re.match(r"\s*(\"\"\"|''')\s*$", key.group(4))
                    context.setdefault("when@", number + 1 if multi else number)
            for quote in ('"""', "'''"):
                if line.count(quote) % 2:
                    open_string = quote
                    break

    def _enter(self, brackets: str, name: str, number: int) -> dict[str, int] | None:
        self.top.setdefault(name.split(".", 1)[0], number)
        if brackets == "[[" and name == "rule":
            self.rules.append({"": number})
            return self.rules[-1]
        if brackets == "[[" and name == "rule.example" and self.rules:
            index = len(self.rules) - 1
            count = sum(1 for rule, _ in self.examples if rule == index)
            self.examples[index, count] = {"": number}
            return self.examples[index, count]
        if brackets == "[[" and name == "hook":
            self.hooks.append({"": number})
            return self.hooks[-1]
        if brackets == "[" and name in ("approval", "secrets", "sandbox", "supervisor"):
            return self.tables.setdefault(name, {"": number})
        return None

    def rule(self, index: int, key: str = "") -> int:
        spots = self.rules[index] if index < len(self.rules) else {}
        return spots.get(key) or spots.get("") or self.top.get("rule", 1)

    def hook(self, index: int, key: str = "") -> int:
        spots = self.hooks[index] if index < len(self.hooks) else {}
        return spots.get(key) or spots.get("") or self.top.get("hook", 1)

    def table(self, name: str, key: str = "") -> int:
        spots = self.tables.get(name, {})
        return spots.get(key) or spots.get("") or self.top.get(name, 1)

    def example(self, index: int, number: int) -> int:
        return self.examples.get((index, number), {}).get("") or self.rule(index, "example")


def read_table(
    name: str, value: object, keys: tuple[str, ...], spots: Spots, errors: Errors
) -> dict[str, Any]:
    """The table `name` of a policy file, its unknown keys reported with their line ({} when
    it is absent or not a table)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.append((spots.top.get(name, 1), f"`{name}` must be a table: [{name}]"))
        return {}
    for key in value:
        if key not in keys:
            errors.append(
                (
                    spots.table(name, key),
                    f"[{name}]: unknown key {key!r} (it has {', '.join(keys)})",
                )
            )
    return value
