"""Option grammars: how each program splits its words into options, option values and operands.

Every program table declares its grammar once (`grammar(...)`), in getopt's notation:

    short   "bk:o:y::"   letters; `:` takes a value (attached `-kX` or the next word), `::` an
                         optional value (attached only: `-y0`), `*` every word up to `end`
    long    "key: output: check:: debug"   the same for --options; `:2` takes two words

and `parse` applies it as the program would: bundled short options (`-ni`), attached values
(`-ofile`, `--output=file`), a value taken whatever it looks like (`sort -k -o f` sorts by the
key "-o"), `--` ending the options, options after operands (GNU permutation) unless `stop`,
and unique prefixes of long options (`--in-pl` is `--in-place`) unless `abbrev` is off.

Doubt always errs toward seeing more options, never fewer:
    - an option the grammar does not know takes no value (so a writing option after it is
      still seen); in a `complete` grammar it is also reported (the program would refuse it,
      or a newer version knows it): the command is then at least unknown, never read-only;
    - an ambiguous prefix counts as every option it could be;
    - a prefix in a grammar that is not `complete` may abbreviate an option the table does not
      list, so the next word counts both as its value and as a word of its own;
    - a word whose value is only known at run time (`$X`, `*.txt`, `"$f"`) and may start with
      "-" may be any option: a program with `risky` options (ones that write or run
      something) is then classed as writing, with an unknown target.
"""

from __future__ import annotations

from collections.abc import Sequence

from .core import Cmd, Word, lit, maybe_option

FLAG, VALUE, TWO, OPTIONAL, REST = 0, 1, 2, -1, -2


class Grammar:
    """How one program (or git subcommand) reads its options. Its tables are built from the
    specs on first use: most programs never appear in a session."""

    __slots__ = (
        "_long",
        "_short",
        "_specs",
        "abbrev",
        "complete",
        "end",
        "names",
        "negatable",
        "note",
        "risky",
        "single",
        "stop",
    )

    def __init__(self, names: tuple[str, ...], short: str, long: str, risky: str) -> None:
        self.names = names
        self._specs = (short, long + " help version")
        self._short: dict[str, int] | None = None
        self._long: dict[str, int] | None = None
        self.risky = tuple(risky.split())  # options that make it write or run something
        self.complete = False  # every option is listed: others are reported
        self.abbrev = True  # unique prefixes of long options are accepted (getopt_long)
        self.single = False  # `-name` is a long option (Go's flag, LLVM, Getopt::Long)
        self.stop = False  # the first operand ends the options (wrappers, getopt "+")
        self.end = ";"  # what ends the words of a REST option
        self.note = ""  # what the classifier makes of it, for the docs
        self.negatable = False  # --no-OPTION undoes OPTION, wherever it is (parse-options)

    @property
    def short(self) -> dict[str, int]:
        if self._short is None:
            self._short = _shorts(self._specs[0])
        return self._short

    @property
    def long(self) -> dict[str, int]:
        if self._long is None:
            self._long = _longs(self._specs[1])
        return self._long


#: Every declared grammar by program name ("git log" for git's subcommands), for the docs.
GRAMMARS: dict[str, Grammar] = {}


def grammar(
    names: str | tuple[str, ...],
    short: str = "",
    long: str = "",
    risky: str = "",
    *,
    complete: bool = False,
    abbrev: bool = True,
    single: bool = False,
    stop: bool = False,
    end: str = ";",
    note: str = "",
    negatable: bool = False,
    register: bool = True,
) -> Grammar:
    """Declare the grammar of the programs `names` (space-separated, or a tuple: "git log");
    `register`: list it in GRAMMARS (the documented tables)."""
    g = Grammar(tuple(names.split()) if isinstance(names, str) else names, short, long, risky)
    g.complete, g.abbrev, g.single, g.stop, g.end = complete, abbrev, single, stop, end
    g.note, g.negatable = note, negatable
    for name in g.names if register else ():
        GRAMMARS[name] = g
    return g


def _shorts(spec: str) -> dict[str, int]:
    out: dict[str, int] = {}
    i = 0
    while i < len(spec):
        letter, i = spec[i], i + 1
        if spec.startswith("::", i):
            out[letter], i = OPTIONAL, i + 2
        elif spec.startswith(":*", i):
            out[letter], i = REST, i + 2
        elif spec.startswith(":", i):
            out[letter], i = VALUE, i + 1
        else:
            out[letter] = FLAG
    return out


def _longs(spec: str) -> dict[str, int]:
    kinds = {"": FLAG, ":": VALUE, "::": OPTIONAL, ":2": TWO, ":*": REST}
    out: dict[str, int] = {}
    for item in spec.split():
        name, colon, tail = item.partition(":")
        out["--" + name] = kinds[colon + tail]
    return out


class Opts:
    """A command's words, split by its grammar (a slotted class: made for every command)."""

    __slots__ = ("dashdash", "doubt", "flags", "hidden", "pos", "rest", "unknown")

    def __init__(self) -> None:
        self.flags: list[tuple[str, Word | None]] = []
        self.pos: list[Word] = []
        self.dashdash: int | None = None  # index in pos where `--` was
        self.unknown: list[str] = []  # options the grammar does not know
        self.hidden: list[Word] = []  # words that may expand to options
        self.rest: dict[str, list[Word]] = {}  # the words of REST options
        self.doubt: int | None = None  # how many options came before the first hidden word

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.flags)

    def sure(self, *names: str) -> bool:
        """An option that makes the program write less, given before any word that may be an
        option taking it as its value (`git clean "$X" -n`: $X may be -e), and not undone by
        its negation (`git clean -n --no-dry-run`)."""
        negations = ["--no-" + name[2:] for name in names if name.startswith("--")]
        if negations and self.has(*negations):
            return False
        return any(name in names for name, _ in self.flags[: self.doubt])

    def get(self, *names: str) -> list[Word]:
        return [value for name, value in self.flags if name in names and value is not None]

    def last(self, *names: str) -> Word | None:
        found = self.get(*names)
        return found[-1] if found else None


def parse(args: Sequence[Word], g: Grammar) -> Opts:
    """Split words as the program would (see the module's docstring)."""
    out, i, n = Opts(), 0, len(args)
    while i < n:
        word, i = args[i], i + 1
        value = word.value
        if value == "--":
            out.dashdash = len(out.pos)
            out.pos.extend(args[i:])
            break
        if value is None and maybe_option(word):
            i, operand = _dynamic(word, args, i, g, out)
        elif value is None or len(value) < 2 or value[0] != "-":
            operand = True
        elif value.startswith("--") or g.single:
            i, operand = _long(value, None, args, i, g, out), False
        else:
            i, operand = _cluster(value, args, i, g, out), False
        if operand:
            out.pos.append(word)
            if g.stop:
                out.pos.extend(args[i:])
                break
    return out


def _long(
    value: str, dynamic: Word | None, args: Sequence[Word], i: int, g: Grammar, out: Opts
) -> int:
    """`--name`, `--name=value`, `--name value` (or `-name` in a single-dash grammar)."""
    name, eq, given = value.partition("=")
    if not name.startswith("--"):
        name = "-" + name
    if g.negatable and name.startswith("--no-") and name not in g.long:
        negated, _ = _resolve("--" + name[5:], g)
        if negated:  # git's --no-dry-run, --no-dry
            out.flags.extend(("--no-" + option[2:], None) for option in negated)
            return i
    candidates, sure = _resolve(name, g)
    if not candidates:
        out.unknown.append(name)
        out.flags.append((name, dynamic or (lit(given) if eq else None)))
        return i
    if len(candidates) > 1:
        out.unknown.append(f"{name} (ambiguous: {', '.join(candidates)})")
    kinds = [g.long[option] for option in candidates]
    if eq:
        taken: Word | None = dynamic or lit(given)
    elif kinds == [REST]:
        return _rest(candidates[0], args, i, g, out)
    else:
        taken, i = _value(args, i, max(kinds), sure and min(kinds) >= VALUE)
    out.flags.extend((option, taken) for option in candidates)
    return i


def _resolve(name: str, g: Grammar) -> tuple[list[str], bool]:
    """The long options `name` may be, and whether the grammar is sure of it."""
    if name in g.long:
        return [name], True
    long = g.long if g.abbrev and len(name) > 2 else ()
    candidates = [option for option in long if option.startswith(name)]
    return candidates, len(candidates) == 1 and g.complete


def _cluster(value: str, args: Sequence[Word], i: int, g: Grammar, out: Opts) -> int:
    """`-abc`, `-ofile`, `-o file`: letters until one that takes a value."""
    for k in range(1, len(value)):
        name = "-" + value[k]
        kind = g.short.get(value[k])
        if kind is None or kind == FLAG:
            if kind is None:
                out.unknown.append(name)  # and read on: the letters after it still count
            out.flags.append((name, None))
            continue
        attached = value[k + 1 :]
        if kind == REST:
            return _rest(name, args, i, g, out, [lit(attached)] if attached else [])
        if attached or kind == OPTIONAL:
            out.flags.append((name, lit(attached) if attached else None))
            return i
        taken, i = _value(args, i, kind, True)
        out.flags.append((name, taken))
        return i
    return i


def _value(args: Sequence[Word], i: int, kind: int, consume: bool) -> tuple[Word | None, int]:
    """The value of an option that takes `kind` words; not consumed when in doubt."""
    if kind < VALUE or i >= len(args):
        return None, i
    last = min(i + kind, len(args)) - 1
    return args[last], (last + 1 if consume else i)


def _rest(
    name: str, args: Sequence[Word], i: int, g: Grammar, out: Opts, first: Sequence[Word] = ()
) -> int:
    end = i
    while end < len(args) and args[end].value != g.end:
        end += 1
    out.rest[name] = [*first, *args[i:end]]
    out.flags.append((name, None))
    return end + 1


def _dynamic(word: Word, args: Sequence[Word], i: int, g: Grammar, out: Opts) -> tuple[int, bool]:
    """A word known only at run time that may start with "-". `-o"$f"` and `--output=$f` are
    known options with an unknown value; anything else may be any option (and an operand)."""
    lead = word.lead
    if lead.startswith("-") and "=" in lead and (lead.startswith("--") or g.single):
        _long(lead, Word(word.raw, None, lead=lead.partition("=")[2]), args, i, g, out)
        return i, False
    if lead.startswith("-") and not lead.startswith("--") and len(lead) > 1 and not g.single:
        for letter in lead[1:]:
            kind = g.short.get(letter)
            if kind is None or kind == FLAG:
                out.flags.append(("-" + letter, None))
                continue
            out.flags.append(("-" + letter, Word(word.raw, None)))
            return i, False
    out.hidden.append(word)
    if out.doubt is None or g.negatable:
        out.doubt = 0 if g.negatable else len(out.flags)  # a --no-X may come after X
    return i, True


def options(c: Cmd, g: Grammar, args: Sequence[Word] | None = None) -> Opts:
    """Parse a command's words by its grammar and report the doubts that come with them."""
    o = parse(c.args if args is None else args, g)
    if o.unknown and g.complete:
        known = ", ".join(dict.fromkeys(o.unknown))
        c.unknown(f"has options the tables do not know ({known}): effect unknown")
    if g.risky and o.hidden:
        what = ", ".join(w.raw for w in o.hidden)
        c.doubts.append(f"{what} may expand to an option such as {', '.join(g.risky[:3])}")
    return o
