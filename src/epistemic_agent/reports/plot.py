"""`epistemic plot`: a session's timeline and shape as a picture (PNG or SVG), with matplotlib.

The palette and the meaning of each mark are defined here once: the HTML report
(html_report.py) draws the same timeline and shape as inline SVG from `marks` and `shape`.
matplotlib is imported only inside `plot_session`: importing it takes most of a second.
"""

from __future__ import annotations

import datetime
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.safetext import one_line
from ..core.structs import struct
from ..core.vocabulary import ACT_NAMES, act_order
from ..journal.records import seq_of

if TYPE_CHECKING:
    from typing import Any

    from ..journal.records import CallView
    from ..journal.sessions import Loaded

#: One colour per act (the Okabe–Ito palette: tells apart for colour-blind readers too).
ACT_COLOURS: dict[str, str] = {
    "collect-info": "#56B4E9",
    "test-hypothesis": "#CC79A7",
    "verify": "#009E73",
    "change-state": "#0072B2",
    "setup": "#E69F00",
    "revert": "#D55E00",
    "cleanup": "#7F7F7F",
}
OTHER_COLOUR = "#B0B0B0"  # no act (rejected before its act was known), or an unknown act
FLAG_COLOUR = "#C00000"
NO_ACT = "-"  # the lane (and filter value) of calls without a valid act
#: A call's status, as the timeline marks it and the HTML filters it, with its legend text.
STATUSES: dict[str, str] = {
    "ok": "ran ok",
    "failed": "ran, failed",
    "rejected": "rejected (did not run)",
    "denied": "denied by a human (did not run)",
    "unknown": "outcome unknown",
}
FORMATS = {".png": "png", ".svg": "svg"}


def colour(act: str) -> str:
    """The colour of an act (grey for no act or an act outside the vocabulary)."""
    return ACT_COLOURS.get(act, OTHER_COLOUR)


@struct
class Mark:
    """One call on the timeline."""

    seq: int
    act: str  # an act name, or NO_ACT
    status: str  # a key of STATUSES
    flagged: bool
    start: float | None  # seconds from the session's start to the declaration
    duration: float | None  # seconds the call ran, when an outcome says


def dead_end(mark: Mark) -> bool:
    """A revert the session went through with (one that was rejected or denied did not run)."""
    return mark.act == "revert" and mark.status not in ("rejected", "denied")


def status_of(view: CallView) -> str:
    """ok / failed / rejected / denied / unknown."""
    if view.status == "ran":
        return "ok" if view.ok else "failed"
    return view.status if view.status in STATUSES else "unknown"


def marks(session: Loaded) -> list[Mark]:
    """Every call of the session, in order, as the timeline draws it."""
    origin = _origin(session)
    durations = {
        seq: r["duration"]
        for r in session.of_kind("outcome")
        if isinstance(r.get("duration"), int | float) and (seq := seq_of(r)) is not None
    }
    found = []
    for view in session.views:
        at = seconds(view.t)
        found.append(
            Mark(
                seq=view.seq,
                act=view.act or NO_ACT,
                status=status_of(view),
                flagged=bool(view.flags),
                start=None if at is None or origin is None else round(at - origin, 3),
                duration=durations.get(view.seq),
            )
        )
    return found


def lanes(found: list[Mark]) -> list[str]:
    """The timeline's rows: the seven acts in vocabulary order, then any other act present."""
    extra = sorted({m.act for m in found} - set(ACT_NAMES) - {NO_ACT})
    return [*ACT_NAMES, *extra, *([NO_ACT] if any(m.act == NO_ACT for m in found) else [])]


def shape(session: Loaded) -> list[tuple[str, int]]:
    """Calls per act, in vocabulary order (every act, even at 0); rejected calls are not counted."""
    counts: dict[str, int] = dict.fromkeys(ACT_NAMES, 0)
    for view in session.views:
        if view.status != "rejected" and view.act:
            counts[view.act] = counts.get(view.act, 0) + 1
    return sorted(counts.items(), key=lambda item: act_order(item[0]))


def seconds(text: str | None) -> float | None:
    """An ISO 8601 timestamp as seconds since the epoch (None when absent or malformed)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _origin(session: Loaded) -> float | None:
    started = seconds(session.header.get("started"))
    if started is not None:
        return started
    return next((s for r in session.records if (s := seconds(r.get("t"))) is not None), None)


def counts(found: list[Mark]) -> Counter[str]:
    """Calls by status (a key of STATUSES), and under `flagged` how many were flagged."""
    tally = Counter(m.status for m in found)
    tally["flagged"] = sum(1 for m in found if m.flagged)
    return tally


def title(session: Loaded) -> str:
    """`NAME: task` (the task cut to one short line; control characters as escapes)."""
    task = " ".join(str(session.header.get("task") or "").split())
    task = task if len(task) <= 90 else task[:87] + "..."
    return one_line(f"{session.name}: {task}" if task else session.name)


def subtitle(session: Loaded, found: list[Mark]) -> str:
    """Counts and the integrity verdict, one line."""
    tally = counts(found)
    parts = [f"{len(found)} call(s)"]
    parts += [f"{tally[s]} {s}" for s in [*STATUSES, "flagged"] if tally[s] and s != "ok"]
    integrity = session.integrity.status if session.integrity else "not verified"
    return " · ".join([*parts, f"journal {integrity}"])


def plot_session(session: Loaded, out: Path, over_time: bool = False) -> None:
    """Draw the timeline over the shape and save it; the format follows `out`'s suffix."""
    import matplotlib

    mpl: Any = matplotlib  # typed loosely: its rcParams keys are Literal types
    mpl.use("Agg")
    from matplotlib.figure import Figure

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
    "unknown": ("?", 1.4, True),  # a glyph as a path: journal text is never parsed as math
}


def _marker(name: str) -> Any:
    """A matplotlib marker; "?" is the glyph's outline, centred."""
    if name != "?":
        return name
    from matplotlib.textpath import TextPath

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
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True, min_n_ticks=1)


def _legend() -> list[Any]:
    from matplotlib.lines import Line2D

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
