"""`epistemic plot`: a session's timeline and shape as a picture (PNG or SVG), with matplotlib.

Only `epistemic plot` imports this module (importing matplotlib takes most of a second); what
the picture shows is defined in marks.py, which the HTML report shares.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.textpath import TextPath
from matplotlib.ticker import MaxNLocator

from ..core import ACT_NAMES, one_line
from .marks import (
    ACT_COLOURS,
    FLAG_COLOUR,
    NO_ACT,
    STATUSES,
    colour,
    dead_end,
    lanes,
    marks,
    shape,
    subtitle,
    title,
)

mpl: Any = matplotlib  # typed loosely: its rcParams keys are Literal types
mpl.use("Agg")  # no display: files only

if TYPE_CHECKING:
    from ..journal import Loaded
    from .marks import Mark

FORMATS = {".png": "png", ".svg": "svg"}


def plot_session(session: Loaded, out: Path, over_time: bool = False) -> None:
    """Draw the timeline over the shape and save it; the format follows `out`'s suffix."""
    found = marks(session)
    rows = lanes(found)
    settings = {"svg.fonttype": "none", "svg.hashsalt": "epistemic", "font.size": 9}
    settings["text.parse_math"] = False  # a `$` in a task or an act is text, not TeX
    with mpl.rc_context(settings):
        figure: Any = Figure(figsize=(12, 2.6 + 0.32 * len(rows) + 0.3 * len(ACT_NAMES)))
        grid = figure.add_gridspec(2, 1, height_ratios=[len(rows) + 2, len(ACT_NAMES)])
        _timeline(figure.add_subplot(grid[0]), found, rows, over_time and _timed(found))
        _shape(figure.add_subplot(grid[1]), shape(session))
        figure.suptitle(title(session), x=0.01, ha="left", fontsize=11, fontweight="bold")
        figure.text(0.01, 0.955, subtitle(session, found), ha="left", va="top", color="#444")
        figure.subplots_adjust(left=0.11, right=0.98, top=0.86, bottom=0.07, hspace=0.45)
        figure.savefig(out, format=FORMATS[out.suffix.lower()], dpi=100, metadata=_metadata(out))


def _timed(found: list[Mark]) -> bool:
    return bool(found) and all(m.start is not None for m in found)


def _metadata(out: Path) -> dict[str, Any]:
    """No creation date in the file: the same journal gives the same picture."""
    return {"Date": None} if out.suffix.lower() == ".svg" else {"Software": "epistemic-agent"}


def _timeline(axes: Any, found: list[Mark], rows: list[str], over_time: bool) -> None:
    """One row per act; a mark per call, a grey line through them in order, reverts dashed."""
    y = {act: len(rows) - 1 - index for index, act in enumerate(rows)}
    xs = [(m.start or 0.0) if over_time else float(m.seq) for m in found]
    pairs = list(zip(xs, found, strict=True))
    axes.plot(xs, [y[m.act] for m in found], color="#CCCCCC", linewidth=0.8, zorder=1)
    ends = [x for x, mark in pairs if dead_end(mark)]  # one collection each: fast at 10,000
    dashed = {"color": ACT_COLOURS["revert"], "linestyle": "--", "lw": 1, "alpha": 0.6}
    axes.vlines(ends, -0.7, len(rows) - 0.2, **dashed)
    if over_time:  # how long each call ran, as a bar from its start
        lines = [(y[m.act], x, x + m.duration, colour(m.act)) for x, m in pairs if m.duration]
        if lines:
            axes.hlines(*zip(*lines, strict=True), linewidth=5)
    _marks(axes, pairs, y, max(12.0, min(70.0, 2400.0 / max(len(found), 1))))
    axes.set_yticks(list(y.values()), [one_line(a) if a != NO_ACT else "(no act)" for a in y])
    for label, act in zip(axes.get_yticklabels(), y, strict=True):
        label.set_color(colour(act) if act in ACT_COLOURS else "#555555")
    axes.set_ylim(-0.7, len(rows) - 0.2)
    axes.set_xlabel("seconds since the session started" if over_time else "call number")
    if not over_time and found:
        margin = max(0.6, (xs[-1] - xs[0]) * 0.02)
        axes.set_xlim(xs[0] - margin, xs[-1] + margin)
        axes.xaxis.set_major_locator(_integers())
    axes.grid(axis="y", color="#EEEEEE")
    axes.set_axisbelow(True)
    if not found:
        axes.text(0.5, 0.5, "no calls yet", transform=axes.transAxes, ha="center", color="#777")
    axes.legend(handles=_legend(), loc="lower left", bbox_to_anchor=(0, 1.0), **_LEGEND)
    axes.set_title("Timeline", loc="right", fontsize=10)


_LEGEND = {"ncol": 8, "frameon": False, "fontsize": 8, "handletextpad": 0.3, "columnspacing": 1.2}


#: How each status is drawn: marker, size factor, filled with the act's colour (else hollow).
_STYLES: dict[str, tuple[str, float, bool]] = {
    "ok": ("o", 1.0, True),
    "failed": ("X", 1.6, True),
    "rejected": ("o", 1.0, False),
    "denied": ("s", 1.0, False),
    "cancelled": ("D", 0.9, False),
    "aborted": ("D", 0.9, True),
    "unknown": ("?", 1.4, True),  # a glyph as a path: journal text is never parsed as math
}


def _marker(name: str) -> Any:
    """A matplotlib marker; "?" is the glyph's outline, centred."""
    if name != "?":
        return name
    box = TextPath((0, 0), "?", size=1).get_extents()
    return TextPath((-box.x0 - box.width / 2, -box.y0 - box.height / 2), "?", size=1)


def _marks(axes: Any, pairs: list[tuple[float, Mark]], y: dict[str, int], size: float) -> None:
    """A scatter per status (the shape), coloured by act; a red triangle over flagged calls."""
    for status, (marker, scale, filled) in _STYLES.items():
        chosen = [(x, m) for x, m in pairs if m.status == status]
        colours = [colour(m.act) for _, m in chosen]
        style: dict[str, Any] = {"c": colours} if filled else {"facecolors": "white"}
        style.update(edgecolors=colours, linewidths=1.4)
        if status == "failed":
            style.update(edgecolors="black", linewidths=0.6)
        if chosen:
            xs, ys = [x for x, _ in chosen], [y[m.act] for _, m in chosen]
            axes.scatter(xs, ys, s=size * scale, marker=_marker(marker), zorder=3, **style)
    flagged = [(x, y[m.act] + 0.38) for x, m in pairs if m.flagged]
    if flagged:
        axes.scatter(*zip(*flagged, strict=True), marker="v", s=size, color=FLAG_COLOUR, zorder=4)


def _integers() -> Any:
    return MaxNLocator(integer=True, min_n_ticks=1)


def _legend() -> list[Any]:
    grey, handles = "#555555", []
    for status, (marker, _, filled) in _STYLES.items():
        face, edge = (grey if filled else "white"), ("black" if status == "failed" else grey)
        style = {"marker": _marker(marker), "ls": "", "mfc": face, "mec": edge}
        handles.append(Line2D([], [], label=STATUSES[status], **style))
    flag = "declared vs done flag"
    handles.append(Line2D([], [], marker="v", ls="", color=FLAG_COLOUR, label=flag))
    handles.append(Line2D([], [], color=ACT_COLOURS["revert"], ls="--", label="revert"))
    return handles


def _shape(axes: Any, counts: list[tuple[str, int]]) -> None:
    total = sum(n for _, n in counts) or 1
    names = [act for act, _ in counts]
    positions = list(range(len(counts) - 1, -1, -1))
    axes.barh(positions, [n for _, n in counts], color=[colour(a) for a in names], height=0.7)
    for position, (_, n) in zip(positions, counts, strict=True):
        axes.text(n, position, f" {n} ({round(100 * n / total)}%)", va="center", fontsize=8)
    axes.set_yticks(positions, [one_line(name) for name in names])
    axes.set_xlim(0, max([n for _, n in counts] + [1]) * 1.15)
    axes.set_xlabel("calls (rejected calls did not run and are not counted)")
    axes.xaxis.set_major_locator(_integers())
    axes.set_title("Shape: calls per act", loc="right", fontsize=10)
    axes.spines[["top", "right"]].set_visible(False)
