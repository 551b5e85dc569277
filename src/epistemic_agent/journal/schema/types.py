"""The building blocks of the record schema: a field's type (what JSON value it holds, as the
docs name it), a field (type, whether required, closed set of values, meaning) and a record
kind (its fields, and the prose that heads its table in docs/journal-format.md)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, get_args

from ...core import field, struct

if TYPE_CHECKING:
    from collections.abc import Callable


@struct
class Type:
    """A JSON type as docs/journal-format.md names it, the JSON type beneath it (`string`,
    `integer`, `number`, `boolean`, `object`, `array`; "" for any), and the test a value must
    pass."""

    name: str
    json: str
    test: Callable[[object], bool] = field(compare=False)


def _number(value: object) -> bool:
    kind = type(value)
    return kind is int or (kind is float and math.isfinite(value))  # type: ignore[arg-type]


STRING = Type("string", "string", lambda v: type(v) is str)
INTEGER = Type("integer", "integer", lambda v: type(v) is int)
NUMBER = Type("number", "number", _number)
BOOLEAN = Type("boolean", "boolean", lambda v: type(v) is bool)
OBJECT = Type("object", "object", lambda v: isinstance(v, dict))
#: A writer may hand a tuple; JSON has only arrays, so a reader sees a list.
ARRAY = Type("array", "array", lambda v: isinstance(v, list | tuple))
STRINGS = Type(
    "array of strings",
    "array",
    lambda v: isinstance(v, list | tuple) and all(type(i) is str for i in v),
)
ANY = Type("any", "", lambda v: True)
#: `{"sha256": hex, "bytes": size, "kept": bytes stored}` (see "Evidence refs").
REF = Type("evidence ref", "object", lambda v: isinstance(v, dict) and type(v.get("sha256")) is str)
#: A side of a `versions` entry: a ref, null (no file) or "empty" (a file of no bytes).
SIDE = Type(
    'evidence ref, null or `"empty"`', "", lambda v: v is None or v == "empty" or REF.test(v)
)


def nullable(kind: Type) -> Type:
    """The same type, or null."""
    return Type(f"{kind.name} or null", kind.json, lambda v: v is None or kind.test(v))


def choices(literal: Any) -> tuple[str, ...]:
    """The values of a closed `Literal[...]` type, in order."""
    return tuple(get_args(literal))


@struct
class Field:
    """One field of a record kind."""

    name: str
    type: Type
    meaning: str
    required: bool = False
    #: The closed set of values the field may hold (null aside), from a `Literal` type.
    values: tuple[str, ...] = ()
    #: The fields of an object-valued field, when the schema describes them.
    inner: tuple[Field, ...] = ()


def req(name: str, kind: Type, meaning: str, values: tuple[str, ...] = ()) -> Field:
    """A field every record of its kind carries."""
    return Field(name, kind, meaning, True, values)


def opt(name: str, kind: Type, meaning: str, values: tuple[str, ...] = ()) -> Field:
    """A field that may be absent."""
    return Field(name, kind, meaning, False, values)


@struct
class Kind:
    """One record kind: its name, a heading for the docs, and its fields in docs order."""

    name: str
    heading: str
    fields: tuple[Field, ...]

    def field_map(self) -> dict[str, Field]:
        return {item.name: item for item in self.fields}

    def required(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.fields if item.required)
