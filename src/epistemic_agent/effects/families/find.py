"""Search tools whose expression or options delete, write or run a command: find and fd."""

from __future__ import annotations

from ..core import Cmd, Word, dyn, handles, lit, maybe_option, words
from ..options import grammar, options

_FD = grammar(
    "fd fdfind",
    "HIsiglLpa0qe:E:t:d:j:S:c:o:x:*X:*",
    """hidden no-ignore case-sensitive ignore-case glob fixed-strings absolute-path
    list-details follow full-path print0 quiet show-errors extension: exclude: type: max-depth:
    min-depth: exact-depth: threads: size: changed-within: changed-before: owner: color:
    ignore-file: search-path: base-directory: path-separator: max-results: batch-size: format:
    exec:* exec-batch:* strip-cwd-prefix:: hyperlink::""",
    risky="-x --exec -X --exec-batch",
    note="-x/-X take every word up to ;: the command run for the results",
    abbrev=False,
)


@handles("fd", "fdfind")
def _fd(c: Cmd) -> None:
    o = options(c, _FD)
    for flag in ("-x", "--exec", "-X", "--exec-batch"):
        inner = o.rest.get(flag)
        if inner is not None:
            marked = [dyn(w) if "{" in (w.value or "") else w for w in inner]
            c.run(marked, fed=marked == inner)  # without a {} placeholder fd appends the path
            return


_FIND_VALUE = words(
    """-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -user -group
    -uid -gid -perm -size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -maxdepth
    -mindepth -links -inum -samefile -printf -fstype -context -lname -ilname -used -regextype
    -files0-from"""
)
grammar(
    "find",
    note="its own parser: -H -L -P -D X -O N, then roots up to the first word starting with - "
    "( ) ! or ,; then the expression, where -delete deletes under the roots, "
    "-exec/-execdir/-ok/-okdir run a command (up to ; or +), -fprint/-fprint0/-fls/-fprintf "
    "write their file, and "
    + ", ".join(sorted(_FIND_VALUE))
    + " (and -newerXY) take a value. A word not known statically may be an action.",
)


@handles("find")
def _find(c: Cmd) -> None:
    args, i = c.args, 0
    while i < len(args) and (args[i].value in ("-H", "-L", "-P", "-D") or _level(args[i])):
        i += 2 if args[i].value == "-D" else 1
    roots: list[Word] = []
    while i < len(args) and not _find_expression(args[i]):
        roots.append(args[i])
        i += 1
    roots = roots or [lit(".")]
    while i < len(args):
        word, i = args[i], i + 1
        action = word.value or ""
        if word.value is None and maybe_option(word):
            c.doubts.append(f"{word.raw} may expand to an action such as -delete or -exec")
        elif action == "-delete":
            c.delete(roots, "deletes matching files under")
        elif action in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i
            while end < len(args) and args[end].value not in (";", "+"):
                end += 1
            c.run([_placeholder(w) for w in args[i:end]], lose_cwd=action.endswith("dir"))
            i = end + 1
        elif action in ("-fprint", "-fprint0", "-fls", "-fprintf"):
            c.write(args[i : i + 1])
            i += 2 if action == "-fprintf" else 1
        elif action in _FIND_VALUE or action.startswith("-newer"):
            i += 1


def _level(word: Word) -> bool:
    return (word.value or "").startswith("-O") and (word.value or "")[2:].isdigit()


def _find_expression(word: Word) -> bool:
    value = word.value
    if value is None:
        return maybe_option(word)
    return value.startswith("-") or value in ("(", ")", "!", ",")


def _placeholder(word: Word) -> Word:
    """`{}` becomes a path under a root (never an option): ./x, src/x."""
    value = word.value or ""
    return dyn(word, lead=value.partition("{}")[0] + ".") if "{}" in value else word
