"""The pieces every program table uses: words, the command a handler judges, what it found,
and the registry that sends a command to its handler.

A handler receives a `Cmd` (program name, argument words, cwd) and reports what it finds:
`write`/`delete` (mutating, with paths), `change` (mutating, where is not statically known),
`unknown`. A handler that reports nothing has judged the command read-only. A program with
neither a handler nor a place in a table is unknown: read-only must be earned.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence

from .model import MUTATING, UNKNOWN

MAX_PART = 60


class Word:
    """One shell word: its source text and its literal value (None when not static).

    A plain class with slots, not a struct: words are made by the tens of thousands."""

    __slots__ = ("lead", "procsub", "raw", "split", "tilde", "value")

    def __init__(
        self,
        raw: str,
        value: str | None,
        tilde: bool = False,
        procsub: bool = False,
        lead: str = "",
        split: bool = False,
    ) -> None:
        self.raw = raw
        self.value = value
        self.tilde = tilde  # an unquoted leading ~: home-relative, never joined to the cwd
        self.procsub = procsub  # <(...) / >(...): a /dev/fd path, never a workspace file
        self.lead = lead  # not static: the literal text it starts with ("" when expanded)
        self.split = split  # not static: may become several words, or none (globs, $x)

    def _key(self) -> tuple[str, str | None, bool, bool, str, bool]:
        return (self.raw, self.value, self.tilde, self.procsub, self.lead, self.split)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Word) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Word{self._key()!r}"


def lit(text: str) -> Word:
    return Word(text, text)


def dyn(word: Word, lead: str = "") -> Word:
    """The word with its value known only at run time (`{}` of find and xargs)."""
    return Word(word.raw, None, lead=lead)


#: What xargs appends to the command it runs.
RUN_TIME = Word("(words read at run time)", None, split=True)


def maybe_option(word: Word) -> bool:
    """A word not known statically that may start with "-" once expanded: an option, perhaps."""
    return word.value is None and not word.procsub and (not word.lead or word.lead[0] == "-")


ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_HARMLESS = re.compile(r"/dev/(null|zero|full|stdin|stdout|stderr|tty|fd/\d+)|/proc/self/fd/\d+")
_BIN_DIRS = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"}
)
VERSION_ARGS = frozenset({"--version", "-V", "--help", "-h", "-version", "-help", "-VV"})


def norm(word: Word, cwd: str | None) -> str | None:
    """The normalised path a word names, relative to the starting cwd; None if not static."""
    value = word.value
    if value is None or word.procsub:
        return None
    if word.tilde or value.startswith("/"):
        path = posixpath.normpath(value)
        return path if not word.tilde or path.startswith("~") else None
    if cwd is None:
        return None
    path = posixpath.normpath(posixpath.join(cwd, value))
    return None if cwd.startswith("~") and not path.startswith("~") else path


def program(name: str) -> str:
    """`/usr/bin/rm` is rm; `./rm` or `bin/rm` is a script."""
    head, _, tail = name.rpartition("/")
    return tail if head in _BIN_DIRS else name


def shorten(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_PART else flat[: MAX_PART - 3] + "..."


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def static(args: Sequence[Word]) -> str | None:
    """The words joined by spaces, if all are literal (eval, watch)."""
    values = [word.value for word in args]
    return None if None in values else " ".join(value for value in values if value is not None)


class Findings:
    """What a command does, accumulated over all its parts."""

    def __init__(self, script: Callable[[str, str | None, str], None]) -> None:
        self.writes: list[str] = []
        self.deletes: list[str] = []
        self.reasons: list[str] = []
        self.dynamic = False
        self.changes = 0  # mutating findings so far
        self.mutating = False
        self.unknown = False
        self.functions: set[str] = set()
        self.script = script  # classify a nested shell string: (text, cwd, part)

    def add(
        self,
        cls: str,
        reason: str,
        writes: Iterable[str] = (),
        deletes: Iterable[str] = (),
        dynamic: bool = False,
    ) -> None:
        self.changes += cls == MUTATING
        self.mutating |= cls == MUTATING
        self.unknown |= cls == UNKNOWN
        self.dynamic |= dynamic
        self.writes.extend(writes)
        self.deletes.extend(deletes)
        self.reasons.append(reason)


class Cmd:
    """One simple command as a handler sees it (a slotted class: made for every command)."""

    __slots__ = ("args", "cwd", "doubts", "name", "out", "part")

    def __init__(
        self,
        name: str,
        args: list[Word],
        cwd: str | None,
        part: str,
        out: Findings,
        doubts: list[str] | None = None,
    ) -> None:
        self.name = name
        self.args = args
        self.cwd = cwd
        self.part = part  # the text named in reasons
        self.out = out
        self.doubts = [] if doubts is None else doubts  # words that may be options that write

    def but(self, args: Sequence[Word], cwd: str | None) -> Cmd:
        """The same command (its doubts shared) with other words or another cwd."""
        return Cmd(self.name, list(args), cwd, self.part, self.out, self.doubts)

    def write(self, words: Iterable[Word], verb: str = "writes") -> None:
        self._files(words, verb, deleting=False)

    def delete(self, words: Iterable[Word], verb: str = "deletes") -> None:
        self._files(words, verb, deleting=True)

    def _files(self, words: Iterable[Word], verb: str, deleting: bool) -> None:
        known: list[str] = []
        shown: list[str] = []
        for word in words:
            if word.procsub or word.value == "":
                continue
            path = norm(word, self.cwd)
            if path is None:
                shown.append(f"{word.raw} (not known statically)")
            elif deleting or not _HARMLESS.fullmatch(path):
                known.append(path)
        if not known and not shown:
            return
        text = f"`{self.part}` {verb} {', '.join(known + shown)}"
        if deleting:
            self.out.add(MUTATING, text, deletes=known, dynamic=bool(shown))
        else:
            self.out.add(MUTATING, text, writes=known, dynamic=bool(shown))

    def change(self, what: str, dynamic: bool = True) -> None:
        """Mutating, but what changes is not a statically known path."""
        self.out.add(MUTATING, f"`{self.part}` {what}", dynamic=dynamic)

    def unknown(self, what: str) -> None:
        self.out.add(UNKNOWN, f"`{self.part}` {what}")

    def run(
        self,
        argv: Sequence[Word],
        chdir: Word | None = None,
        lose_cwd: bool = False,
        fed: bool = False,
    ) -> None:
        """Classify a command this one runs (wrappers, xargs, find -exec). `fed`: xargs (or
        fd -x) appends words read at run time, which may be options as well as operands."""
        argv = [*argv, RUN_TIME] if fed else list(argv)
        while argv and ASSIGNMENT.match(argv[0].raw):
            environment(self.out, argv[0].raw.partition("=")[0], self.part)
            argv.pop(0)  # `time X=1 cmd`, `sudo X=1 cmd`
        if not argv:
            return
        name = argv[0].value
        if name is None:
            self.unknown(
                f"runs a command whose name is not known statically ({argv[0].raw}): effect unknown"
            )
            return
        cwd = None if lose_cwd else (norm(chdir, self.cwd) if chdir is not None else self.cwd)
        dispatch(Cmd(program(name), list(argv[1:]), cwd, self.part, self.out))

    def script(self, text: str | None, what: str = "runs a command string") -> None:
        if text is None:
            self.unknown(f"{what} that is not known statically: effect unknown")
        else:
            self.out.script(text, self.cwd, self.part)


#: Variables that make the programs a command runs load or run code of the caller's choosing.
LOADS_CODE = words(
    """LD_PRELOAD LD_AUDIT LD_LIBRARY_PATH BASH_ENV PYTHONPATH PYTHONHOME
    PERL5OPT PERL5LIB PERLLIB RUBYOPT RUBYLIB NODE_OPTIONS GIT_EXTERNAL_DIFF GIT_SSH
    GIT_SSH_COMMAND GIT_EXEC_PATH GIT_ASKPASS GIT_CONFIG GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM
    GIT_CONFIG_PARAMETERS GIT_CONFIG_COUNT LESSOPEN LESSCLOSE"""
)


def environment(out: Findings, name: str, part: str) -> None:
    """An assignment (`X=1 cmd`, `export X=1`, `env X=1 cmd`) to a variable that loads code."""
    if name in LOADS_CODE:
        out.add(
            UNKNOWN, f"`{part}` sets {name}, which makes programs run other code: effect unknown"
        )


Handler = Callable[[Cmd], None]
#: The registry, filled by the program families when effects_programs imports them.
HANDLERS: dict[str, Handler] = {}
READ_ONLY_PROGRAMS: set[str] = set()
PATTERNS: list[tuple[re.Pattern[str], Handler]] = []  # names matched by form (python3.11)
FALLBACK: list[Handler] = []  # what judges every other program (unknown)


def handles(*names: str) -> Callable[[Handler], Handler]:
    def register(func: Handler) -> Handler:
        for name in names:
            HANDLERS[name] = func
        return func

    return register


def dispatch(cmd: Cmd) -> None:
    """Judge one simple command by its program."""
    name = cmd.name
    if name in cmd.out.functions:
        return  # its body was classified where the function was defined
    handler = HANDLERS.get(name)
    if handler is None:
        if name in READ_ONLY_PROGRAMS:
            return
        handler = next((h for form, h in PATTERNS if form.fullmatch(name)), FALLBACK[0])
    before = cmd.out.changes
    handler(cmd)
    if cmd.doubts:
        _doubt(cmd, cmd.out.changes > before)


def _doubt(cmd: Cmd, writes: bool) -> None:
    """Words that may be options which write: a program that wrote nothing else is classed as
    writing (where is not known); one that writes anyway is also unknown (it may write more)."""
    what = "; ".join(dict.fromkeys(cmd.doubts))
    if writes:
        cmd.unknown(f"may also write elsewhere: {what}: effect unknown")
    else:  # the gate shows this reason: say how to make the word plainly an operand
        cmd.change(f"may write or run a program: {what} (after --, or as ./..., it cannot)")
