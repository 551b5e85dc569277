"""The scrubbing of secrets from everything a session records: its records, the captured
output of its acts, and the text it shows."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..core import Redactor

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any, BinaryIO

    from ..policy import Policy

#: Record fields written by the tool itself, never free text: not scanned for secrets.
PLAIN_FIELDS = frozenset(
    (
        *("kind", "t", "seq", "pid", "act", "mutating", "lines", "inputs", "evidence"),
        *("enforcement", "started", "session", "tool_version", "python", "decision", "channel"),
    )
)
SCRUB_CHUNK = 1 << 20  # output is scrubbed a chunk at a time, each cut after a newline


class Scrubber:
    """Replaces the secrets a policy names (and those of the environment) with markers."""

    def __init__(self, policy: Policy) -> None:
        self.redactor = Redactor(os.environ, policy.secret_patterns, policy.secret_names)

    def text(self, text: str) -> str:
        """`text` as it may be shown or recorded."""
        return self.redactor.text(text)[0]

    def clean(self, text: str) -> bool:
        """Whether `text` holds no secret."""
        return self.redactor.text(text)[1] == 0

    def scrub(self, value: Any) -> tuple[Any, int]:
        """Any JSON-like value with every secret in its strings replaced by a marker. In a
        record, the fields that never hold free text are passed over (it runs on every call)."""
        if not isinstance(value, dict):
            return self.redactor.value(value)
        total, out = 0, {}
        for key, item in value.items():
            if key in PLAIN_FIELDS or not isinstance(item, str | dict | list):
                out[key] = item
                continue
            if key == "effect" and not total:  # derived from the command, which had none
                out[key] = item
                continue
            out[key], count = self.redactor.value(item)
            total += count
        return (out if total else value), total

    def scrub_file(self, path: Path) -> int:
        """Replace secrets in a capture file before anyone reads it: one read when there are
        none (the usual case), else a rewrite; memory stays flat whatever the output's size."""
        try:
            if os.stat(path).st_size == 0:  # most stderr: nothing to open
                return 0
            with path.open("rb") as source:
                found = sum(self.redactor.data(chunk)[1] for chunk in _chunks(source))
        except FileNotFoundError:
            return 0
        if not found:
            return 0
        scrubbed = path.with_name(path.name + ".scrubbed")
        with path.open("rb") as source, scrubbed.open("wb") as target:
            for chunk in _chunks(source):
                target.write(self.redactor.data(chunk)[0])
        os.replace(scrubbed, path)
        return found


def _chunks(source: BinaryIO) -> Iterator[bytes]:
    """A file's bytes in pieces of about SCRUB_CHUNK, each ending at a line end where there is
    one: a secret within a line is never cut in two (a multi-line key block at a cut can be)."""
    carry = b""
    while block := source.read(SCRUB_CHUNK):
        block = carry + block
        cut = block.rfind(b"\n") + 1 or len(block)
        carry = block[cut:]
        yield block[:cut]
    if carry:
        yield carry
