"""Merge what `epistemic init` wants into a user's files, keeping everything else.

Four kinds of file: JSON and TOML configs (values set at a key path, or items added to a
list), a Markdown file with one delimited section, and a line-based `.gitignore`. Each merge
returns the new text, notes that say what changed, and conflicts: values of the user's that
init would replace, which only `force` allows. A file that does not parse is an error
(`MergeError`), whatever `force` says: init never rewrites what it cannot read.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..core import EpistemicError, field, struct

if TYPE_CHECKING:
    from typing import Any

SECTION_BEGIN = "<!-- epistemic:begin -->"
SECTION_END = "<!-- epistemic:end -->"


class MergeError(EpistemicError):
    """A file init cannot merge into: it does not parse, or its shape is not a config's."""


@struct
class Want:
    """A value at a key path; with `union`, a list that must hold these items (others kept)."""

    keys: tuple[str, ...]
    value: Any
    union: bool = False


@struct
class Merged:
    text: str
    notes: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


def merge_json(before: str | None, wants: list[Want], force: bool) -> Merged:
    if before is None or not before.strip():
        document: Any = {}
    else:
        try:
            document = json.loads(before)
        except (ValueError, RecursionError) as error:
            raise MergeError(f"not valid JSON ({error})") from None
        if not isinstance(document, dict):
            raise MergeError("not a JSON object")
    notes, conflicts = _apply(document, wants, force, _JsonTables())
    return Merged(dump_json(document) + "\n", notes, conflicts)


def dump_json(value: Any, indent: str = "") -> str:
    """Indented JSON whose lists of up to four plain values stay on one line (by count, not
    width: the layout must not depend on how long a path is)."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = [f"{inner}{_show(key)}: {dump_json(item, inner)}" for key, item in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    if isinstance(value, list) and value and (len(value) > 4 or _nested(value)):
        items = [f"{inner}{dump_json(item, inner)}" for item in value]
        return "[\n" + ",\n".join(items) + f"\n{indent}]"
    return _show(value)


def _nested(items: list[Any]) -> bool:
    return any(isinstance(item, (dict, list)) and item for item in items)


def merge_toml(before: str | None, wants: list[Want], force: bool, header: str) -> Merged:
    """TOML through tomlkit, which keeps the user's comments, order and layout."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    if before is None or not before.strip():
        document: Any = tomlkit.document()
        for line in header.splitlines():
            document.add(tomlkit.comment(line))
    else:
        try:
            document = tomlkit.parse(before)
        except (TOMLKitError, ValueError, RecursionError) as error:
            raise MergeError(f"not valid TOML ({error})") from None
    notes, conflicts = _apply(document, wants, force, _TomlTables())
    return Merged(tomlkit.dumps(document), notes, conflicts)


class _JsonTables:
    def is_table(self, value: Any) -> bool:
        return isinstance(value, dict)

    def new(self, leaf_parent: bool) -> Any:
        return {}

    def plain(self, value: Any) -> Any:
        return value


class _TomlTables:
    def is_table(self, value: Any) -> bool:
        from collections.abc import MutableMapping

        return isinstance(value, MutableMapping)

    def new(self, leaf_parent: bool) -> Any:
        import tomlkit

        # a table that only holds tables prints no header of its own: [mcp_servers.epistemic]
        return tomlkit.table(is_super_table=not leaf_parent)

    def plain(self, value: Any) -> Any:
        unwrap = getattr(value, "unwrap", None)
        return unwrap() if unwrap is not None else value


def _apply(document: Any, wants: list[Want], force: bool, kind: Any) -> tuple[list[str], list[str]]:
    notes: list[str] = []
    conflicts: list[str] = []
    for want in wants:
        node = _parent(document, want.keys, force, kind, notes, conflicts)
        if node is None:
            continue
        name, shown = want.keys[-1], ".".join(want.keys)
        if name not in node:
            node[name] = list(want.value) if want.union else want.value
            notes.append(f"set {shown} = {_show(want.value)}")
            continue
        current = kind.plain(node[name])
        if want.union and isinstance(current, list):
            missing = [item for item in want.value if item not in current]
            if missing:
                node[name].extend(missing)
                notes.append(f"added to {shown}: {', '.join(map(_show, missing))}")
        elif current != want.value:
            if not force:
                conflicts.append(
                    f"{shown} is {_show(current)}; init sets {_show(want.value)} "
                    "(--force replaces it)"
                )
                continue
            node[name] = list(want.value) if want.union else want.value
            notes.append(f"replaced {shown} (was {_show(current)}) with {_show(want.value)}")
    return notes, conflicts


def _parent(
    document: Any,
    keys: tuple[str, ...],
    force: bool,
    kind: Any,
    notes: list[str],
    conflicts: list[str],
) -> Any:
    """The table that holds the last key, created where missing; None on a conflict."""
    node = document
    for depth, name in enumerate(keys[:-1], start=1):
        leaf_parent = depth == len(keys) - 1
        if name not in node:
            node[name] = kind.new(leaf_parent)
        elif not kind.is_table(node[name]):
            shown = ".".join(keys[:depth])
            if not force:
                conflicts.append(f"{shown} is {_show(kind.plain(node[name]))}, not a table")
                return None
            notes.append(f"replaced {shown} (was {_show(kind.plain(node[name]))}) with a table")
            node[name] = kind.new(leaf_parent)
        node = node[name]
    return node


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a `\ud800` escape in the user's JSON)
        return json.dumps(value)
    return text


def merge_section(before: str | None, body: str, force: bool) -> Merged:
    """A Markdown file holding our section between two HTML comments (the rest is kept)."""
    section = f"{SECTION_BEGIN}\n{body.strip()}\n{SECTION_END}\n"
    if before is None or not before.strip():
        return Merged(section, ["wrote the epistemic section"])
    begins, ends = before.count(SECTION_BEGIN), before.count(SECTION_END)
    if begins == ends == 0:
        glue = "" if before.endswith("\n\n") else "\n" if before.endswith("\n") else "\n\n"
        return Merged(before + glue + section, ["appended the epistemic section"])
    start, stop = before.find(SECTION_BEGIN), before.find(SECTION_END)
    if begins != 1 or ends != 1 or stop < start:
        raise MergeError(f"its {SECTION_BEGIN} ... {SECTION_END} markers are not one pair")
    stop += len(SECTION_END)
    if before[stop : stop + 1] == "\n":
        stop += 1
    if before[start:stop] == section:
        return Merged(before)
    if not force:
        return Merged(before, conflicts=["its epistemic section differs (--force replaces it)"])
    return Merged(before[:start] + section + before[stop:], ["replaced the epistemic section"])


def merge_lines(before: str | None, lines: list[str], comment: str) -> Merged:
    """A `.gitignore`: our patterns appended where no equivalent line is there already."""
    text = before or ""
    present = {_pattern(line) for line in text.splitlines()}
    missing = [line for line in lines if _pattern(line) not in present]
    if not missing:
        return Merged(text)
    glue = "" if not text or text.endswith("\n") else "\n"
    spacer = "\n" if text.strip() else ""
    block = "\n".join([comment, *missing]) + "\n"
    return Merged(text + glue + spacer + block, [f"added {', '.join(missing)}"])


def _pattern(line: str) -> str:
    """`/.epistemic/`, `.epistemic/` and `.epistemic` name the same folder at the root."""
    return line.strip().lstrip("/").rstrip("/")
