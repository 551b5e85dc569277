"""Programs that read, unless an option (or an extra operand) names a file they write or a
command they run: sort -o, uniq IN OUT, xxd IN OUT, less -o, tree -o, yq -i..."""

from __future__ import annotations

import re

from ..core import Cmd, Word, handles, maybe_option
from ..options import Grammar, grammar, options

_OUTPUT: dict[str, tuple[Grammar, str, str]] = {
    # program: (grammar, the options naming a file it writes, those that run a program)
    "sort": (
        grammar(
            "sort",
            "bcCdfghik:mMno:rRsS:t:T:uVy::z",
            """ignore-leading-blanks check:: debug dictionary-order ignore-case files0-from:
            general-numeric-sort human-numeric-sort ignore-nonprinting key: merge month-sort
            numeric-sort output: random-sort random-source: reverse sort: stable buffer-size:
            field-separator: temporary-directory: unique version-sort zero-terminated
            parallel: batch-size: compress-program:""",
            risky="-o --output -T --temporary-directory --compress-program",
            note="-o/--output FILE is written (`-o -` too: a file named -); -T DIR gets "
            "temporary files; --compress-program runs a program",
            complete=True,
        ),
        "-o --output -T --temporary-directory",
        "--compress-program",
    ),
    "shuf": (
        grammar(
            "shuf",
            "ei:n:o:rz",
            "echo input-range: head-count: output: random-source: repeat zero-terminated",
            risky="-o --output",
            complete=True,
        ),
        "-o --output",
        "",
    ),
    "iconv": (
        grammar(
            "iconv",
            "cf:lo:st:V",
            "from-code: to-code: list output: silent verbose usage",
            risky="-o --output",
            complete=True,
        ),
        "-o --output",
        "",
    ),
    "less": (
        grammar(
            "less",
            'aAb:BcCdD:eEfFgGh:iIj:JKk:LmMnNo:O:p:P:qQrRsSt:T:uUVwWx:Xy:z:":~#:',
            """log-file: LOG-FILE: lesskey-file: lesskey-src: tag: tag-file: pattern: prompt:
            buffers: max-back-scroll: jump-target: shift: tabs: window: max-forw-scroll:
            quotes: line-num-width: status-col-width: use-color color: rscroll: wheel-lines:""",
            risky="-o -O --log-file --LOG-FILE",
            note="-o/-O/--log-file FILE is written; a +command with ! or | runs a command",
        ),
        "-o -O --log-file --LOG-FILE",
        "",
    ),
    "tree": (
        grammar(
            "tree",
            "adlfxL:RP:I:o:qNQpugshDFvtcUriASnCXJH:T:",
            """gitignore gitfile: ignore-case matchdirs metafirst prune info infofile: noreport
            charset: filelimit: si du timefmt: inodes device dirsfirst filesfirst sort: nolinks
            hintro: houtro: fromfile fromtabfile fflinks opt-toggle""",
            risky="-o -R",
            note="-o FILE is written; -R writes 00Tree.html in every directory",
            abbrev=False,
        ),
        "-o",
        "",
    ),
    "info": (
        grammar(
            "info",
            "ad:f:hk:n:o:ORsv:wx:",
            """all directory: dribble: file: index-search: apropos: node: output: show-options
            raw-escapes restore: strict-node-location subnodes variable: vi-keys where debug:""",
            risky="-o --output --dribble",
            complete=True,
        ),
        "-o --output --dribble",
        "",
    ),
    "sdiff": (
        grammar(
            "sdiff",
            "abBdEHiI:lo:stvw:WZ",
            """expand-tabs ignore-blank-lines ignore-case ignore-matching-lines:
            ignore-space-change ignore-all-space ignore-tab-expansion ignore-trailing-space
            left-column minimal output: speed-large-files strip-trailing-cr
            suppress-common-lines tabsize: text width: diff-program:""",
            risky="-o --output --diff-program",
            complete=True,
        ),
        "-o --output",
        "--diff-program",
    ),
    "diff3": (
        grammar(
            "diff3",
            "aAeEiL:mTxX3v",
            """diff-program: easy-only ed initial-tab label: merge overlap-only show-all
            show-overlap strip-trailing-cr text""",
            risky="--diff-program",
            complete=True,
        ),
        "",
        "--diff-program",
    ),
    "cloc": (
        grammar(
            "cloc",
            "",
            """out: report-file: sql: sql-project: sql-style: write-lang-def:
            write-lang-def-incl-dup: counted: ignored: categorized: found: unique: extract-with:
            exclude-dir: exclude-ext: exclude-lang: exclude-list-file: include-ext: include-lang:
            list-file: force-lang: force-lang-def: read-lang-def: match-f: not-match-f: match-d:
            not-match-d: timeout: diff-timeout: config: csv-delimiter: script-lang: lang-no-ext:
            max-file-size: exclude-content: vcs: by-file by-file-by-lang csv json yaml md xml
            quiet diff git sum-reports""",
            risky="--out --report-file --sql --write-lang-def --write-lang-def-incl-dup "
            "--counted --ignored --categorized --found --unique --extract-with",
            note="Getopt::Long: -opt and --opt alike, unique prefixes accepted",
            single=True,
        ),
        """--out --report-file --sql --write-lang-def --write-lang-def-incl-dup --counted
        --ignored --categorized --found --unique""",
        "--extract-with",
    ),
    "ag": (
        grammar(
            "ag",
            "A:B:C:G:g:m:p:W:",
            "pager: ignore: ignore-dir: path-to-ignore: depth: file-search-regex: max-count:",
            risky="--pager",
        ),
        "",
        "--pager",
    ),
    "ack": (
        grammar(
            "ack",
            "A:B:C:g:m:",
            "pager:: ackrc: output: type: ignore-dir: ignore-file:",
            risky="--pager --ackrc",
            single=True,
        ),
        "",
        "--pager --ackrc",
    ),
    "rg": (
        grammar(
            "rg",
            "A:B:C:e:f:g:m:M:r:t:T:E:j:d:",
            """pre: pre-glob: after-context: before-context: context: regexp: file: glob: iglob:
            max-count: max-columns: replace: type: type-not: encoding: threads: max-depth:
            type-add: colors: context-separator: field-match-separator: path-separator:
            sort: sortr: engine: dfa-size-limit: regex-size-limit: max-filesize: ignore-file:""",
            risky="--pre",
            abbrev=False,
        ),
        "",
        "--pre",
    ),
    "man": (
        grammar(
            "man",
            "aC:d?De:E:fhH::iIkKlL:m:M:p:P:r:R:s:S:tT::uwWX::Z7",
            """config-file: debug default whatis apropos global-apropos local-file location
            location-cat locale: systems: manpath: pager: prompt: preprocessor: encoding:
            recode: sections: extension: html:: gxditview:: troff troff-device:: ditroff
            ignore-case match-case regex wildcard names-only all update no-subpages catman
            no-hyphenation no-justification warnings::""",
            risky="-P --pager -H --html -X --gxditview",
        ),
        "",
        "-P --pager -H --html -X --gxditview",
    ),
}


@handles(*_OUTPUT)
def _output(c: Cmd) -> None:
    """Read-only programs with options naming a file they write or a program they run."""
    g, writing, running = _OUTPUT[c.name]
    o = options(c, g)
    keep_dash = c.name in ("sort", "shuf")  # they write a file named "-"
    c.write([w for w in o.get(*writing.split()) if keep_dash or w.value != "-"])
    if running and o.has(*running.split()):
        c.unknown("runs a program it is given: effect unknown")
    if c.name == "tree" and o.has("-R"):
        c.change("writes 00Tree.html in every directory")
    if c.name == "less" and any(_LESS_RUNS.match(w.value or "") for w in o.pos):
        c.unknown("runs less commands given with +: effect unknown")


_LESS_RUNS = re.compile(r"\+(\+?s|.*[!|])")


_UNIQ = grammar(
    "uniq",
    "0123456789Dcdf:is:uw:z",
    """all-repeated:: check-chars: count group:: ignore-case repeated skip-chars: skip-fields:
    unique zero-terminated""",
    note="a second operand is written (- is standard output); +N is an option, not a file",
    complete=True,
)
_SKIP_CHARS = re.compile(r"\+\d+")


@handles("uniq")
def _uniq(c: Cmd) -> None:
    o = options(c, _UNIQ)
    files = [w for w in o.pos if not _SKIP_CHARS.fullmatch(w.value or "")]
    _second(c, files)


def _second(c: Cmd, files: list[Word]) -> None:
    """Write the second operand: `uniq IN OUT`, `xxd IN OUT`."""
    if any(w.split for w in files[:2]):
        c.write([Word("(its second operand)", None)])
    else:
        c.write([w for w in files[1:2] if w.value != "-"])


_XXD_VALUE = {"c": "ols", "g": "roupsize", "l": "en", "n": "ame", "o": "ffset", "s": "eek", "R": ""}
_XXD = grammar(
    "xxd",
    note="xxd's own parser: options first, -x and --x alike, -c/-g/-l/-n/-o/-s/-R take a "
    "value (attached, or the next word after -c, -cols...); a second operand is written",
)


@handles("xxd")
def _xxd(c: Cmd) -> None:
    args, i = c.args, 0
    while i < len(args):
        value = args[i].value
        if value is None and maybe_option(args[i]):
            c.doubts.append(f"{args[i].raw} may expand to options and files")
            return
        if value is None or len(value) < 2 or value[0] != "-":
            break
        i += 1
        if value == "--":
            break
        name = value[2:] if value.startswith("--") else value[1:]
        if name[:1] in _XXD_VALUE and name[1:] in ("", _XXD_VALUE[name[0]]):
            i += 1  # -c 8, -cols 8, but -c8
    _second(c, list(args[i:]))


_YQ = grammar(
    "yq xq tomlq",
    "yYxtiw:s:o:p:I:f:L:e:CMnrjacS",
    """yaml-output yml-output yaml-roundtrip yml-roundtrip yaml-output-grammar-version:
    yml-out-ver: width: indentless-lists indentless in-place explicit-start explicit-end
    xml-output xml-dtd xml-root: xml-item-depth: xml-force-list: toml-output arg:2 argjson:2
    slurpfile:2 rawfile:2 args jsonargs from-file: indent: tab seq stream slurp raw-input
    null-input compact-output raw-output join-output ascii-output sort-keys color-output
    monochrome-output exit-status inplace split-exp: output-format: input-format: expression:
    front-matter: header-preprocess nul-output no-doc lua-prefix: properties-separator:""",
    risky="-i --in-place --inplace -s --split-exp",
    note="both yq's (kislyuk's and mikefarah's) options: -i/--in-place/--inplace rewrite the "
    "files, -s/--split-exp writes files named by an expression",
)


@handles("yq", "xq", "tomlq")
def _yq(c: Cmd) -> None:
    o = options(c, _YQ)
    pos = o.pos[1:] if o.pos and o.pos[0].value in ("e", "eval", "ea", "eval-all") else o.pos
    if o.has("-i", "--in-place", "--inplace"):
        c.write(pos if o.has("-f", "--from-file") else pos[1:], "modifies in place")
    if o.has("-s", "--split-exp"):
        c.change("writes files named by an expression")
