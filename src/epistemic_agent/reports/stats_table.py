"""The table of `epistemic stats` over several sessions, fitted to the terminal's width.

The width is COLUMNS, else the terminal's, else 80. Numbers are never cut: the text cells
(the session's name, how it stopped, its chain, its task) are narrowed first, cut with `…` (a name
keeps its end, where workspaces differ). When the numbers alone are wider than the terminal,
the columns are laid out in blocks one under the other, each repeating the session column,
as wide tables are wrapped elsewhere. The whole of every value is in `--json`.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from ..core import one_line

if TYPE_CHECKING:
    from collections.abc import Sequence

SEP = "  "
NAME_MOST = 40  # the session column is never wider
TEXT_LEAST = 8  # nor is a text column cut narrower


def terminal_width() -> int:
    """COLUMNS, else the terminal's width, else 80 (never below 20)."""

    return max(20, shutil.get_terminal_size((80, 24)).columns)


def fit(rows: Sequence[Sequence[str]], text: frozenset[int], width: int) -> list[str]:
    """Lines of a table whose first row is the header and last row the totals (a rule above
    it). Column 0 and the columns in `text` are text, left-aligned and cut to fit; the others
    are numbers, right-aligned and whole."""
    cells = [[one_line(cell) for cell in row] for row in rows]
    natural = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    natural[0] = min(natural[0], NAME_MOST)
    for sep in (SEP, " "):  # two spaces between columns; one, before blocks are needed
        widths = _narrowed(natural, [0, *sorted(text)], width, len(sep))
        if _span(widths, len(sep)) <= width:
            return _block(cells, widths, list(range(1, len(widths))), text, sep)
    narrow = _narrowed(natural, [0, *sorted(text)], width, len(SEP))
    wide = [max(narrow[0], min(natural[0], width // 3)), *narrow[1:]]
    # blocks leave room for wider names, unless that takes another block
    layouts = [(_groups(w, width, text), w) for w in (wide, list(narrow))]  # w: cut to fit
    groups, widths = min(layouts, key=lambda layout: len(layout[0]))
    lines: list[str] = []
    for group in groups:
        if lines:
            lines.append("")
        lines += _block(cells, widths, group, text, SEP)
    return lines


def _narrowed(natural: list[int], text: list[int], width: int, sep: int) -> list[int]:
    """The widths with the text columns narrowed, the widest first, until the table fits or
    none is wider than TEXT_LEAST."""
    widths = list(natural)
    while _span(widths, sep) > width:
        narrower = [i for i in text if widths[i] > TEXT_LEAST]
        if not narrower:
            break
        widths[max(narrower, key=lambda i: widths[i])] -= 1
    return widths


def _span(widths: Sequence[int], sep: int) -> int:
    return sum(widths) + sep * (len(widths) - 1)


def _groups(widths: list[int], width: int, text: frozenset[int]) -> list[list[int]]:
    """The columns after the first, packed in order into blocks that each fit beside it (a
    text column is cut to fit alone; a number column wider than that goes alone)."""
    room = width - widths[0] - len(SEP)
    for index in range(1, len(widths)):
        if index in text:
            widths[index] = max(min(widths[index], room), 1)
    groups: list[list[int]] = [[]]
    used = 0
    for index in range(1, len(widths)):
        size = widths[index]
        if used and used + len(SEP) + size > room:
            groups.append([])
            used = 0
        groups[-1].append(index)
        used += size + (len(SEP) if used else 0)
    return groups


def _block(
    cells: list[list[str]], widths: list[int], columns: list[int], text: frozenset[int], sep: str
) -> list[str]:
    """The rows of the session column and `columns`: header, sessions, a rule, totals."""
    lines = [_line(row, widths, [0, *columns], text, sep) for row in cells]
    lines.insert(len(lines) - 1, "-" * max(map(len, lines)))
    return lines


def _line(
    row: list[str], widths: list[int], columns: list[int], text: frozenset[int], sep: str
) -> str:
    out = []
    for index in columns:
        cell, size = row[index], widths[index]
        if index == 0:
            out.append(cut_start(cell, size).ljust(size))
        elif index in text:
            out.append(cut_end(cell, size).ljust(size))
        else:
            out.append(cell.rjust(size))  # a number: whole, even wider than its column
    return sep.join(out).rstrip()


def cut_start(cell: str, size: int) -> str:
    return cell if len(cell) <= size else "…" + cell[len(cell) - size + 1 :]


def cut_end(cell: str, size: int) -> str:
    return cell if len(cell) <= size else cell[: size - 1] + "…"


def wrapped(line: str, width: int, joint: str = " · ") -> list[str]:
    """A long line of `joint`-separated parts, broken between parts to fit (a part longer
    than the width stays whole), the lines after the first indented."""
    parts = line.split(joint)
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + len(joint) + len(part) <= width:
            lines[-1] += joint + part
        else:
            lines[-1] += joint.rstrip()
            lines.append("  " + part)
    return lines
