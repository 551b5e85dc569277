"""Text from a journal made safe for an HTML page: `esc`, which every HTML view goes through.

What a session recorded is whatever its commands and its model wrote; on a page it must stay
text. Markup is escaped, characters that are not text become U+FFFD, and bidirectional
controls are shown as their escapes, as the terminal and Markdown views show them
(safetext.py, reports/rationale/mdsafe.py).
"""

from __future__ import annotations

import html
import re

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
