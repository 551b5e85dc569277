"""Checking a record against the schema, for its writer (`check`: a violation is a
programming error, raised before anything is written) and its readers (`parse`: a typed view
of a known kind, or `Unknown`, with what was wrong said, never raised).

Plain Python, a dictionary lookup or two per field: readers parse thousands of sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ...core import struct
from .registry import CHAIN_NAMES, FIELD_MAPS, REQUIRED

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .types import Field
    from .values import RecordKind


class RecordError(ValueError):
    """A record a writer was about to append does not fit the schema: a bug in the writer."""


@struct
class Known:
    """A record of a kind this reader knows. `fields`: its known fields that have the type the
    schema gives them; `extra`: fields this reader does not know (kept, never dropped);
    `problems`: what was wrong (a required field missing, a field of the wrong type or outside
    its closed set: such a field is left out of `fields`); `raw`: the record as read."""

    kind: RecordKind
    fields: dict[str, Any]
    extra: dict[str, Any]
    problems: tuple[str, ...]
    raw: Mapping[str, Any]

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)


@struct
class Unknown:
    """A record of a kind this reader does not know (a newer writer's, or none): kept raw."""

    kind: str | None
    raw: Mapping[str, Any]


def check(record: Mapping[str, Any]) -> None:
    """Raise RecordError unless the record fits the schema: its kind known, its required
    fields present, every field one the kind has, of its type, within its closed set."""
    found = problems(record, strict=True)
    if found:
        raise RecordError(
            f"a `{record.get('kind')}` record does not fit the journal's schema: "
            + "; ".join(found)
        )


def problems(record: Mapping[str, Any], *, strict: bool = False) -> list[str]:
    """What is wrong with a record; `strict` (writers) also counts fields the kind lacks."""
    kind = record.get("kind")
    fields = FIELD_MAPS.get(kind) if type(kind) is str else None
    if fields is None:
        return [f"the kind {kind!r} is not one of the journal's"]
    found: list[str] = []
    for name, value in record.items():
        spec = fields.get(name)
        if spec is not None:
            found += _wrong(spec, value, strict)
        elif strict and name not in CHAIN_NAMES:
            found.append(f"`{name}` is no field of `{kind}`")
    found += [f"`{name}` is missing" for name in REQUIRED[cast("str", kind)] if name not in record]
    return found


def parse(record: Mapping[str, Any]) -> Known | Unknown:
    """A typed view of one record (read through `migrations.upgrade` first, for records of
    earlier eras), or Unknown for a kind this reader does not know."""
    kind = record.get("kind")
    fields = FIELD_MAPS.get(kind) if type(kind) is str else None
    if fields is None:
        return Unknown(kind if type(kind) is str else None, record)
    typed: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    wrong: list[str] = []
    for name, value in record.items():
        spec = fields.get(name)
        if spec is None:
            if name not in CHAIN_NAMES:
                extra[name] = value
            continue
        said = _wrong(spec, value, False)
        if said:
            wrong += said
        else:
            typed[name] = value
    named = cast("str", kind)
    wrong += [f"`{name}` is missing" for name in REQUIRED[named] if name not in record]
    return Known(cast("RecordKind", named), typed, extra, tuple(wrong), record)


def _wrong(spec: Field, value: object, strict: bool, within: str = "") -> list[str]:
    """What is wrong with one field's value: its type, its closed set, its inner fields."""
    name = within + spec.name
    if not spec.type.test(value):
        return [f"`{name}` is not {_article(spec.type.name)}"]
    if spec.values and value is not None and value not in spec.values:
        return [f"`{name}` is {value!r}, not one of {', '.join(spec.values)}"]
    if spec.inner and isinstance(value, dict):
        return _inner(spec, value, strict, name + ".")
    return []


def _inner(spec: Field, value: dict[str, Any], strict: bool, within: str) -> list[str]:
    inner = {item.name: item for item in spec.inner}
    found: list[str] = []
    for key, item in value.items():
        known = inner.get(key)
        if known is not None:
            found += _wrong(known, item, strict, within)
        elif strict:
            found.append(f"`{within}{key}` is no field of it")
    return found + [
        f"`{within}{i.name}` is missing" for i in spec.inner if i.required and i.name not in value
    ]


def _article(name: str) -> str:
    return ("an " if name[0] in "aeiou" else "a ") + name
