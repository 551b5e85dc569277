"""`epistemic plot` and `epistemic html`: show one session, from its journal alone, as a picture
(PNG or SVG) or as one self-contained HTML page. See docs/views.md."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import UsageError
from .choice import reading
from .options import session_choice, session_option

if TYPE_CHECKING:
    from ..journal import Loaded

PATH_HELP = "a journal file, a workspace, or its .epistemic folder (default: .)"
PLOT_SUFFIXES = (".png", ".svg")
HTML_SUFFIXES = (".html", ".htm")


def define_plot(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Draw one session from its journal: the calls in order, one row per act "
        "(failed, rejected, denied and unknown calls, flags and reverts marked), above the "
        "calls per act. The format follows -o's suffix (.png or .svg). Default output: "
        "NAME-timeline.png in the current directory, NAME being the session's folder. Exit 0 "
        "when written (a journal that does not verify is announced first, and drawn as "
        "read), 2 on bad input (no journal, a malformed option)."
    )
    p.add_argument("path", nargs="?", default=".", metavar="PATH", help=PATH_HELP)
    p.add_argument("-o", dest="output", metavar="FILE", help="where to write (.png or .svg)")
    p.add_argument(
        "--time",
        action="store_true",
        help="place calls at the time they were made (seconds since the session started), "
        "with their durations, instead of by call number",
    )
    session_option(p)
    p.set_defaults(handler=_cmd_plot)


def define_html(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Write one session as a single HTML file that works offline (no external "
        "assets): header, shape, timeline, the narrative with filters by act and status, dead "
        "ends, approvals and denials, and the hash chain's verdict. Filters can be set in the "
        "address: report.html#act=revert&status=failed. Default output: NAME-report.html in "
        "the current directory, NAME being the session's folder. Exit 0 when written (a "
        "journal that does not verify is announced first, and the page shows the verdict), "
        "2 on bad input (no journal, a malformed option)."
    )
    p.add_argument("path", nargs="?", default=".", metavar="PATH", help=PATH_HELP)
    p.add_argument("-o", dest="output", metavar="FILE", help="where to write (.html)")
    session_option(p)
    p.set_defaults(handler=_cmd_html)


def load_session(path: str, session: str | None = None) -> Loaded:
    """The session at a path (of a workspace: the newest, or the one `session` names),
    verified; ReadError becomes a usage error (exit 2)."""
    from ..journal import ReadError, announce, load

    try:
        loaded = load(Path(path), session=reading(path, session))
    except ReadError as error:
        raise UsageError(str(error)) from None
    announce(loaded.integrity, loaded.numbered())  # first: what follows may not be as recorded
    return loaded


def default_output(session: Loaded, suffix: str) -> Path:
    """`<session folder name><suffix>` in the current directory."""
    name = session.workspace.resolve().name
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).lstrip(".")
    return Path((safe or "session") + suffix)


def output_path(given: str | None, default: Path, suffixes: tuple[str, ...]) -> Path:
    """Where to write: -o (its suffix checked, its folder existing) or the default."""
    if given is None:
        return default
    path = Path(given)
    if path.suffix.lower() not in suffixes:
        wanted = " or ".join(suffixes)
        raise UsageError(f"-o {given}: the file name must end in {wanted}")
    if not path.parent.is_dir():
        raise UsageError(f"-o {given}: the folder {path.parent} does not exist")
    if path.is_dir():
        raise UsageError(f"-o {given}: is a directory")
    return path


def report_notes(session: Loaded) -> None:
    """What the reader found odd, and the chain's verdict when it is not intact, on stderr
    (after the output; the verdict was also announced first: load_session)."""
    from ..reports import reader_notes

    for note in reader_notes(session):
        print(f"epistemic: note: {note}", file=sys.stderr)
    integrity = session.integrity
    if integrity is not None and integrity.status != "intact":
        print(f"epistemic: note: journal {integrity.status}: {integrity.problem}", file=sys.stderr)


def _cmd_plot(args: argparse.Namespace) -> int:
    from ..reports import plot_session

    session = load_session(args.path, session_choice(args))
    out = output_path(args.output, default_output(session, "-timeline.png"), PLOT_SUFFIXES)
    started = time.monotonic()
    plot_session(session, out, over_time=args.time)
    report_notes(session)
    print(written(out, session, time.monotonic() - started))
    return 0


def _cmd_html(args: argparse.Namespace) -> int:
    from ..core import atomic_write
    from ..reports import render_html

    session = load_session(args.path, session_choice(args))
    out = output_path(args.output, default_output(session, "-report.html"), HTML_SUFFIXES)
    started = time.monotonic()
    # a new file renamed into place: a browser or server reading the page never gets half
    atomic_write(out, render_html(session).encode("utf-8"))
    report_notes(session)
    print(written(out, session, time.monotonic() - started))
    return 0


def written(out: Path, session: Loaded, took: float) -> str:
    """What was written, and when: the session's span (its start, and the time from its first
    record to its last) kept apart from when and how fast this file was rendered."""
    from ..core import now, one_line

    started = session.header.get("started")
    span = [f"started {one_line(str(started))}"] if isinstance(started, str) else []
    if session.wall_time is not None:
        span.append(f"{session.wall_time:g} s from its first record to its last")
    said = f"the session {', '.join(span)}" if span else "the session's span is not recorded"
    return (
        f"{one_line(str(out))}: {len(session.views)} call(s); {said}; "
        f"rendered at {now()} in {took:.2f} s"
    )
