"""sed: in-place editing (every spelling of -i/--in-place) and the `w`/`e` commands of its
scripts, which are scanned, not interpreted."""

from __future__ import annotations

import posixpath

from ..core import Cmd, Word, handles, lit
from ..options import grammar, options

_SED = grammar(
    "sed gsed",
    "bsnrzuEe:f:l:i::I::",
    """quiet silent debug expression: file: follow-symlinks in-place:: line-length: posix
    regexp-extended separate sandbox unbuffered null-data zero-terminated binary""",
    risky="-i --in-place -I",
    note="-i/--in-place rewrite every file operand (-iSUF and --in-place=SUF also write the "
    "backup; a * in SUF is the file's name), -I is BSD's spelling; the script is the first "
    "operand unless -e/-f give it, and its w/W commands and s///w flags write, e runs",
    complete=True,
)


@handles("sed", "gsed")
def _sed(c: Cmd) -> None:
    o = options(c, _SED)
    scripts = o.get("-e", "--expression")
    given = scripts or o.has("-f", "--file")
    files = o.pos if given else o.pos[1:]
    scripts = scripts or ([] if given else o.pos[:1])
    in_place = [name for name, _ in o.flags if name in ("-i", "--in-place", "-I")]
    if in_place:
        c.write(files, "modifies in place")
        suffix = o.last("-i", "--in-place", "-I")
        if suffix is not None:
            c.write([_backup(w, suffix) for w in files])
    if o.sure("--sandbox"):
        return
    if o.has("-f", "--file"):
        c.unknown("runs a sed script file: effect unknown")
    for script in scripts:
        found = _sed_scan(script.value) if script.value is not None else None
        if found is None:
            c.unknown("has a sed script that is not understood statically: effect unknown")
            continue
        c.write([lit(name) for name in found[0]])
        if found[1]:
            c.unknown("runs shell commands from its script (`e`): effect unknown")


def _backup(word: Word, suffix: Word) -> Word:
    """The backup file of `-iSUFFIX`: f.bak, or bak/f for `-i'bak/*'`."""
    if word.value is None or suffix.value is None:
        return Word(f"{word.raw} (its backup)", None)
    value, end = word.value, suffix.value
    if "*" not in end:
        return Word(word.raw + end, value + end, word.tilde)
    head, base = posixpath.split(value)
    return Word(word.raw, posixpath.join(head, end.replace("*", base)), word.tilde)


def _sed_scan(s: str) -> tuple[list[str], bool] | None:
    """Files a sed script writes (`w`, `W`, `s///w`) and whether it runs commands (`e`)."""
    written: list[str] = []
    runs, i, n = False, 0, len(s)
    while i < n:
        if s[i] in " \t\n;}":
            i += 1
            continue
        if s[i] == "#":
            i = eol(s, i)
            continue
        i = _sed_addresses(s, i)
        if i < 0 or i >= n:
            return None
        command, i = s[i], i + 1
        if command in "aic":
            i = eol(s, i, continued=True)
        elif command in ":btTv":
            i = _upto(s, i, ";\n")
        elif command in "rRwW":
            written += [s[i : eol(s, i)].strip()] if command in "wW" else []
            i = eol(s, i)
        elif command == "e":
            runs, i = True, eol(s, i)
        elif command in "sy":
            i = delimited(s, i, 2)
            if i < 0:
                return None
            if command == "s":
                i, flag_writes, flag_runs = _sed_flags(s, i)
                if i < 0:
                    return None
                written, runs = written + flag_writes, runs or flag_runs
        elif command in "qQlL":
            i = skip(s, i, " \t0123456789")
        elif command not in "{pPdDnNgGhHxz=F":
            return None
    return written, runs


def _sed_flags(s: str, i: int) -> tuple[int, list[str], bool]:
    runs = False
    while i < len(s) and s[i] not in ";\n}":
        if s[i] == "w":
            end = eol(s, i + 1)
            return end, [s[i + 1 : end].strip()], runs
        if s[i] not in "gpiImMe0123456789 \t":
            return -1, [], runs
        runs |= s[i] == "e"
        i += 1
    return i, [], runs


def _sed_addresses(s: str, i: int) -> int:
    i = _sed_address(s, skip(s, i, " \t"))
    if 0 <= i < len(s) and s[i] == ",":
        i = skip(s, i + 1, " \t")
        i = skip(s, i + 1, "0123456789") if i < len(s) and s[i] in "+~" else _sed_address(s, i)
    if 0 <= i < len(s):
        i = skip(s, i, " \t")
        if i < len(s) and s[i] == "!":
            i = skip(s, i + 1, " \t")
    return i


def _sed_address(s: str, i: int) -> int:
    if i >= len(s):
        return i
    if s[i].isdigit():
        i = skip(s, i, "0123456789")
        return skip(s, i + 1, "0123456789") if i < len(s) and s[i] == "~" else i
    if s[i] == "$":
        return i + 1
    if s[i] == "/" or (s[i] == "\\" and i + 1 < len(s)):
        i = delimited(s, i + (s[i] == "\\"), 1)
        return i if i < 0 else skip(s, i, "IM")
    return i


def delimited(s: str, i: int, parts: int) -> int:
    """The index after `parts` parts delimited by s[i] (s/a/b/ has 2), or -1."""
    if i >= len(s) or s[i] in "\n\\":
        return -1
    delimiter, i = s[i], i + 1
    for _ in range(parts):
        while i < len(s) and s[i] != delimiter:
            i += 2 if s[i] == "\\" else 1
        if i >= len(s):
            return -1
        i += 1
    return i


def eol(s: str, i: int, continued: bool = False) -> int:
    while i < len(s) and s[i] != "\n":
        i += 2 if continued and s[i] == "\\" else 1
    return i


def _upto(s: str, i: int, stops: str) -> int:
    while i < len(s) and s[i] not in stops:
        i += 1
    return i


def skip(s: str, i: int, chars: str) -> int:
    while i < len(s) and s[i] in chars:
        i += 1
    return i
