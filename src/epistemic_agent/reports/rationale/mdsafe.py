"""Journal text made inert in Markdown (RATIONALE.md and its pages; docs/report.md): shown as it
was recorded, never read as structure.

What a session recorded is whatever its model and its commands wrote. A reason with a line
break could start a heading, a table or a second "Journal head" line; a `[link](...)`, an
`<a name=...>`, `<script>` or `$math$` would be rendered. So every piece of it is one of:

- `text`: one line, Markdown punctuation backslash-escaped (it renders as itself), line
  breaks and other control characters shown as escapes (`\\n`, `\\x1b`);
- `code`: an inline code span whose fence no backtick inside can close;
- `block`: a fenced block for text of several lines, its lines as they are (control
  characters but tabs as escapes), under a fence no line inside can close.
"""

from __future__ import annotations

import re

#: What may start or end an inline construct: emphasis, code, links, images, raw HTML and
#: entities, table cells, strikethrough, math, and a heading's `#` (harmless inline, but cheap).
_PUNCTUATION = re.compile(r"[\\`*\[\]<>&|~!$#]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
#: What GitHub turns into a link without any syntax: `https://`, `www.`, `name@host`.
_AUTOLINK = re.compile(r":(?=//)|(?<=\bwww)\.|@", re.IGNORECASE)
_BACKTICKS = re.compile(r"`+")
_LEADING = re.compile(r"^(\d*)([-+=.)])")  # `- x`, `+ x`, `===`, `1. x`, `2) x`


def visible(text: str, keep: str = "") -> str:
    """Control characters (a terminal escape, a line break, a bidirectional override) as
    escapes, except those in `keep`."""
    if text.isprintable():
        return text
    return "".join(
        char if char.isprintable() or char in keep else repr(char)[1:-1] for char in text
    )


def text(value: object, line_start: bool = False) -> str:
    """Inline text, one line, that renders exactly as `value` reads; at the `line_start`
    (a quote's line), a leading `-`, `+`, `=` or `1.` is escaped too (no list, no rule)."""
    flat = visible(str(value).strip())
    flat = _AUTOLINK.sub(_escaped, _PUNCTUATION.sub(_escaped, flat))
    return _LEADING.sub(_escaped_group, flat, count=1) if line_start else flat


def _escaped_group(match: re.Match[str]) -> str:
    return match.group(1) + "\\" + match.group(2)


def _escaped(match: re.Match[str]) -> str:
    return "\\" + match.group()


def code(value: object, cell: bool = False) -> str:
    """An inline code span; in a table `cell`, its pipes escaped as GFM tables need."""
    content = visible(str(value))
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    fence = "`" * (longest + 1)
    if content[:1] in ("`", " ") or content[-1:] in ("`", " "):
        content = f" {content} "  # one space each side is stripped, so both are kept
    span = f"{fence}{content}{fence}"
    return span.replace("|", "\\|") if cell else span


def block(value: object, info: str = "text") -> str:
    """A fenced block of the lines of `value`, as they are."""
    content = visible(str(value).strip("\n"), keep="\n\t")
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{content}\n{fence}"


def prose(label: str, value: object) -> str:
    """`**Label:** text` for one line; for several, the label and the text in a block."""
    body = str(value).strip()
    if "\n" not in body and "\r" not in body:
        return f"{label} {text(body)}" if body else label
    return f"{label}\n\n{block(body)}"
