"""What a session's commands run with: its scratch folder outside the workspace ($TMPDIR),
the environment they inherit, the capture files of the running command, the reaper of what
they leave behind; and the alert hooks' commands, confined like an observation."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..execute import ConfinementError, Reaper, bounded_text, run_shell

if TYPE_CHECKING:
    from typing import Any

    from ..core import Layout
    from ..execute import Confinement, Reaper


class Scratch:
    """Made once per process that opens a session; each part made when first needed."""

    def __init__(self, confinement: Confinement, layout: Layout, output_limit: int) -> None:
        self.confinement = confinement
        self.layout = layout
        self.output_limit = output_limit
        token = f"call-{os.getpid()}-{os.urandom(4).hex()}"
        self.capture = (layout.scratch / f"{token}.out", layout.scratch / f"{token}.err")
        self._folder: Path | None = None
        self._env: dict[str, str] | None = None
        self._reaper: Reaper | None = None

    def folder(self) -> Path:
        """This session's scratch folder, outside the workspace: $TMPDIR for its commands."""
        if self._folder is None:
            folder = Path(self.confinement.scratch)
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._folder = folder
        return self._folder

    def env(self) -> dict[str, str]:
        """The environment as the session found it, less the hidden agents' sockets, with
        TMPDIR on the scratch folder (built once per session)."""
        if self._env is None:
            hidden = self.confinement.hidden_env()
            kept = {name: value for name, value in os.environ.items() if name not in hidden}
            self._env = {**kept, "TMPDIR": str(self.folder())}
        return self._env

    def reaper(self) -> Reaper:
        """Catches what a command leaves running outside its group (made once: ctypes)."""
        if self._reaper is None:
            self._reaper = Reaper()
        return self._reaper

    def discard(self, ended: bool) -> None:
        """The process is done with the session: the capture files go (empty ones are kept
        for reuse until then); and once the session ended (no process will run its commands
        again), its scratch folder too if they left it empty (with files in it, it stays)."""
        for path in self.capture:
            path.unlink(missing_ok=True)
        if ended:
            with contextlib.suppress(OSError):
                os.rmdir(self.confinement.scratch)

    def run_hook(
        self, command: str, data: bytes, env: dict[str, str], timeout: float
    ) -> dict[str, Any]:
        """An alert hook's command, confined like an observation, from the scratch folder: it
        reads and reaches the network, but writes nothing but scratch, and what it starts
        ends with it. Its output goes to our stderr."""
        scratch = self.folder()
        event = scratch / f"event-{os.urandom(6).hex()}.json"
        event.write_bytes(data)
        launch = self.confinement.launch("collect-info")
        try:
            done = run_shell(
                command,
                scratch,
                timeout,
                self.layout.scratch,
                launch=launch,
                env={**self.env(), **{k: v for k, v in env.items() if k.startswith("EPISTEMIC_")}},
                reaper=self.reaper(),
                stdin=event,
                program="/bin/sh",
            )
        except (OSError, ConfinementError) as error:
            return {"ok": False, "error": f"cannot start: {error.strerror or error}"}
        finally:
            event.unlink(missing_ok=True)
        for path in (done.stdout, done.stderr):
            text = bounded_text(path, self.output_limit)
            if text:
                print(text, end="" if text.endswith("\n") else "\n", file=sys.stderr)
        done.discard()
        if done.timed_out:
            return {"ok": False, "error": f"timed out after {timeout:g} s", "returncode": None}
        took = round(done.duration, 3)
        return {"ok": done.returncode == 0, "returncode": done.returncode, "duration": took}
