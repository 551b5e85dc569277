"""Named migrations: how a record written by an earlier version of the tool is read in the
shape the schema (journal/schema/) describes now. Applied at the read boundary (reading.py,
log.follow, and the writer as it catches up with a journal it continues), to a copy: the
journal's bytes, and so its chain, are never touched.

Every journal so far has format version 1: fields were only ever added. A migration exists
only where an earlier era's records lack a field the schema now requires, and it is keyed by
what it detects in the record (never by a version number that did not change). Each is
listed, by name, in docs/journal-format.md ("Versions and migrations")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import epoch_of, struct

if TYPE_CHECKING:
    from collections.abc import Callable

#: A record as read (log.Record; not imported, so that log.py may import this module).
Raw = dict[str, Any]


@struct
class Migration:
    """One named migration: the kinds it reads, the era it applies to (format version `v` and
    what the writers of that era did not yet write), when it applies, and how."""

    name: str
    kinds: tuple[str, ...]
    version: int
    era: str
    does: str
    applies: Callable[[Raw], bool]
    upgrade: Callable[[Raw], Raw]


def _no_started_epoch(record: Raw) -> bool:
    return "started_epoch" not in record and epoch_of(str(record.get("started", ""))) is not None


def _add_started_epoch(record: Raw) -> Raw:
    return {**record, "started_epoch": epoch_of(str(record["started"]))}


def _no_readable(record: Raw) -> bool:
    confinement = record.get("confinement") if record.get("kind") == "session" else record
    return isinstance(confinement, dict) and "readable" not in confinement


def _add_readable(record: Raw) -> Raw:
    if record.get("kind") != "session":
        return {**record, "readable": None}
    return {**record, "confinement": {**record["confinement"], "readable": None}}


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "header-started-epoch",
        ("session",),
        1,
        "written before the header carried `started_epoch` (before the tool compared what a "
        "call declared with what it did)",
        "the header's `started_epoch` is derived from its `started` (UTC, to the millisecond)",
        _no_started_epoch,
        _add_started_epoch,
    ),
    Migration(
        "confinement-readable-absent",
        ("session", "confinement"),
        1,
        "written before acts could be given an allow-list of what they may read (`epistemic "
        "run --readable`)",
        "a confinement without `readable` had no allow-list: it is read as `readable: null`",
        _no_readable,
        _add_readable,
    ),
)
_BY_KIND: dict[str, tuple[Migration, ...]] = {}
for _migration in MIGRATIONS:
    for _kind in _migration.kinds:
        _BY_KIND[_kind] = (*_BY_KIND.get(_kind, ()), _migration)


def upgrade(record: Raw, skip: frozenset[str] = frozenset()) -> Raw:
    """The record in the current shape: every migration that applies, in order, on a copy
    (the record itself when none does). `skip` names migrations not to apply (tests)."""
    for migration in _BY_KIND.get(str(record.get("kind")), ()):
        if migration.name not in skip and migration.applies(record):
            record = migration.upgrade(record)
    return record


def applied(record: Raw) -> list[str]:
    """The names of the migrations that apply to a record as it was written."""
    found = []
    for migration in _BY_KIND.get(str(record.get("kind")), ()):
        if migration.applies(record):
            found.append(migration.name)
            record = migration.upgrade(record)
    return found
