"""Text from a journal (or a bundle, or a folder name) made safe to print on a terminal.

What a session recorded is whatever its commands and its model wrote: an escape sequence in
an act, a command or a file name could retitle the window, clear the screen or draw a fake
line of output. Everything the readers print in text mode goes through `visible`; everything
the HTML views show goes through `htmltext.esc`.
"""

from __future__ import annotations

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
