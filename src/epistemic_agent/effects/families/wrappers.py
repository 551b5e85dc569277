"""Programs that run another command: each consumes its own options (and their values) before
the command it runs, which is then classified as if it stood alone."""

from __future__ import annotations

from ..core import Cmd, Word, dyn, handles, lit, maybe_option, static
from ..options import Grammar, grammar, options

_SUDO = grammar(
    "sudo sudoedit",
    "Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv",
    """askpass auth-type: background bell close-from: login-class: chdir: preserve-env:: edit
    group: set-home host: login remove-timestamp reset-timestamp list non-interactive
    preserve-groups prompt: chroot: role: stdin shell type: command-timeout: other-user: user:
    validate""",
    note="-e/--edit (and sudoedit) write every operand; -D/--chdir DIR is where the command "
    "runs; -h takes an attached host only, so `sudo -h rm x` is read as running rm",
    complete=True,
    stop=True,
)
_WRAPPERS: dict[str, tuple[Grammar, int]] = {
    # program: (grammar, words between its options and the command)
    "sudo": (_SUDO, 0),
    "doas": (grammar("doas", "a:C:Lnsu:", abbrev=False, complete=True, stop=True), 0),
    "nice": (
        grammar(
            "nice", "n:0123456789+", "adjustment:", note="-N is -n N", complete=True, stop=True
        ),
        0,
    ),
    "nohup": (grammar("nohup", complete=True, stop=True), 0),
    "stdbuf": (grammar("stdbuf", "i:o:e:", "input: output: error:", complete=True, stop=True), 0),
    "ionice": (
        grammar(
            "ionice",
            "c:n:p:P:tu:hV",
            "class: classdata: pid: pgid: ignore uid:",
            complete=True,
            stop=True,
        ),
        0,
    ),
    "setsid": (grammar("setsid", "cfwhV", "ctty fork wait", complete=True, stop=True), 0),
    "timeout": (
        grammar(
            "timeout",
            "k:s:v",
            "kill-after: signal: foreground preserve-status verbose",
            note="the first operand is the duration",
            complete=True,
            stop=True,
        ),
        1,
    ),
    "time": (
        grammar(
            "time",
            "af:o:pqvV",
            "append format: output: portability quiet verbose",
            risky="-o --output",
            note="-o/--output FILE is written",
            complete=True,
            stop=True,
        ),
        0,
    ),
    "builtin": (grammar("builtin", abbrev=False, complete=True, stop=True), 0),
    "exec": (grammar("exec", "cla:", abbrev=False, complete=True, stop=True), 0),
    "command": (grammar("command", "pvV", abbrev=False, complete=True, stop=True), 0),
    "chronic": (grammar("chronic", "ev", abbrev=False, complete=True, stop=True), 0),
    "unbuffer": (grammar("unbuffer", "p", abbrev=False, complete=True, stop=True), 0),
}


@handles(*_WRAPPERS, "sudoedit")
def _wrapper(c: Cmd) -> None:
    g, skip = _WRAPPERS["sudo" if c.name == "sudoedit" else c.name]
    o = options(c, g)
    if c.name == "time":
        c.write(o.get("-o", "--output"))
    if c.name == "command" and o.has("-v", "-V"):
        return
    if c.name == "sudoedit" or (c.name == "sudo" and o.has("-e", "--edit")):
        c.write(o.pos, "edits")
        return
    inner = o.pos[skip:]
    if inner:
        _run(c, inner, o.last("-D", "--chdir") if c.name == "sudo" else None)
    elif c.name in ("sudo", "doas") and o.has("-s", "--shell", "-i", "--login"):
        c.unknown("opens a root shell: effect unknown")


def _run(c: Cmd, inner: list[Word], chdir: Word | None = None) -> None:
    """Run the command; `sudo "$X" rm f`: $X may be the command, or an option before rm."""
    c.run(inner, chdir=chdir)
    if maybe_option(inner[0]) and len(inner) > 1:
        c.run(inner[1:], chdir=chdir)


_ENV = grammar(
    "env",
    "0a:C:iS:u:v",
    """null argv0: ignore-environment unset: chdir: split-string: debug default-signal::
    ignore-signal:: block-signal:: list-signal-handling""",
    note="-S/--split-string STRING is a command line; -C/--chdir DIR is where it runs",
    complete=True,
    stop=True,
)


@handles("env")
def _env(c: Cmd) -> None:
    o = options(c, _ENV)
    inner = list(o.pos)
    split = o.last("-S", "--split-string")
    if split is not None:
        c.script(static([split, *inner]), "runs a command string")
    elif inner:
        _run(c, inner, o.last("-C", "--chdir"))


_XARGS = grammar(
    "xargs",
    "0a:d:E:e::I:i::L:l::n:oP:prs:tx",
    """null arg-file: delimiter: eof:: replace:: max-lines:: max-args: open-tty interactive
    no-run-if-empty max-chars: verbose exit max-procs: process-slot-var: show-limits""",
    note="the command (echo by default) gets words read at run time appended, or put in "
    "place of the -I/-i token",
    complete=True,
    stop=True,
)


@handles("xargs")
def _xargs(c: Cmd) -> None:
    o = options(c, _XARGS)
    inner = o.pos or [lit("echo")]
    token = o.last("-I")
    if token is None and o.has("-i", "--replace"):
        token = o.last("-i", "--replace") or lit("{}")
    if token is not None and token.value:
        mark = token.value
        c.run([dyn(w) if mark in (w.value or "") else w for w in inner], fed=False)
    else:
        c.run(inner, fed=True)


_WATCH = grammar(
    "watch",
    "bcCd::eghn:pq:rs:tvwx",
    """beep color no-color differences:: errexit chgexit equexit: interval: precise no-rerun
    shotsdir: no-title no-wrap exec""",
    note="runs its operands with sh -c (with -x/--exec, as a command)",
    complete=True,
    stop=True,
)


@handles("watch")
def _watch(c: Cmd) -> None:
    o = options(c, _WATCH)
    if o.has("-x", "--exec"):
        c.run(o.pos)
    elif o.pos:
        c.script(static(o.pos))


@handles("eval")
def _eval(c: Cmd) -> None:
    c.script(static(c.args), "evaluates a string")


_TRAP = grammar("trap", "lp", abbrev=False, stop=True)


@handles("trap")
def _trap(c: Cmd) -> None:
    o = options(c, _TRAP)
    if len(o.pos) >= 2 and o.pos[0].value != "-" and not o.has("-l", "-p"):
        c.script(o.pos[0].value, "sets a trap")


@handles("alias")
def _alias(c: Cmd) -> None:
    """`alias NAME=BODY`: BODY runs wherever NAME is later used as a command (in bash once
    expand_aliases is on): it is classified as if it ran."""
    for word in c.args:
        name, eq, body = (word.value or "").partition("=")
        if word.value is None:
            c.unknown("defines an alias that is not known statically: effect unknown")
        elif eq and name:
            c.script(body, "defines an alias")


@handles("hash")
def _hash(c: Cmd) -> None:
    if any((w.value or "-p").startswith("-p") for w in c.args):
        c.unknown("binds a command name to a program by path (hash -p): effect unknown")


@handles("source", ".")
def _source(c: Cmd) -> None:
    c.unknown("runs a shell script in this shell: effect unknown")


grammar(
    "bash sh dash zsh ksh ash mksh fish",
    note="options up to the first operand; with -c the first operand is a command string; "
    "-o/-O (also inside a cluster), --rcfile and --init-file take a value; -n reads without "
    "running",
)


@handles("bash", "sh", "dash", "zsh", "ksh", "ash", "mksh", "fish")
def _shell(c: Cmd) -> None:
    args, i, command, noexec, stdin = c.args, 0, False, False, False
    while i < len(args):
        value = args[i].value
        if value is None or len(value) < 2 or value[0] not in "-+":
            break
        i += 1
        if value == "--":
            break
        if value in ("--rcfile", "--init-file"):
            i += 1
        elif not value.startswith("--"):
            command |= value[0] == "-" and "c" in value
            noexec |= value[0] == "-" and "n" in value
            stdin |= value[0] == "-" and "s" in value
            i += "o" in value[1:] or "O" in value[1:]
    rest = args[i:]
    if command:
        if rest:
            c.script(rest[0].value)
    elif noexec:
        return
    elif rest and not stdin:
        c.unknown(f"runs the script {rest[0].raw}: effect unknown")
    else:
        c.unknown("reads commands from stdin: effect unknown")
