"""The option grammars behind the classifier: the parser itself, every spelling of every option
that writes, and properties that hold for every writer in the table of cases."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_effects import CASES

from epistemic_agent.effects import programs as effects_programs
from epistemic_agent.effects.classify import MUTATING, READ_ONLY, classify
from epistemic_agent.effects.core import HANDLERS, Word, lit
from epistemic_agent.effects.grammar_doc import render
from epistemic_agent.effects.options import (
    FLAG,
    GRAMMARS,
    OPTIONAL,
    REST,
    TWO,
    VALUE,
    Grammar,
    grammar,
    parse,
)

ROOT = Path(__file__).resolve().parents[2]
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- the parser ---------------------------------------------------------------------------

G = grammar(
    ("test",), "abk:o:i::x:*", "key: output: in-place:: inplace verbose arg:2", register=False
)


def split(text: str, g: Grammar = G) -> tuple[list[tuple[str, str | None]], list[str]]:
    o = parse([lit(word) for word in text.split()], g)
    flags = [(name, value.value if value is not None else None) for name, value in o.flags]
    return flags, [w.value or w.raw for w in o.pos]


@pytest.mark.parametrize(
    ("text", "flags", "pos"),
    [
        ("-ab f", [("-a", None), ("-b", None)], ["f"]),
        ("-k -o f", [("-k", "-o")], ["f"]),  # a value is taken whatever it looks like
        ("-ko out f", [("-k", "o")], ["out", "f"]),
        ("-abofile f", [("-a", None), ("-b", None), ("-o", "file")], ["f"]),
        ("-i.bak f", [("-i", ".bak")], ["f"]),
        ("-i .bak", [("-i", None)], [".bak"]),  # an optional value is attached or absent
        ("--in-place=.bak f", [("--in-place", ".bak")], ["f"]),
        ("--in-place .bak", [("--in-place", None)], [".bak"]),
        ("--output out f", [("--output", "out")], ["f"]),
        ("--outp=x f", [("--output", "x")], ["f"]),  # a unique prefix
        ("f -o out", [("-o", "out")], ["f"]),  # options after operands
        ("-- -o out", [], ["-o", "out"]),
        ("- -o out", [("-o", "out")], ["-"]),
        ("--arg a b f", [("--arg", "b")], ["f"]),  # two words
        ("-x rm -f ; g", [("-x", None)], ["g"]),  # every word up to ;
    ],
)
def test_the_parser_reads_options_as_getopt_does(
    text: str, flags: list[tuple[str, str | None]], pos: list[str]
) -> None:
    assert split(text) == (flags, pos)


def test_doubt_errs_toward_seeing_more_options() -> None:
    # an ambiguous prefix is every option it could be; the value is not consumed
    assert split("--in -o x") == (
        [("--in-place", None), ("--inplace", None), ("-o", "x")],
        [],
    )
    # an unknown option takes no value: the writing option after it is still seen
    assert split("--frob -o x f") == ([("--frob", None), ("-o", "x")], ["f"])
    assert split("-zo x f") == ([("-z", None), ("-o", "x")], ["f"])
    o = parse([lit("--frob"), lit("-q")], G)
    assert o.unknown == ["--frob", "-q"]
    # a prefix in a grammar that is not complete may abbreviate an unlisted option: its next
    # word is both its value and a word of its own
    flags, pos = split("--key -o x")
    assert flags == [("--key", "-o")] and pos == ["x"]
    flags, pos = split("--ke -o x")
    assert flags == [("--key", "-o"), ("-o", "x")] and pos == []


def test_words_known_only_at_run_time() -> None:
    def dyn(raw: str, lead: str = "", split: bool = False) -> Word:
        return Word(raw, None, lead=lead, split=split)

    o = parse([dyn('"$X"'), lit("f")], G)
    assert o.hidden == [dyn('"$X"')] and o.pos == [dyn('"$X"'), lit("f")] and o.doubt == 0
    o = parse([dyn('-o"$F"', "-o"), lit("f")], G)  # a known option, its value unknown
    assert not o.hidden and o.get("-o")[0].value is None and o.pos == [lit("f")]
    o = parse([dyn("--output=$F", "--output="), lit("f")], G)
    assert not o.hidden and o.has("--output")
    o = parse([dyn("./$F", "./"), lit("-a")], G)  # cannot start with -
    assert not o.hidden and o.has("-a")
    o = parse([lit("-a"), dyn("$X", split=True), lit("-b")], G)
    assert o.sure("-a") and not o.sure("-b") and o.has("-b")


def test_single_dash_grammars_read_long_names() -> None:
    g = grammar(
        ("test",), long="w cpuprofile: ln:", single=True, abbrev=False, stop=True, register=False
    )
    assert split("-w -ln bash -cpuprofile=p f -w", g) == (
        [("--w", None), ("--ln", "bash"), ("--cpuprofile", "p")],
        ["f", "-w"],
    )


@FAST
@given(st.lists(st.sampled_from(["-", "--", "-a", "-k", "-ko", "--in", "--out=x", "x", "-x", ";"])))
def test_every_word_lands_somewhere(words: list[str]) -> None:
    o = parse([lit(w) for w in words], G)
    assert len(o.pos) <= len(words)
    assert all(name.startswith("-") for name, _ in o.flags)


# -- every spelling of every option that writes -------------------------------------------

#: program: (the words after it, the value given to options that take one)
EXAMPLES: dict[str, tuple[str, str]] = {
    "sed": ("s/a/b/ f", "out"),
    "gsed": ("s/a/b/ f", "out"),
    "awk": ("'{print}' f", "inplace"),
    "yq": (". f", "out"),
    "tar": ("-f a.tar in1", "exec=x"),
    "git": ("status", "core.pager=x"),
    "time": ("ls", "out"),
    "date": ("", "now"),
    "ruff": ("check .", "out"),
    "scp": ("a host:b", "out"),
    "git clone": ("url dest", "out"),
    "git grep": ("foo", "out"),
    "git ls-remote": (".", "out"),
    "git branch": ("", "o/x"),
    "git tag": ("", "out"),
    "git config": ("a.b", "out"),
    "git symbolic-ref": ("HEAD", "out"),
    "git archive": ("HEAD", "out"),
    "git format-patch": ("-1", "out"),
    "hostname": ("", "out"),
}
#: option: the value that makes it write (curl -w writes only with %output{FILE})
VALUES = {"-w": "%output{f}", "--write-out": "%output{f}"}
#: programs whose bundling letters all change the mode (git -v is --version, git tag -v verifies)
NO_BUNDLE = {"git", "git tag"}
#: Options whose bare spelling (without its optional value) does something else
BARE_IS_READ_ONLY = {("git", "--exec-path")}
#: Programs that only write because of an option: without it, the example is read-only
READ_ONLY_WITHOUT = """sort shuf iconv less tree info sdiff diff3 cloc ag ack rg man sed awk yq
    file curl git-log git-grep git-ls-remote git-fsck git-archive git-apply autopep8 yapf prettier
    gofmt clang-format shfmt time date hostname""".replace("git-", "git ").split()


def _program(g: Grammar) -> str | None:
    name = g.names[0]
    head = name.split()[0]
    if head in HANDLERS and (head == "git" or " " not in name):
        return name
    return None


def _spellings(g: Grammar, option: str, value: str) -> list[str]:
    """Every way to write `option` (with `value`) that the program accepts."""
    kind = g.short[option[1]] if not option.startswith("--") else g.long[option]
    value = VALUES.get(option, value)
    if not option.startswith("--"):
        letter = option[1]
        bundles = "" if g.names[0] in NO_BUNDLE else "vbqs"
        flag = next((f for f in bundles if g.short.get(f) == FLAG and f != letter), None)
        forms = {
            FLAG: [option],
            VALUE: [f"{option} {value}", f"{option}{value}"],
            TWO: [f"{option} {value} {value}"],
            OPTIONAL: [option, f"{option}{value}"],
            REST: [f"{option} {value}"],
        }[kind]
        return forms + ([f"-{flag}{forms[-1][1:]}"] if flag else [])
    names = [option]
    if g.single:
        names.append(option[1:])
    elif g.abbrev:
        names += [
            option[:n]
            for n in range(3, len(option))
            if [o for o in g.long if o.startswith(option[:n])] == [option]
        ]
    out = []
    for name in names:
        out += {
            FLAG: [name],
            VALUE: [f"{name}={value}", f"{name} {value}"],
            TWO: [f"{name} {value} {value}"],
            OPTIONAL: [name, f"{name}={value}"],
            REST: [f"{name} {value}"],
        }[kind]
    return out


def _risky_spellings() -> list[tuple[str, str]]:
    cases = []
    for g in {id(g): g for g in GRAMMARS.values()}.values():
        program = _program(g)
        if program is None:
            continue
        operands, value = EXAMPLES.get(program, EXAMPLES.get(g.names[0], ("in1 in2", "out")))
        for option in g.risky:
            for spelling in _spellings(g, option, value):
                bare = spelling == option or spelling == option[1:]
                if bare and (program, option) in BARE_IS_READ_ONLY:
                    continue
                cases.append((program, f"{program} {spelling} {operands}".strip()))
    return cases


RISKY = _risky_spellings()


def test_the_spellings_cover_every_program_with_writing_options() -> None:
    assert len(RISKY) > 400
    covered = {program for program, _ in RISKY}
    assert {"sort", "sed", "awk", "tar", "curl", "git", "git log", "git branch"} <= covered, covered


@pytest.mark.parametrize(("program", "command"), RISKY, ids=[c for _, c in RISKY])
def test_every_spelling_of_an_option_that_writes_is_a_write(program: str, command: str) -> None:
    effect = classify(command)
    assert effect.cls != READ_ONLY, effect.reasons
    if program in READ_ONLY_WITHOUT:
        operands, _ = EXAMPLES.get(program, ("in1 in2", "out"))
        assert classify(f"{program} {operands}".strip()).cls == READ_ONLY


# -- properties over the table of cases ---------------------------------------------------

_SIMPLE = re.compile(r"[\w./=:+,@%~^-]+( [\w./=:+,@%~^-]+)*")
WRITERS = [c.command for c in CASES if c.cls == MUTATING and _SIMPLE.fullmatch(c.command)]


def test_the_writers_sampled_are_many() -> None:
    assert len(WRITERS) > 400


@FAST
@given(st.sampled_from(WRITERS), st.data())
def test_a_word_known_only_at_run_time_never_makes_a_writer_read_only(
    command: str, data: st.DataObject
) -> None:
    """Any word of a writing command replaced by $X ("$X", *, $(...)): still not read-only.
    $X may be the writing option itself, or an option whose value swallows a dry-run flag."""
    words = command.split()
    at = data.draw(st.integers(0, len(words) - 1))
    words[at] = data.draw(st.sampled_from(["$X", '"$X"', "*", "$(cmd)", '"${A[@]}"']))
    effect = classify(" ".join(words))
    assert effect.cls != READ_ONLY, (" ".join(words), effect.reasons)


#: writer, the grammar it is read by, options it names its target with (not inserted)
INSERTABLE = [
    ("sort -o out f", "sort", ""),
    ("sed -i s/a/b/ f", "sed", ""),
    ("awk -i inplace '{print}' f", "awk", ""),
    ("git commit -m msg", "git commit", ""),
    ("git push origin main", "git push", ""),
    ("git clean -f", "git clean", ""),
    ("git branch -D x", "git branch", ""),
    ("git tag -d v1", "git tag", ""),
    ("git config a.b c", "git config", ""),
    ("git fetch origin", "git fetch", ""),
    ("git add f", "git add", ""),
    ("git log --output=x", "git log", ""),
    ("curl -o out url", "curl", ""),
    ("wget -O out url", "wget", ""),
    ("tar -c -f a.tar d", "tar", "-f --file"),
    ("rsync -a src dst", "rsync", ""),
    ("cp a b", "cp", ""),
    ("chmod 644 f", "chmod", ""),
    ("uniq in out", "uniq", ""),
    ("yq -i . f", "yq", ""),
    ("less -o log f", "less", ""),
    ("black .", "black", "-c --code"),
    ("patch f p.diff", "patch", "-o --output"),
    ("sudo rm x", "sudo", ""),
    ("env rm x", "env", ""),
    ("timeout 5 rm x", "timeout", ""),
    ("xargs rm", "xargs", "-I"),
    ("git archive -o a.zip HEAD", "git archive", ""),
]
ADVERSARIAL = ["-o", "-i", "--", "-", "--output=x", "-n", "--dry-run", "-e", "--in-place", "-t"]


def _valued(g: Grammar, exclude: str) -> list[tuple[str, int]]:
    options = [("-" + k, v) for k, v in g.short.items()] + list(g.long.items())
    return [
        (name, kind)
        for name, kind in options
        if kind in (VALUE, TWO) and name not in g.risky and name not in exclude.split()
    ]


@FAST
@given(st.sampled_from(INSERTABLE), st.data())
def test_option_value_pairs_and_dashdash_never_make_a_writer_read_only(
    writer: tuple[str, str, str], data: st.DataObject
) -> None:
    """`sort -k -o -o out f`: an inserted option takes its value whatever it looks like, and the
    writing option after it is still one; `--` before the operands changes nothing."""
    command, name, exclude = writer
    g = GRAMMARS[name]
    words = command.replace("'{print}'", "PROGRAM").split()
    head = len(name.split())
    pairs = _valued(g, exclude)
    for _ in range(data.draw(st.integers(1, 3))):
        option, kind = data.draw(st.sampled_from(pairs))
        value = data.draw(st.sampled_from(ADVERSARIAL))
        at = head if g.stop else data.draw(st.sampled_from([head, len(words)]))
        words[at:at] = [option] + [value] * kind
    tail = [i for i in range(head, len(words)) if not any(w[0] == "-" for w in words[i:])]
    if tail and data.draw(st.booleans()):
        words.insert(data.draw(st.sampled_from(tail)), "--")
    text = " ".join(words).replace("PROGRAM", "'{print}'")
    effect = classify(text)
    assert effect.cls != READ_ONLY, (text, effect.reasons)


# -- the grammars and their documentation -------------------------------------------------


def test_every_grammar_belongs_to_a_program_the_tables_handle() -> None:
    assert effects_programs.__name__  # importing it registers the handlers
    for name, g in GRAMMARS.items():
        head = name.split()[0]
        assert head in HANDLERS or head in ("python", "python3", "pypy", "py"), name
        for option in g.risky:
            known = g.long if option.startswith("--") else {"-" + k: v for k, v in g.short.items()}
            assert option in known, (name, option)


def test_the_grammar_docs_are_generated_from_the_tables() -> None:
    assert (ROOT / "docs" / "classifier.md").read_text() == render(), (
        "docs/classifier.md is stale: run "
        "`python -m epistemic_agent.effects.grammar_doc > docs/classifier.md`"
    )
