"""The type each field of a record must have for readers, by record kind, from the record
schema (journal/schema/): a field of the wrong type (a foreign or broken writer's) is removed,
so that it reads as absent, with a note; and notes on lines older than this reader or without
a format version."""

from __future__ import annotations

import math
from collections import Counter

from .log import FORMAT_VERSION, Record
from .schema import KINDS, Kind

#: What each type is called in a note.
TYPES = {
    "text": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
}
#: The schema's JSON types (journal/schema/types.py), as this check names them.
_FROM_SCHEMA = {"string": "text"} | {name: name for name in TYPES if name != "text"}


def _from_schema(kind: Kind) -> dict[str, str]:
    """{field: type} of a record kind, from the schema (fields of any type are left out)."""
    typed = ((item.name, _FROM_SCHEMA.get(item.type.json)) for item in kind.fields)
    return {name: wanted for name, wanted in typed if wanted is not None}


#: Every record's `t`; then, by record kind, the type each field must have (null is as if
#: absent), as the record schema gives them.
COMMON = {"t": "text"}
FIELDS: dict[str, dict[str, str]] = {name: _from_schema(kind) for name, kind in KINDS.items()}
#: The object inside a record whose fields are lists of paths, by record kind.
PATH_LISTS = {
    "call": ("effect", ("writes", "deletes")),
    "outcome": ("observed", ("created", "modified", "deleted")),
}


def check_fields(numbered: list[tuple[int, Record]]) -> list[str]:
    """Remove each field readers rely on (COMMON, FIELDS, PATH_LISTS) that has the wrong type,
    so that it reads as absent; one note says how many, which, and where."""
    dropped: dict[str, list[int]] = {}
    for line, record in numbered:
        kind = record.get("kind")
        kind = kind if isinstance(kind, str) else ""
        named = kind if kind in FIELDS else "record"  # a foreign kind is not echoed
        for what in _drop_wrong(record, kind):
            dropped.setdefault(f"{named} {what}", []).append(line)
    if not dropped:
        return []
    total = sum(map(len, dropped.values()))
    parts = [f"{what} (line {_lines(lines)})" for what, lines in dropped.items()]
    shown = "; ".join(parts[:4]) + ("; …" if len(parts) > 4 else "")
    seq = any("`seq`" in what for what in dropped)
    unplaced = "; a record without its `seq` cannot be matched to its call" if seq else ""
    return [f"{total} field(s) of the wrong type were read as absent: {shown}{unplaced}"]


def _drop_wrong(record: Record, kind: str) -> list[str]:
    """Remove the fields of one record that have the wrong type; say which."""
    wrong = []
    for name, wanted in FIELDS.get(kind, COMMON).items():
        value = record.get(name)
        if type(value) is not _EXACT.get(wanted) and not _fits(value, wanted):
            del record[name]
            wrong.append(f"`{name}` is not {TYPES[wanted]}")
    owner, names = PATH_LISTS.get(kind, ("", ()))
    inner = record.get(owner)
    if isinstance(inner, dict):
        for name in names:
            if not _fits(inner.get(name), "array"):
                del inner[name]
                wrong.append(f"`{owner}.{name}` is not an array")
    return wrong


#: The Python type JSON gives each type (a number is an int or a finite float).
_EXACT = {"text": str, "integer": int, "boolean": bool, "object": dict, "array": list}


def _fits(value: object, wanted: str) -> bool:
    """Whether a field's value has the type wanted (null: as if absent, always fits)."""
    if value is None:
        return True
    if type(value) is bool:
        return wanted == "boolean"
    if wanted == "number":
        return type(value) is int or (type(value) is float and math.isfinite(value))
    return isinstance(value, _EXACT[wanted])


def _lines(lines: list[int]) -> str:
    return str(lines[0]) if len(lines) == 1 else f"{lines[0]} and {len(lines) - 1} more"


def version_notes(records: list[Record]) -> list[str]:
    """Notes on lines older than this reader, or without a format version: both are read as
    the current version (newer ones are noted by `reading.read_numbered`)."""
    older = Counter(v for r in records if type(v := r.get("v")) is int and v < FORMAT_VERSION)
    unversioned = sum(1 for record in records if type(record.get("v")) is not int)
    read_as = f"read as version {FORMAT_VERSION}"
    read_as += " (the only version there is)" if FORMAT_VERSION == 1 else ""
    notes = [
        f"{count} line(s) have format version {version}, older than this reader's "
        f"{FORMAT_VERSION}; {read_as}"
        for version, count in sorted(older.items())
    ]
    if unversioned:
        notes.append(f"{unversioned} line(s) carry no format version `v`; {read_as}")
    return notes
