"""What a benchmark run is: its configuration, the scripted plays of `--check-oracles`, and the
agents running now."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any

from ..core import struct

#: Seconds an agent has to end after its second Ctrl-C before it gets SIGTERM
LATE = 3.0


@struct
class BenchConfig:
    """What to run: the model (`replay` plays each task's reference session), step limit."""

    model: str
    out: Path
    max_steps: int = 80
    jobs: int = 2
    fresh: bool = False
    extra_args: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()  # more paths the agents must not see (`--hide`)
    speed: float | None = None  # the machine's slowness for the oracles' budgets (None: measure)
    explain: bool = False  # oracles explain their failures (maintainers, --check-oracles only)


@struct
class Play:
    """One scripted session of `--check-oracles`: its kind, its file, what it must come to."""

    kind: str  # reference, alternative, wrong, gaming
    script: Path
    expect: str  # pass or fail

    @property
    def label(self) -> str:
        return f"{self.kind}-{self.script.stem}"


class Running:
    """The agents running now, so that Ctrl-C reaches them (each runs in its own session)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: set[Any] = set()

    def add(self, process: Any) -> None:
        with self._lock:
            self._processes.add(process)

    def discard(self, process: Any) -> None:
        with self._lock:
            self._processes.discard(process)

    def interrupt(self, late: float = LATE) -> None:
        """Ctrl-C twice to every running agent: the first stops its loop, the second the
        command it is running; each journals that it was interrupted. Two signals sent close
        together can reach a busy agent as one (it stops its loop, and lets the command run
        on): an agent still running `late` seconds after gets SIGTERM, which `run` takes as
        a second Ctrl-C."""
        for _ in range(2):
            self._signal(signal.SIGINT)
            time.sleep(0.3)
        deadline = time.monotonic() + late
        while time.monotonic() < deadline and self._running():
            time.sleep(0.05)
        self._signal(signal.SIGTERM)

    def _running(self) -> bool:
        with self._lock:
            return any(process.poll() is None for process in self._processes)

    def _signal(self, number: int) -> None:
        with self._lock:
            for process in self._processes:
                if process.poll() is None:
                    process.send_signal(number)
