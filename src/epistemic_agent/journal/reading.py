"""Reading a whole journal at once, with plain-language notes on what was odd: lines that are
not JSON objects, a torn last line, records of a newer format version than this reader's.
Records of earlier eras are read in the current shape (migrations.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .log import FORMAT_VERSION, Record, decode
from .migrations import upgrade

if TYPE_CHECKING:
    from typing import Any


def read_records(path: Path) -> tuple[list[Record], list[str]]:
    """Every readable record of a journal, and plain-language notes on what was odd."""
    numbered, notes = read_numbered(path)
    return [record for _, record in numbered], notes


def read_numbered(path: Path) -> tuple[list[tuple[int, Record]], list[str]]:
    """Every readable record with its line number, and notes on what was odd: one note for
    all the lines that are not JSON objects, one for all the lines of newer versions."""
    numbered: list[tuple[int, Record]] = []
    skipped: list[int] = []
    torn: list[str] = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith(b"\n"):
                torn.append(
                    f"line {number} is torn (incomplete: a crash mid-write, "
                    "or still being written); it was not read"
                )
                break
            record = decode(line[:-1])
            if record is None:
                skipped.append(number)
            else:
                numbered.append((number, upgrade(record)))
    notes = [_skipped_note(skipped)] if skipped else []
    newer = newer_note(numbered)
    return numbered, notes + ([newer] if newer else []) + torn


def newer_version(record: Record) -> int | None:
    """The record's format version when it is newer than this reader's, else None."""
    version = record.get("v")
    if type(version) is int and version > FORMAT_VERSION:
        return version
    return None


def newer_note(numbered: list[tuple[int, Record]]) -> str | None:
    """One note on the lines of newer versions: how many, which versions, the first."""
    lines = [(number, v) for number, record in numbered if (v := newer_version(record))]
    if not lines:
        return None
    which = versions_text([version for _, version in lines])
    reader = f"newer than this reader ({FORMAT_VERSION}); read what is understood"
    if len(lines) == 1:
        return f"line {lines[0][0]} has format {which}, {reader}"
    return f"{len(lines)} lines have format {which}, {reader} (the first is line {lines[0][0]})"


def versions_text(versions: list[int]) -> str:
    """`version 2`, `versions 2 and 3`."""
    found = sorted(set(versions))
    return f"version {found[0]}" if len(found) == 1 else f"versions {listed(found)}"


def _skipped_note(lines: list[int]) -> str:
    if len(lines) == 1:
        return f"line {lines[0]} is not a JSON object; skipped"
    return f"{len(lines)} lines are not JSON objects; skipped (lines {listed(lines)})"


def listed(items: list[Any], most: int = 5) -> str:
    """`1`, `1 and 2`, `1, 2 and 3`; past `most` items, `1, 2, 3, 4, 5 and 7 more`."""
    words = [str(item) for item in items]
    if len(words) > most + 1:
        words = [*words[:most], f"{len(words) - most} more"]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
