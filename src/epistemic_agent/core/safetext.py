"""Text from a journal (or a bundle, or a folder name) made safe to print on a terminal.

What a session recorded is whatever its commands and its model wrote: an escape sequence in
an act, a command or a file name could retitle the window, clear the screen or draw a fake
line of output. Everything the readers print in text mode goes through `visible`; everything
the HTML views show goes through `esc`.
"""

from __future__ import annotations

import html
import re

CONTINUATION = "\n           │ "  # marks each further line of a multi-line text


def visible(text: str) -> str:
    """Text as a human may safely read it on a terminal: control characters (an escape
    sequence could redraw the screen), bidirectional overrides and the like are shown as
    escapes, and every further line of a multi-line text is marked, so that no line of a
    command can pass for a field of the question."""
    shown = "".join(
        char if char == "\n" or char.isprintable() else repr(char)[1:-1] for char in text
    )
    return shown.replace("\n", CONTINUATION)


def one_line(text: str) -> str:
    """Text as one line: every control character, line breaks included, shown as an escape
    (for a label in a picture: a font has no glyph for them)."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


# C0 controls (but tab, newline, carriage return), DEL, and lone surrogates: not text
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
#: Bidirectional controls (embeddings, overrides, isolates, marks): shown as their escapes, as
#: the terminal and Markdown views show them, so that text cannot be made to read reversed.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def esc(value: object) -> str:
    """Text (or anything, as text) made safe for an HTML element or a quoted attribute."""
    text = value if isinstance(value, str) else str(value)
    text = _BIDI.sub(lambda found: f"\\u{ord(found.group()):04x}", _NOT_TEXT.sub("\ufffd", text))
    return html.escape(text, quote=True)
