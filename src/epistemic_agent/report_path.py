"""Where the report is written: RATIONALE.md, unless the workspace already has a RATIONALE.md
of its own. A user's file is never overwritten (docs/report.md, "Where the report is").

- `RATIONALE.epistemic.md` exists: the report stays there (it was chosen before);
- no `RATIONALE.md`, or one this renderer wrote: `RATIONALE.md`;
- a `RATIONALE.md` this renderer did not write (or a link, a folder): `RATIONALE.epistemic.md`.

"Written by this renderer" is read from the file's two marker lines, which `render` writes
and nothing else does: its title line (`# RATIONALE`) first, and last the footer that names
the journal's head (`_Journal head: `<hash>` ... `epistemic verify` ..._`).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from .layout import OWN_REPORT_NAME, REPORT_NAME

TITLE = b"# RATIONALE\n"
FOOTER = re.compile(rb"\n_Journal head: `[0-9a-f]{64}` .*`epistemic verify[^\n]*_\n\Z")
PEEK = 4096


def report_path(workspace: Path) -> Path:
    """The file the report of this workspace goes to (see the module's docstring)."""
    own = workspace / OWN_REPORT_NAME
    if os.path.lexists(own):
        return own
    usual = workspace / REPORT_NAME
    if not os.path.lexists(usual) or is_ours(usual):
        return usual
    return own


def is_ours(path: Path) -> bool:
    """Whether a regular file (not followed through a link) was written by this renderer."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    if not stat.S_ISREG(os.fstat(handle).st_mode):  # a folder, a fifo: not a report
        os.close(handle)
        return False
    with os.fdopen(handle, "rb") as file:
        if file.read(len(TITLE)) != TITLE:
            return False
        size = os.fstat(file.fileno()).st_size
        file.seek(max(size - PEEK, 0))
        return FOOTER.search(file.read()) is not None


def moved_note(workspace: Path) -> str | None:
    """What to tell the user when the report is about to be written beside their own
    RATIONALE.md for the first time; None otherwise."""
    own = workspace / OWN_REPORT_NAME
    if report_path(workspace) != own or os.path.lexists(own):
        return None
    return (
        f"{workspace / REPORT_NAME} is not an epistemic report (the workspace's own file): it "
        f"is left as it is, and the report is written to {own}"
    )
