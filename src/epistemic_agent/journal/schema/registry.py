"""Every record kind, by name, in the order docs/journal-format.md describes them; the fields
every line starts with; the objects inside records that have a table of their own."""

from __future__ import annotations

from typing import get_args

from . import agent, approvals, calls, header
from .types import INTEGER, STRING, Field, Kind, req
from .values import RecordKind

#: The fields every line starts with, in this order; the writer owns them.
CHAIN: tuple[Field, ...] = (
    req(
        "prev",
        STRING,
        "SHA-256 (hex) of the previous line's bytes, without its newline. The first line has "
        "64 zeros. This is the hash chain.",
    ),
    req("n", INTEGER, "the line's number in the file, starting at 1"),
    req(
        "v",
        INTEGER,
        "the format version of this line (currently 1). Readers must accept lines of versions "
        "they know and should read what they understand of newer ones.",
    ),
    req("kind", STRING, "what the line records; see below", get_args(RecordKind)),
)
CHAIN_NAMES = frozenset(item.name for item in CHAIN)

KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (header.SESSION, *calls.KINDS, *approvals.KINDS, *header.KINDS[1:], *agent.KINDS)
}
#: Field tables of objects inside records that the docs give a table of their own.
NESTED: dict[str, tuple[Field, ...]] = {
    "confinement": header.CONFINEMENT,
    "versions": calls.VERSION_ENTRY,
}
#: Per kind: its fields by name, and the names of those it requires (built once).
FIELD_MAPS: dict[str, dict[str, Field]] = {name: kind.field_map() for name, kind in KINDS.items()}
REQUIRED: dict[str, tuple[str, ...]] = {name: kind.required() for name, kind in KINDS.items()}
