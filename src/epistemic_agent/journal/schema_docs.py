"""The field tables of docs/journal-format.md, generated from the record schema (journal/
schema/). Each table sits between markers the prose around it keeps:

    <!-- generated: kind outcome -->      the fields of a record kind
    <!-- generated: fields versions -->   the fields of an object inside records
    <!-- generated: summary run user -->  kinds with what each records
    <!-- generated: lines -->             the fields every line starts with
    <!-- generated: migrations -->        the named migrations
    ...
    <!-- end generated -->

`python -m epistemic_agent.cli.journal_docs [FILE]` rewrites FILE (default
docs/journal-format.md) in place; `--check` only says whether it is current (exit 1 if not)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from .migrations import MIGRATIONS
from .schema import CHAIN, KINDS, NESTED

if TYPE_CHECKING:
    from .schema import Field

BLOCK = re.compile(r"(<!-- generated: ([^>]*?) -->\n)(.*?)(<!-- end generated -->)", re.S)
DEFAULT = Path("docs/journal-format.md")


def render(text: str) -> str:
    """The document with every generated table rebuilt from the schema."""
    return BLOCK.sub(lambda m: m.group(1) + _table(m.group(2).split()) + m.group(4), text)


def _table(what: list[str]) -> str:
    head, names = what[0], what[1:]
    if head == "kind":
        return fields_table(KINDS[names[0]].fields)
    if head == "fields":
        return fields_table(NESTED[names[0]])
    if head == "lines":
        return fields_table(CHAIN)
    if head == "summary":
        rows = [f"| `{name}` | {KINDS[name].heading} |" for name in names]
        return "\n".join(["| kind | what it records |", "|------|-----------------|", *rows, ""])
    if head == "migrations":
        return _migrations()
    raise ValueError(f"unknown generated block: {' '.join(what)}")


def fields_table(fields: tuple[Field, ...]) -> str:
    """A markdown table of fields; adjacent fields with the same meaning share a row."""
    lines = ["| field | type | required | meaning |", "|-------|------|----------|---------|"]
    groups: list[list[Field]] = []
    for item in fields:
        if groups and groups[-1][0].meaning == item.meaning:
            groups[-1].append(item)
        else:
            groups.append([item])
    for group in groups:
        names = ", ".join(f"`{item.name}`" for item in group)
        types = list(dict.fromkeys(item.type.name for item in group))
        kinds = types[0] if len(types) == 1 else ", ".join(item.type.name for item in group)
        required = "yes" if group[0].required else "no"
        lines.append(f"| {names} | {kinds} | {required} | {_cell(group[0].meaning)} |")
    return "\n".join(lines) + "\n"


def _migrations() -> str:
    lines = ["| name | kinds | version | applies to records | what it does |"]
    lines.append("|------|-------|---------|--------------------|--------------|")
    for item in MIGRATIONS:
        kinds = ", ".join(f"`{kind}`" for kind in item.kinds)
        cells = (f"`{item.name}`", kinds, str(item.version), item.era, item.does)
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
