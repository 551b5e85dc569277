"""docs/classifier.md, generated from the classifier's tables: how each program's options are
read, which of them write or run something, and what else the classifier knows.

    python -m epistemic_agent.effects.grammar_doc > docs/classifier.md
"""

from __future__ import annotations

from . import programs as effects_programs
from .core import LOADS_CODE, READ_ONLY_PROGRAMS
from .families.packages import TABLES
from .options import FLAG, GRAMMARS, OPTIONAL, REST, TWO, VALUE, Grammar

_INTRO = """# How the classifier reads options

Generated from the tables (`python -m epistemic_agent.effects.grammar_doc > docs/classifier.md`;
a test checks it is current). The static classifier ([declared-vs-done.md](declared-vs-done.md))
judges a command by its programs; each program's options are read with the grammar below,
the way the program reads them:

- short options bundle (`-ni` is `-n -i`); a short option that takes a value takes the rest of
  its word or the next word (`-ofile`, `-o file`), whatever it looks like: `sort -k -o f` sorts
  by the key "-o", `git commit -m --dry-run` commits, `git clean -e -n -f` deletes;
- a long option takes `--opt=value` or the next word; an *optional* value is attached only
  (`-i.bak`, `--in-place=.bak`: `sed -i .bak` edits a file named .bak in place);
- `--` ends the options; options may follow operands (GNU) unless the grammar *stops at the
  first operand* (wrappers, awk, Go programs);
- a unique prefix of a long option is that option (`sed --in-pl`, `sort --out=x`) unless the
  program takes exact names only; in git, `--no-OPTION` undoes OPTION wherever it stands
  (`git clean -n --no-dry-run -f` deletes).

Doubt errs toward writes:

- an option the grammar does not know takes no value, so a writing option after it is still
  seen; in a *complete* grammar it also makes the command at least unknown (the program
  refuses it, or a newer version knows it);
- an ambiguous prefix counts as every option it could be; in a grammar that is not complete a
  prefix may abbreviate an option the table does not list, so its next word counts both as
  its value and as a word of its own;
- a word known only at run time that may start with `-` (`$X`, `"$f"`, `*.txt`, `$(cmd)`, and
  the words xargs appends) may be any option: a program with options that write or run
  something is then classed as writing, with an unknown target (or, when it writes anyway,
  as possibly writing elsewhere: unknown). Such a word also voids an option after it that
  would make the program write less (`git clean "$X" -n`: $X may be `-e`). `./*.txt`,
  `"./$f"` or a `--` before them cannot be options.

A dynamic operand count is doubted too: `cp $ARGS` writes its last word, `uniq *.txt` may
write its second file, `chmod $ARGS` may change any of them.
"""


def render() -> str:
    assert effects_programs.READ_ONLY_PROGRAMS  # the families are registered
    out = [_INTRO, "## Programs with an option grammar\n"]
    unique = {id(g): g for g in GRAMMARS.values()}.values()
    out += [_section(g) for g in sorted(unique, key=lambda g: g.names[0])]
    out.append(_tables())
    out.append(_environment())
    return "\n".join(out).rstrip("\n") + "\n"


def _section(g: Grammar) -> str:
    names = ", ".join(f"`{name}`" for name in g.names)
    lines = [f"### {names}\n"]
    lines.append(f"- read as: {_style(g)}")
    for kind, what in ((VALUE, "take a value"), (OPTIONAL, "take an attached value only")):
        options = _options(g, kind)
        if options:
            lines.append(f"- {what}: {options}")
    rest = "take every word after them" if g.end == "\0" else f"take every word up to `{g.end}`"
    for kind, what in ((TWO, "take two words"), (REST, rest)):
        options = _options(g, kind)
        if options:
            lines.append(f"- {what}: {options}")
    flags = _options(g, FLAG)
    if flags and g.complete:
        lines.append(f"- flags: {flags}")
    if g.risky:
        lines.append("- write or run something: " + " ".join(f"`{o}`" for o in g.risky))
    if g.note:
        lines.append(f"- {g.note}")
    return "\n".join(lines) + "\n"


def _style(g: Grammar) -> str:
    if not g.short and not g.long.keys() - {"--help", "--version"} and g.note:
        return "its own parser (below)"
    parts = ["`-name` and `--name` alike, no bundling" if g.single else "getopt (bundling)"]
    parts.append("unique prefixes accepted" if g.abbrev else "exact names only")
    if g.stop:
        parts.append("options end at the first operand")
    parts.append(
        "complete: other options are doubted" if g.complete else "options not listed take no value"
    )
    return "; ".join(parts)


def _options(g: Grammar, kind: int) -> str:
    shorts = [f"`-{k}`" for k, v in g.short.items() if v == kind]
    longs = [f"`{k}`" for k, v in g.long.items() if v == kind]
    if kind == FLAG:
        longs = [name for name in longs if name not in ("`--help`", "`--version`")]
    return " ".join(shorts + longs)


def _tables() -> str:
    lines = [
        "## Programs driven by subcommands\n",
        "The first operand (after options; a value of an option listed here is skipped, and an "
        "operand right after an unknown option is skipped when a later one is a known "
        "subcommand) picks read-only, changing or running; an unlisted subcommand is unknown, "
        "one not known statically is changing.\n",
        "| program | read-only | changes | runs code | options before it taking a value |",
        "|---|---|---|---|---|",
    ]
    for name in sorted(TABLES):
        t = TABLES[name]
        cells = [" ".join(sorted(part)) or "-" for part in (t.ro, t.mut, t.run, t.argopts)]
        if t.flagged:
            cells[1] += " (and " + ", ".join(k.replace(":", " ") for k in sorted(t.flagged)) + ")"
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _environment() -> str:
    return (
        "## Always read-only\n\n"
        + " ".join(f"`{name}`" for name in sorted(READ_ONLY_PROGRAMS))
        + "\n\n## Variables that make a command unknown\n\n"
        "Setting one of these (`X=1 cmd`, `export X=1`, `env X=1 cmd`) makes programs load or "
        "run other code: " + " ".join(f"`{name}`" for name in sorted(LOADS_CODE)) + "\n"
    )


if __name__ == "__main__":
    print(render(), end="")
