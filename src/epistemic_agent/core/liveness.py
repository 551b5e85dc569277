"""Whether the process that declared a call is still there to record its outcome."""

from __future__ import annotations

import os

SLACK = 1.0  # seconds: /proc/stat's boot time is whole seconds


def recorder_alive(pid: int | None, declared: float) -> bool:
    """Whether the process `pid` is alive and old enough to have declared the call at
    `declared` (epoch seconds): a pid that was reused since belongs to a younger process."""
    if pid is None or pid <= 0:
        return False
    if pid == os.getpid():  # another session of this very process may be recording it; a
        return True  # reused pid is left for a later process to recover
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        started = _boot_time() + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return False
    return started <= declared + SLACK


def _boot_time() -> float:
    with open("/proc/stat", "rb") as handle:
        for line in handle:
            if line.startswith(b"btime "):
                return float(line.split()[1])
    raise ValueError("no btime in /proc/stat")
