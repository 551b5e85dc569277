"""System state outside the workspace: signals, the clock, the host name, the crontab and
installed packages (dpkg)."""

from __future__ import annotations

from ..core import Cmd, handles, words
from ..options import grammar, options, parse

_KILL = grammar(
    "kill pkill killall skill",
    "s:n:u:lL0",
    "signal: list:: table",
    note="signals processes, unless it lists signals (-l, -L, --list, --table) or sends "
    "signal 0 (-0)",
)


@handles("kill", "pkill", "killall", "skill")
def _kill(c: Cmd) -> None:
    o = parse(c.args, _KILL)
    if not o.has("-l", "-L", "--list", "--table", "-0"):
        c.change("signals processes", dynamic=False)


_DATE = grammar(
    "date",
    "d:f:I::r:Rs:u",
    "date: debug file: iso-8601:: resolution reference: rfc-email rfc-3339: set: universal utc",
    risky="-s --set",
    note="-s/--set, or an operand that is not +FORMAT, sets the clock",
    complete=True,
)


@handles("date")
def _date(c: Cmd) -> None:
    o = options(c, _DATE)
    if o.has("-s", "--set") or any(not (w.value or "").startswith("+") for w in o.pos):
        c.change("sets the system clock", dynamic=False)


_HOSTNAME = grammar(
    "hostname",
    "aAbdfF:iIsyn",
    "alias all-fqdns boot domain fqdn long file: ip-address all-ip-addresses short yp nis node",
    risky="-F --file -b --boot",
    note="an operand, -F/--file or -b/--boot sets the host name",
    complete=True,
)
_CRONTAB = grammar(
    "crontab",
    "u:lreisn:cT:V",
    note="replaces the crontab with its operand (- is standard input, and so is no operand), "
    "-e edits and -r removes it; -l, -T and -V only read",
    complete=True,
    abbrev=False,
)


@handles("hostname", "crontab", "ulimit")
def _system_setting(c: Cmd) -> None:
    if c.name == "crontab":
        o = options(c, _CRONTAB)
        if o.has("-e", "-r") or not o.sure("-l", "-T", "-V", "-c"):
            c.change("changes the crontab", dynamic=False)
    elif c.name == "hostname":
        o = options(c, _HOSTNAME)
        if o.pos or o.has("-F", "--file", "-b", "--boot"):
            c.change("sets the host name", dynamic=False)


_DPKG_READ = words(
    """-l --list -L --listfiles -s --status -S --search -p --print-avail -c --contents -I --info
    --compare-versions --print-architecture --print-foreign-architectures --get-selections -C
    --audit -V --verify -W --show --help --version --licence --license --force-help -Dhelp
    --no-pager --no-act --dry-run --simulate"""
)
_DPKG_LETTERS = frozenset("lLsSpcICVW")
_DPKG_VALUE = ("--admindir=", "--root=", "--instdir=", "--showformat=", "--verify-format=")
grammar(
    "dpkg",
    note="read-only only when every option reads: " + " ".join(sorted(_DPKG_READ)) + " ("
    "bundled as -lL...), with --admindir=, --root=, --instdir=, --showformat=, "
    "--verify-format=; --no-act, --dry-run and --simulate make any action read-only",
)


@handles("dpkg")
def _dpkg(c: Cmd) -> None:
    values = [w.value for w in c.args]
    dry = any(v in ("--no-act", "--dry-run", "--simulate") for v in values)
    for value in values:
        if value is None:
            break
        if value == "--":
            return
        if not value.startswith("-") or value.startswith(_DPKG_VALUE) or value in _DPKG_READ:
            continue
        if value.startswith("--log") or not (dry or _dpkg_letters(value)):
            break
    else:
        return
    c.change("changes system packages")


def _dpkg_letters(value: str) -> bool:
    return not value.startswith("--") and all(letter in _DPKG_LETTERS for letter in value[1:])
