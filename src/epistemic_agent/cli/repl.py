"""`epistemic repl`: messages to the agent, one per line, and slash commands.

On a terminal (stdin and stdout both), lines are read with prompt_toolkit: line editing,
history kept across sessions (see `history_path`), Ctrl-C clears the line, Ctrl-D on an
empty line ends. Piped input is read line by line, slash commands included. While the agent
works, Ctrl-C is the loop's: the first stops after the running call, the second aborts it
(both journaled as an `interrupt`); the REPL then waits for the next message.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import SupervisorUnavailable, visible

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..agent import Agent, LiveEvents, Stop
    from ..session import Session

PROMPT = "epistemic> "
COMMANDS = {
    "/help": "this list",
    "/log": "the session's calls, one row each (epistemic log)",
    "/show N": "call N in full, as `epistemic show N` prints it",
    "/stats": "the session's numbers (epistemic stats)",
    "/new": "end this session and start a new one: a new journal, a new conversation",
    "/exit": "end (also Ctrl-D)",
}
ALIASES = {"/quit": "/exit", "/?": "/help"}


def history_path() -> Path:
    """The REPL's history: `$XDG_STATE_HOME/epistemic/repl-history`, by default
    `~/.local/state/epistemic/repl-history`. Outside the workspace on purpose: a workspace's
    commands may write there (its history could be planted), and `.epistemic/` holds only
    the record."""
    base = os.environ.get("XDG_STATE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "epistemic" / "repl-history"


def _private_file(path: Path) -> bool:
    """Make the history file (mode 0600, its folder 0700) if it is missing; whether it can
    be used."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600))
    except OSError:
        return False
    return True


def line_reader(history: Path | None, redact: Callable[[str], str]) -> Callable[[], str]:
    """The one place prompt_toolkit is imported: a function that reads one edited line
    (KeyboardInterrupt on Ctrl-C, EOFError on Ctrl-D). History is stored redacted, as the
    journal stores the message."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.completion import Completer, Completion
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    class RedactedHistory(FileHistory):
        def store_string(self, string: str) -> None:
            super().store_string(redact(string))

    class SlashCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Any:
            word = document.text_before_cursor
            if word.startswith("/") and " " not in word:
                for name in [*COMMANDS, *ALIASES]:
                    if name.startswith(word):
                        yield Completion(name.split()[0], start_position=-len(word))

    stored = RedactedHistory(str(history)) if history is not None else InMemoryHistory()
    prompt: Any = PromptSession(history=stored, completer=SlashCompleter())
    return lambda: str(prompt.prompt(PROMPT))


class Repl:
    """One REPL over one session and one agent."""

    def __init__(
        self,
        session: Session,
        agent: Agent,
        events: LiveEvents,
        model: str,
        run_cli: Callable[[list[str]], int],
    ) -> None:
        """`run_cli` runs an `epistemic` command line in this process (`/show`, `/log`...)."""
        self.session, self.agent, self.events, self.model = session, agent, events, model
        self.run_cli = run_cli
        self.stop: Stop | None = None
        self.interactive = sys.stdin.isatty() and sys.stdout.isatty()

    def run(self) -> int:
        read = self._reader()
        if self.interactive:
            print("/help lists the commands; Ctrl-D ends.", flush=True)
        while True:
            try:
                line = read()
            except KeyboardInterrupt:  # Ctrl-C at the prompt: the line is cleared, go on
                continue
            except EOFError:
                break
            if not self.handle(line.strip()):
                break
        return 0 if self.stop is None else int(self.stop.exit_code)

    def _reader(self) -> Callable[[], str]:
        if not self.interactive:
            return _piped
        path = history_path()
        if not _private_file(path):
            print(f"note: no history kept: {visible(str(path))} cannot be written", flush=True)
        usable = path if path.is_file() else None
        return line_reader(usable, lambda text: self.session.scrubber.text(text))

    def handle(self, line: str) -> bool:
        """One line: a message for the agent or a slash command; False to end."""
        if not line:
            return True
        if line.startswith("/") and not line.startswith("//"):
            return self.command(line)
        self.ask(line[1:] if line.startswith("//") else line)
        return True

    def ask(self, text: str) -> None:
        started = time.monotonic()
        try:
            self.stop = self.agent.run(text)
        except KeyboardInterrupt:  # a Ctrl-C outside the loop's own handling
            self.events.notice("interrupted")
            return
        self.events.answered(self.stop, time.monotonic() - started)

    def command(self, line: str) -> bool:
        name, _, rest = line.partition(" ")
        name = ALIASES.get(name, name)
        known = {key.split()[0] for key in COMMANDS}
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known | set(ALIASES)), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            self._say(f"unknown command {visible(name)}{hint}; /help lists them")
            return True
        if name == "/exit":
            return False
        try:
            getattr(self, "_" + name[1:])(rest.strip())
        except KeyboardInterrupt:
            self._say("interrupted")
        return True

    def _help(self, rest: str) -> None:
        width = max(map(len, COMMANDS))
        lines = [f"  {name:<{width}}  {meaning}" for name, meaning in COMMANDS.items()]
        lines.append("  anything else is a message to the agent (start it with // to send /...)")
        self._say("\n".join(lines))

    def _log(self, rest: str) -> None:
        self._cli("log", str(self.session.workspace), "--session", self.session.session_id)

    def _stats(self, rest: str) -> None:
        self._cli("stats", str(self.session.workspace), "--session", self.session.session_id)

    def _show(self, rest: str) -> None:
        word = rest.strip().lstrip("#")
        if not word.isdigit() or int(word) < 1:
            self._say("/show needs a call number, e.g. /show 3")
            return
        self._cli("show", word, *self._this_session())

    def _this_session(self) -> tuple[str, ...]:
        return ("-C", str(self.session.workspace), "--session", self.session.session_id)

    def _new(self, rest: str) -> None:
        from ..policy import PolicyError
        from .repl_session import fresh

        ended = self.session.session_id
        try:
            self.session, self.agent = fresh(self.session, self.agent)
        except (PolicyError, SupervisorUnavailable, OSError) as error:
            self._say(visible(f"no new session: {error}; this one goes on"))
            return
        self.stop = None
        self._say(
            f"a new session: {self.session.session_id} (session {ended[:12]} is closed; "
            "the model no longer sees its messages)"
        )

    def _cli(self, *words: str) -> None:
        sys.stdout.flush()
        with contextlib.suppress(SystemExit):  # argparse's: it must never end the REPL
            self.run_cli(list(words))
        sys.stdout.flush()

    def _say(self, text: str) -> None:
        print(text, flush=True)


def _piped() -> str:
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line
