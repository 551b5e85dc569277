"""The HTML report's parts that are not prose: escaping, the stylesheet, the filter script, and
the timeline and shape drawn as inline SVG (same palette and marks as plot.py)."""

from __future__ import annotations

import base64
import hashlib

from ...core import esc
from ..marks import ACT_COLOURS, FLAG_COLOUR, NO_ACT, STATUSES, Mark, colour, dead_end


def act_css() -> str:
    """One colour variable per act, for chips and entries (`data-act` selects it)."""
    return "".join(f'[data-act="{act}"]{{--c:{hex_}}}' for act, hex_ in ACT_COLOURS.items())


CSS = """
:root{--c:#B0B0B0;--fg:#1d1d1f;--muted:#5f6368;--line:#dadce0;--bad:#b3261e;--warn:#C00000}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
margin:0 auto;max-width:1120px;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid var(--line);padding-bottom:4px}
code,pre{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f6f8fa;border:1px solid #eaecef;border-radius:4px;padding:6px 8px;margin:4px 0;
white-space:pre-wrap;overflow-wrap:anywhere;max-height:22em;overflow:auto}
nav a{margin-right:12px}dl.facts{display:grid;grid-template-columns:max-content 1fr;
gap:2px 14px;margin:8px 0}dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.task{white-space:pre-wrap;background:#fbfbf8;border-left:3px solid #ccc;padding:6px 10px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px;
color:#fff;background:#188038;text-decoration:none;vertical-align:middle}
.badge.tampered,.badge.torn{background:var(--bad)}.badge.unchecked{background:#777}
.notes{border:1px solid #f0c36d;background:#fff8e1;padding:6px 12px;border-radius:4px}
.chip{display:inline-block;padding:0 7px;border-radius:9px;background:var(--c);color:#fff;
font-size:12px;font-weight:600}
svg{display:block;width:100%;height:auto;font:11px system-ui,sans-serif}
svg .mark.dim{opacity:.12}svg a:hover{opacity:.7}
#filters{position:sticky;top:0;background:#fff;border-bottom:1px solid var(--line);
padding:6px 0;z-index:1}#filters fieldset{display:inline-block;border:0;margin:0 14px 0 0;padding:0}
#filters legend{float:left;margin-right:6px;color:var(--muted)}#filters label{margin-right:8px;
white-space:nowrap}#shown{color:var(--muted);margin-left:8px}
ol.calls{list-style:none;padding:0;margin:0}
li.call{border-left:4px solid var(--c);padding:4px 10px;margin:10px 0;background:#fff}
li.call .head{font-weight:600}li.call .seq{display:inline-block;min-width:2.2em;color:var(--muted)}
li.call p{margin:3px 0}.why{white-space:pre-line}.st{font-weight:700}
.st.failed,.st.rejected,.st.denied{color:var(--bad)}
.st.unknown{color:#8a5a00}.st.ok{color:#188038}.tool,.when{color:var(--muted);font-weight:400}
.flag{color:var(--warn)}.approval{color:#174ea6}
table{border-collapse:collapse;margin:6px 0}td,th{border-bottom:1px solid var(--line);
padding:3px 10px 3px 0;text-align:left;vertical-align:top}td.n{text-align:right}
.hash{font-family:ui-monospace,monospace;overflow-wrap:anywhere}.muted{color:var(--muted)}
.said{white-space:pre-wrap;overflow-wrap:anywhere;border-left:3px solid #d7dbe0;padding:2px 8px;
margin:4px 0;color:#3c4043}details.diff summary{cursor:pointer}details.diff pre{max-height:40em}
"""

JS = """(function () {
  "use strict";
  var list = document.getElementById("narrative");
  var form = document.getElementById("filters");
  var calls = [].slice.call(list.querySelectorAll("li.call"));
  var marks = [].slice.call(document.querySelectorAll("svg .mark"));
  var boxes = [].slice.call(form.querySelectorAll("input[type=checkbox]"));
  var state = {act: [], status: []};
  function decode(text) {
    try { return decodeURIComponent(text); } catch (e) { return text; }
  }
  function matches(node) {
    var d = node.dataset;
    var act = !state.act.length || state.act.indexOf(d.act) >= 0;
    var status = !state.status.length || state.status.some(function (s) {
      return s === "flagged" ? d.flagged === "1" : d.status === s;
    });
    return act && status;
  }
  function apply() {
    var shown = 0;
    calls.forEach(function (li) {
      li.hidden = !matches(li);
      if (!li.hidden) { shown += 1; }
    });
    marks.forEach(function (m) { m.classList.toggle("dim", !matches(m)); });
    list.setAttribute("data-visible", String(shown));
    document.getElementById("shown").textContent = shown === calls.length ?
      "showing all " + calls.length + " calls" : "showing " + shown + " of " + calls.length;
  }
  function fromBoxes() {
    Object.keys(state).forEach(function (group) {
      state[group] = boxes.filter(function (b) { return b.name === group && b.checked; })
        .map(function (b) { return b.value; });
    });
  }
  function fromHash() {
    var hash = location.hash.slice(1);
    if (hash.indexOf("=") < 0) { return false; }
    state = {act: [], status: []};
    hash.split("&").forEach(function (pair) {
      var at = pair.indexOf("="), key = decode(pair.slice(0, at));
      if (at < 0 || !Object.prototype.hasOwnProperty.call(state, key)) { return; }
      pair.slice(at + 1).split(",").forEach(function (v) {
        if (v) { state[key].push(decode(v)); }
      });
    });
    boxes.forEach(function (b) { b.checked = state[b.name].indexOf(b.value) >= 0; });
    return true;
  }
  function toHash() {
    var parts = Object.keys(state).filter(function (g) { return state[g].length; })
      .map(function (g) { return g + "=" + state[g].map(encodeURIComponent).join(","); });
    try {
      history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname);
    } catch (e) { /* some browsers refuse it for file: pages; the filter still applies */ }
  }
  form.addEventListener("change", function () { fromBoxes(); apply(); toHash(); });
  document.getElementById("clear").addEventListener("click", function () {
    boxes.forEach(function (b) { b.checked = false; });
    fromBoxes(); apply(); toHash();
  });
  window.addEventListener("hashchange", function () {
    if (fromHash()) { apply(); form.scrollIntoView(); }
  });
  fromHash();
  apply();
  form.hidden = false;
  document.documentElement.setAttribute("data-ready", "1");
})();
"""

#: The Content-Security-Policy: nothing is fetched, and no script runs but the one above.
SCRIPT_HASH = base64.b64encode(hashlib.sha256(JS.encode()).digest()).decode()
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; "
    f"script-src 'sha256-{SCRIPT_HASH}'; base-uri 'none'; form-action 'none'"
)


def filters_form(acts: dict[str, int], statuses: dict[str, int]) -> str:
    """The form the script drives: a checkbox per act and per status, with counts. Hidden
    until the script runs (without it, every call is shown)."""
    act_boxes = "".join(
        _box("act", act, f'<span class="chip" data-act="{esc(act)}">{esc(label)}</span>', n)
        for act, n in acts.items()
        for label in ["(no act)" if act == NO_ACT else act]
    )
    status_boxes = "".join(
        _box("status", s, esc(STATUSES.get(s, s)), statuses.get(s, 0))
        for s in [*STATUSES, "flagged"]
    )
    return (
        '<form id="filters" hidden><fieldset><legend>act</legend>'
        f"{act_boxes}</fieldset><fieldset><legend>status</legend>{status_boxes}</fieldset>"
        '<button type="button" id="clear">show all</button><span id="shown"></span></form>'
    )


def _box(group: str, value: str, label: str, count: int) -> str:
    return (
        f'<label><input type="checkbox" name="{group}" value="{esc(value)}"> {label} '
        f'<span class="muted">{count}</span></label>'
    )


LANE, LEFT, RIGHT, TOP, WIDTH = 22, 118, 24, 34, 1000
HOLLOW = {"fill": "#fff", "stroke_width": 1.5}
BOLD_MIDDLE = {"text_anchor": "middle", "font_weight": 700}
DASHED = {"stroke": ACT_COLOURS["revert"], "stroke_dasharray": "4 3"}
LABEL = {"x": LEFT - 12, "text_anchor": "end"}


def el(tag: str, text: str | None = None, /, **attrs: object) -> str:
    """One SVG element; `_` in attribute names becomes `-`, floats get one decimal."""
    spec = "".join(
        f' {k.rstrip("_").replace("_", "-")}="{f"{v:.1f}" if isinstance(v, float) else esc(v)}"'
        for k, v in attrs.items()
    )
    return f"<{tag}{spec}/>" if text is None else f"<{tag}{spec}>{text}</{tag}>"


def glyph(status: str, x: float, y: float, r: float, fill: str) -> str:
    """One call's mark: the status is the shape, the act the colour."""
    if status == "ok":
        return el("circle", cx=x, cy=y, r=r, fill=fill)
    if status == "failed":
        s = 2 * r
        d = f"M{x - r:.1f},{y - r:.1f}l{s:.1f},{s:.1f}m0,{-s:.1f}l{-s:.1f},{s:.1f}"
        return el("path", d=d, stroke=fill, stroke_width=max(r * 0.7, 1.5))
    if status == "denied":
        half, side = 0.9 * r, 1.8 * r
        return el("rect", x=x - half, y=y - half, width=side, height=side, stroke=fill, **HOLLOW)
    if status in ("cancelled", "aborted"):  # a diamond: hollow when withdrawn, filled when cut off
        d = f"M{x:.1f},{y - r:.1f}L{x + r:.1f},{y:.1f}L{x:.1f},{y + r:.1f}L{x - r:.1f},{y:.1f}Z"
        paint = {"fill": fill} if status == "aborted" else {"stroke": fill, **HOLLOW}
        return el("path", d=d, **paint)
    if status == "unknown":
        return el("text", "?", x=x, y=y + 0.8 * r, fill=fill, font_size=2.4 * r, **BOLD_MIDDLE)
    return el("circle", cx=x, cy=y, r=r, stroke=fill, **HOLLOW)


def flag_glyph(x: float, y: float, r: float) -> str:
    """A red triangle above a call whose behaviour contradicted its declaration."""
    d = f"M{x - r:.1f},{y - 2.7 * r:.1f}h{2 * r:.1f}L{x:.1f},{y - 1.3 * r:.1f}Z"
    return el("path", d=d, fill=FLAG_COLOUR)


def timeline_svg(found: list[Mark], rows: list[str], titles: dict[int, str]) -> str:
    """The calls in order, one row per act, each mark a link to its narrative entry."""
    height = TOP + LANE * len(rows) + 26
    first = min((m.seq for m in found), default=1)
    span = max(max((m.seq for m in found), default=1) - first, 1)
    inner = WIDTH - LEFT - RIGHT
    r = max(2.0, min(6.0, inner / span * 0.35))
    y = {act: TOP + LANE * index + LANE // 2 for index, act in enumerate(rows)}
    xs = {m.seq: float(LEFT + (m.seq - first) / span * inner) for m in found}
    step = max(1, -(-len(found) // 40))  # at most about 40 call numbers under the lanes
    parts = [_legend_svg(), *_lanes_svg(rows, y)]
    parts += [
        el("text", str(m.seq), x=xs[m.seq], y=height - 8, text_anchor="middle", fill="#777")
        for m in found[::step]
    ]
    points = " ".join(f"{xs[m.seq]:.1f},{y[m.act]}" for m in found)
    parts.append(el("polyline", points=points, fill="none", stroke="#ccc"))
    parts += [
        el("line", x1=xs[m.seq], x2=xs[m.seq], y1=TOP - 4, y2=height - 22, **DASHED)
        for m in found
        if dead_end(m)
    ]
    parts += [_mark_svg(m, xs[m.seq], y[m.act], r, titles.get(m.seq, "")) for m in found]
    if not found:
        parts.append(el("text", "no calls yet", x=WIDTH / 2, y=height / 2, fill="#777"))
    return _svg(height, "timeline", parts)


def _mark_svg(m: Mark, x: float, y: int, r: float, title: str) -> str:
    inner = el("title", esc(title)) + glyph(m.status, x, y, r, colour(m.act))
    inner += flag_glyph(x, y, r) if m.flagged else ""
    data = {"data_seq": m.seq, "data_act": m.act, "data_status": m.status}
    return el("a", inner, class_="mark", href=f"#call-{m.seq}", data_flagged=int(m.flagged), **data)


def _legend_svg() -> str:
    items = [*STATUSES.items(), ("flag", "declared vs done flag"), ("revert", "revert")]
    parts, x = [], 24.0
    for key, text in items:
        if key == "flag":
            parts.append(flag_glyph(x, 18, 5))
        elif key == "revert":
            parts.append(el("line", x1=x, x2=x, y1=5, y2=17, **DASHED))
        else:
            parts.append(glyph(key, x, 11, 5, "#555"))
        parts.append(el("text", esc(text), x=x + 9, y=15, fill="#444"))
        x += 28 + 6.6 * len(text)
    return "".join(parts)


def _lanes_svg(rows: list[str], y: dict[str, int]) -> list[str]:
    parts = []
    for act in rows:
        label, fill = esc("(no act)" if act == NO_ACT else act), colour(act)
        parts.append(el("line", x1=LEFT - 6, x2=WIDTH - RIGHT, y1=y[act], y2=y[act], stroke="#eee"))
        parts.append(el("text", label, y=y[act] + 4, font_weight=600, fill=fill, **LABEL))
    return parts


def shape_svg(counts: list[tuple[str, int]]) -> str:
    """Calls per act, one bar each, in vocabulary order."""
    total = sum(n for _, n in counts) or 1
    most = max([n for _, n in counts] + [1])
    inner = WIDTH - LEFT - RIGHT - 90
    parts = []
    for index, (act, n) in enumerate(counts):
        y, width = 6 + index * LANE, inner * n / most
        parts.append(
            el("text", esc(act), y=y + 14, fill="#333", **LABEL)
            + el("rect", x=LEFT, y=y + 3, width=float(width), height=LANE - 6, fill=colour(act))
            + el("text", f"{n} ({round(100 * n / total)}%)", x=LEFT + width + 6, y=y + 14)
        )
    return _svg(12 + LANE * len(counts), "shape", parts)


def _svg(height: int, label: str, parts: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{label}">{"".join(parts)}</svg>'
    )
