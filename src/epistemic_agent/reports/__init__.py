"""Read-only projections of the record: RATIONALE.md, stats, diff, plots, HTML, audit bundles."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .bundle.check import verify_bundle as verify_bundle
    from .bundle.export import export as export
    from .diff import compare as compare
    from .diff import render as render_diff
    from .diff import tasks_differ as tasks_differ
    from .html.page import reader_notes as reader_notes
    from .html.page import render_html as render_html
    from .plot import plot_session as plot_session
    from .rationale.beliefs import summary_line as summary_line
    from .rationale.beliefs import supervisor_line as supervisor_line
    from .rationale.report import Report as Report
    from .rationale.report import rebuild as rebuild
    from .show import _plain as _plain
    from .show import gather as gather
    from .show import lines as lines
    from .show import output_only as output_only
    from .stats import belief_text as belief_text
    from .stats import duration as duration
    from .stats import labels as labels
    from .stats import session_stats as session_stats
    from .stats import supervisor_text as supervisor_text
    from .stats import table as table
    from .stats import totals as totals
    from .tables import calls_table as calls_table
    from .trace.matrix import FORMATS as FORMATS
    from .trace.matrix import render as render_matrix
    from .trace.matrix import rows as rows
    from .trace.model import Trace as Trace
    from .trace.model import TraceError as TraceError
    from .trace.model import build as build
    from .trace.view import change_json as change_json
    from .trace.view import line_json as line_json
    from .trace.view import render_line as render_line
    from .trace.view import render_session as render_session
    from .trace.view import session_json as session_json
    from .trace.view import undid as undid

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "FORMATS": "trace.matrix:FORMATS",
    "Report": "rationale.report:Report",
    "Trace": "trace.model:Trace",
    "TraceError": "trace.model:TraceError",
    "_plain": "show:_plain",
    "belief_text": "stats:belief_text",
    "build": "trace.model:build",
    "calls_table": "tables:calls_table",
    "change_json": "trace.view:change_json",
    "compare": "diff:compare",
    "duration": "stats:duration",
    "export": "bundle.export:export",
    "gather": "show:gather",
    "labels": "stats:labels",
    "line_json": "trace.view:line_json",
    "lines": "show:lines",
    "output_only": "show:output_only",
    "plot_session": "plot:plot_session",
    "reader_notes": "html.page:reader_notes",
    "rebuild": "rationale.report:rebuild",
    "render_diff": "diff:render",
    "render_html": "html.page:render_html",
    "render_line": "trace.view:render_line",
    "render_matrix": "trace.matrix:render",
    "render_session": "trace.view:render_session",
    "rows": "trace.matrix:rows",
    "session_json": "trace.view:session_json",
    "session_stats": "stats:session_stats",
    "summary_line": "rationale.beliefs:summary_line",
    "supervisor_line": "rationale.beliefs:supervisor_line",
    "supervisor_text": "stats:supervisor_text",
    "table": "stats:table",
    "tasks_differ": "diff:tasks_differ",
    "totals": "stats:totals",
    "undid": "trace.view:undid",
    "verify_bundle": "bundle.check:verify_bundle",
}
__all__ = [
    "FORMATS",
    "Report",
    "Trace",
    "TraceError",
    "_plain",
    "belief_text",
    "build",
    "calls_table",
    "change_json",
    "compare",
    "duration",
    "export",
    "gather",
    "labels",
    "line_json",
    "lines",
    "output_only",
    "plot_session",
    "reader_notes",
    "rebuild",
    "render_diff",
    "render_html",
    "render_line",
    "render_matrix",
    "render_session",
    "rows",
    "session_json",
    "session_stats",
    "summary_line",
    "supervisor_line",
    "supervisor_text",
    "table",
    "tasks_differ",
    "totals",
    "undid",
    "verify_bundle",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
