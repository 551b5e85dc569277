"""A view: what one kind of act may write, may not see, and may only read (decided by
`Confinement`, applied by `apply`)."""

from __future__ import annotations

from ...core import struct


@struct
class View:
    """What one kind of act may write, may not see, and may only read."""

    mutating: bool
    writable: tuple[str, ...]  # directories: the workspace (mutating), scratch, grants
    hidden: tuple[str, ...]  # replaced by an empty read-only folder (or file)
    protected: tuple[str, ...]  # read-only inside a writable area
    covers: tuple[tuple[str, str], ...] = ()  # (path, decoy): path shows the decoy, read-only
    readable: tuple[str, ...] | None = None  # all an act may read besides `writable` (None: all)
    #: folders inside a writable area that lead to a protected, hidden or covered path: each is
    #: bound onto itself (a mount point cannot be renamed or removed), so that no act can move
    #: one aside and rebuild the path with content of its own. Shallowest first.
    pinned: tuple[str, ...] = ()
