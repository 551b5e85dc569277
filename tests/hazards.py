"""What an agent's commands can leave at a name the session reads: a FIFO (opening it waits
for a writer), a Unix socket, a device node (/dev/zero's: endless), a symlink loop, and a
sparse file of 4 GB. `plant` puts one at a path."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from pathlib import Path

#: Each hazard, and words the session's refusal of it holds.
WORDS = {
    "fifo": "a FIFO",
    "socket": "a socket",
    "device": "a character device",
    "loop": "symbolic link",  # "Too many levels of symbolic links", or "(a symbolic link)"
    "sparse": "larger than",
}
KINDS = tuple(kind for kind in WORDS if kind != "device" or os.geteuid() == 0)
SPARSE_BYTES = 4 << 30


def plant(path: Path, kind: str) -> None:
    """Put the hazard `kind` at `path`. What was there is removed first, except for `sparse`:
    a regular file there keeps its content as the start of 4 GB (a valid first line, then
    zeros: what git reads whole)."""
    if kind == "sparse" and path.is_file() and not path.is_symlink():
        os.truncate(path, SPARSE_BYTES)
        return
    if path.is_symlink() or path.exists():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with contextlib.chdir(path.parent), socket.socket(socket.AF_UNIX) as server:
            server.bind(path.name)  # relative: a socket's path is limited to 107 bytes
    elif kind == "device":
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero
    elif kind == "loop":
        path.symlink_to(path.name)
    elif kind == "sparse":
        with path.open("wb") as handle:
            handle.truncate(SPARSE_BYTES)
    else:
        raise ValueError(kind)
