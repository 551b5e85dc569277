"""awk: in-place editing (gawk -i inplace), the files gawk's -o/-p/-d write, and the
redirections and commands of its programs, which are scanned, not interpreted."""

from __future__ import annotations

import posixpath
import re

from ..core import ASSIGNMENT, Cmd, Word, handles, lit, words
from ..options import grammar, options
from .sed import delimited, eol

_AWK = grammar(
    "awk gawk mawk nawk",
    "F:f:v:W:bcCd::D::e:E:ghi:Il:L::kMnNo::Op::PrsStVYZ:",
    """field-separator: file: assign: characters-as-bytes traditional copyright
    dump-variables:: debug:: source: exec: gen-pot include: csv load: lint:: bignum
    non-decimal-data pretty-print:: optimize no-optimize profile:: posix re-interval sandbox
    lint-old use-lc-numeric trace locale: dump interactive posix_space usage sprintf: random:""",
    risky="-i --include -o --pretty-print -p --profile -d --dump-variables -l --load -E --exec "
    "-f --file",
    note='options end at the program text; -i/--include inplace (or @include "inplace") '
    "rewrites the file operands; -o/-p/-d write awkprof.out or awkvars.out (or their "
    "attached file); -W X is --X (mawk); the program's print/printf redirections write and "
    "its pipes and system() run commands",
    complete=True,
    stop=True,
)
_INPLACE = re.compile(r'@include\s+"(?:[^"]*/)?inplace(?:\.awk)?"')
_WRITES = {
    "-o": "awkprof.out",
    "--pretty-print": "awkprof.out",
    "-p": "awkprof.out",
    "--profile": "awkprof.out",
    "-d": "awkvars.out",
    "--dump-variables": "awkvars.out",
}


@handles("awk", "gawk", "mawk", "nawk")
def _awk(c: Cmd) -> None:
    o = options(c, _AWK, _long_w(c.args))
    sources = o.get("-e", "--source")
    from_file = o.has("-f", "--file", "-E", "--exec")
    programs = sources or ([] if from_file else o.pos[:1])
    files = [w for w in (o.pos if sources or from_file else o.pos[1:]) if not _assignment(w)]
    includes = [posixpath.basename(w.value or "?") for w in o.get("-i", "--include")]
    texts = [w.value or "" for w in programs]
    if {"inplace", "inplace.awk"} & set(includes) or any(_INPLACE.search(t) for t in texts):
        c.write(files, "modifies in place")
    for name, value in o.flags:
        if name in _WRITES:
            c.write([value or lit(_WRITES[name])])
    if set(includes) - {"inplace", "inplace.awk"} or o.has("-l", "--load"):
        c.unknown("loads an awk library or extension: effect unknown")
    if o.sure("-S", "--sandbox"):
        return
    if from_file:
        c.unknown("runs an awk program file: effect unknown")
    for program_word in programs:
        found = _awk_scan(program_word.value) if program_word.value is not None else None
        if found is None or "@load" in (program_word.value or ""):
            c.unknown("has an awk program that is not understood statically: effect unknown")
            continue
        written, commands = found
        c.write(
            [lit(name) if name is not None else Word("(an expression)", None) for name in written]
        )
        for command in commands:
            c.script(command, "runs a command from its program")


def _long_w(args: list[Word]) -> list[Word]:
    """`-W dump-variables=f` (and mawk's `-W exec file`) is `--dump-variables=f`."""
    out: list[Word] = []
    taking = False
    for word in args:
        value = word.value
        if taking and value is not None:
            out.append(lit("--" + value))
        elif not taking and value is not None and value.startswith("-W") and len(value) > 2:
            out.append(lit("--" + value[2:]))
        else:
            out.append(word)
        taking = not taking and value == "-W"
    return [w for w in out if w.value != "-W"]


def _assignment(word: Word) -> bool:
    return bool(ASSIGNMENT.match(word.raw))


_AWK_TWO = ("||", "&&", ">>", "|&", "==", "<=", ">=", "!=", "++", "--", "+=", "-=", "*=", "/=")
_AWK_REGEX_AFTER = words("print printf return in ~ !~")


def _awk_tokens(p: str) -> list[tuple[str, str]] | None:
    out: list[tuple[str, str]] = []
    i, n = 0, len(p)
    while i < n:
        ch = p[i]
        if ch in " \t\r" or (ch == "\\" and p[i + 1 : i + 2] == "\n"):
            i += 1 if ch != "\\" else 2
        elif ch == "#":
            i = eol(p, i)
        elif ch == '"' or (ch == "/" and _awk_regex_allowed(out)):
            end = delimited(p, i, 1)
            if end < 0:
                return None
            body = p[i + 1 : end - 1].replace('\\"', '"').replace("\\\\", "\\")
            out.append(("str" if ch == '"' else "re", body))
            i = end
        elif ch.isalnum() or ch == "_":
            end = i
            while end < n and (p[end].isalnum() or p[end] == "_"):
                end += 1
            out.append(("name", p[i:end]))
            i = end
        else:
            size = 2 if p[i : i + 2] in _AWK_TWO else 1
            out.append(("op", p[i : i + size]))
            i += size
    return out


def _awk_regex_allowed(out: list[tuple[str, str]]) -> bool:
    if not out:
        return True
    kind, text = out[-1]
    return (kind == "op" and text not in (")", "]", "$")) or text in _AWK_REGEX_AFTER


def _awk_scan(program_text: str) -> tuple[list[str | None], list[str | None]] | None:
    """Files written by print/printf redirections and commands run (system, pipes, getline)."""
    tokens = _awk_tokens(program_text)
    if tokens is None:
        return None
    written: list[str | None] = []
    commands: list[str | None] = []
    depth, print_depth = 0, -1
    tokens.append(("op", ";"))
    for k, (kind, text) in enumerate(tokens[:-1]):
        after = tokens[k + 1]
        target = after[1] if after[0] == "str" else None
        if kind == "name" and text in ("print", "printf"):
            print_depth = depth
        elif text in ("(", "["):
            depth += 1
        elif text in (")", "]"):
            depth -= 1
        elif text in (";", "\n", "{", "}"):
            print_depth = -1
        elif kind == "op" and text in (">", ">>") and depth == print_depth:
            written.append(target)
        elif kind == "op" and text in ("|", "|&") and depth == print_depth:
            commands.append(target)
        elif kind == "op" and text in ("|", "|&") and after == ("name", "getline"):
            before = tokens[k - 1] if k else ("op", "")
            commands.append(before[1] if before[0] == "str" else None)
        elif kind == "name" and text == "system":
            literal = tokens[k + 2 : k + 4]
            simple = len(literal) == 2 and literal[0][0] == "str" and literal[1][1] == ")"
            commands.append(literal[0][1] if simple else None)
    return written, commands
