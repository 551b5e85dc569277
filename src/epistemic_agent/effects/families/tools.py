"""Formatters, linters, compilers, package runners, and what is said of every program the
tables do not know (build and test tools, interpreters, editors, scripts)."""

from __future__ import annotations

from ..core import FALLBACK, VERSION_ARGS, Cmd, handles, lit, maybe_option, words
from ..options import Grammar, grammar, options

_FORMATTERS: dict[str, tuple[Grammar, bool, str, str]] = {
    # program: (grammar, writes by default, options that make it write, that make it check)
    "black": (
        grammar(
            "black",
            "c:l:t:xSCW:qvh",
            """code: line-length: target-version: pyi ipynb python-cell-magics:
            skip-source-first-line skip-string-normalization skip-magic-trailing-comma preview
            unstable enable-unstable-feature: check diff color no-color line-ranges: fast safe
            required-version: exclude: extend-exclude: force-exclude: stdin-filename: include:
            workers: quiet verbose config:""",
            note="rewrites its operands unless --check, --diff or -c/--code",
            complete=True,
            abbrev=False,
        ),
        True,
        "",
        "--check --diff -c --code",
    ),
    "isort": (
        grammar(
            "isort",
            "l:p:a:r:s:m:e:cdqvV",
            """settings-path: settings-file: sp: line-length: profile: project: add-import:
            rm: skip: skip-glob: multi-line: src: virtual-env: conda-env: py: filter-files
            check-only check diff df stdout show-files show-config""",
            note="rewrites its operands unless --check-only/-c, --diff or --stdout/-d",
        ),
        True,
        "",
        "--check-only --check -c --diff --df --stdout -d --show-files --show-config",
    ),
    "autopep8": (
        grammar(
            "autopep8",
            "idj:p:ravh",
            """in-place diff jobs: pep8-passes: max-line-length: select: ignore: exclude:
            global-config: line-range: range: indent-size: aggressive recursive list-fixes""",
            risky="-i --in-place",
        ),
        False,
        "-i --in-place",
        "",
    ),
    "yapf": (
        grammar(
            "yapf",
            "idrl:e:pmqvh",
            "in-place diff recursive lines: exclude: style: parallel print-modified quiet",
            risky="-i --in-place",
        ),
        False,
        "-i --in-place",
        "",
    ),
    "prettier": (
        grammar(
            "prettier",
            "wcl",
            """write check list-different config: plugin: parser: ignore-path: stdin-filepath:
            log-level: cache-location: cache-strategy:""",
            risky="-w --write",
        ),
        False,
        "--write -w",
        "",
    ),
    "gofmt": (
        grammar(
            "gofmt",
            long="w l d s e r: cpuprofile:",
            risky="--w --cpuprofile",
            note="Go flags (-w, --w, -w=true); -cpuprofile FILE is written",
            single=True,
            abbrev=False,
            stop=True,
        ),
        False,
        "--w",
        "",
    ),
    "rustfmt": (
        grammar(
            "rustfmt",
            "lvqhV",
            """check emit: backup config-path: edition: color: print-config: files-with-diff
            verbose quiet config: style-edition: unstable-features""",
            note="rewrites its operands unless --check or --emit stdout",
            abbrev=False,
        ),
        True,
        "",
        "--check",
    ),
    "clang-format": (
        grammar(
            "clang-format",
            long="""i n dry-run style: assume-filename: lines: offset: length: fallback-style:
            output-replacements-xml sort-includes Werror verbose dump-config files:
            qualifier-alignment:""",
            risky="--i",
            note="LLVM options: -i and --i alike",
            single=True,
            abbrev=False,
        ),
        False,
        "--i",
        "--n --dry-run",
    ),
    "shfmt": (
        grammar(
            "shfmt",
            long="""w write l list d diff i: indent: ln: language-dialect: s simplify p posix bn
            binary-next-line ci case-indent sr space-redirects kp keep-padding fn
            func-next-line mn minify f find tojson to-json from-json filename: apply-ignore""",
            risky="--w --write",
            single=True,
            abbrev=False,
            stop=True,
        ),
        False,
        "--w --write",
        "",
    ),
}


@handles(*_FORMATTERS)
def _formatter(c: Cmd) -> None:
    g, by_default, writing, checking = _FORMATTERS[c.name]
    o = options(c, g)
    if o.sure(*VERSION_ARGS, "--version") or (checking and o.sure(*checking.split())):
        return
    if c.name == "rustfmt" and o.sure("--emit") and o.last("--emit") == lit("stdout"):
        return
    if c.name == "gofmt":
        c.write(o.get("--cpuprofile"))
    if by_default or o.has(*writing.split()):
        c.write([w for w in o.pos if w.value != "-"], "reformats")


_RUFF = grammar(
    "ruff",
    "o:neqvsh",
    """config: select: ignore: extend-select: extend-ignore: per-file-ignores:
    extend-per-file-ignores: fixable: unfixable: exclude: extend-exclude: line-length:
    target-version: output-file: output-format: stdin-filename: cache-dir: range: fix
    unsafe-fixes fix-only add-noqa diff check watch show-fixes statistics exit-zero preview
    no-cache isolated""",
    risky="--fix --fix-only --unsafe-fixes --add-noqa -o --output-file",
    note="check --fix/--fix-only/--unsafe-fixes/--add-noqa and format (without --check or "
    "--diff) rewrite files; -o/--output-file is written; any other check writes .ruff_cache",
    abbrev=False,
)


@handles("ruff")
def _ruff(c: Cmd) -> None:
    o = options(c, _RUFF)
    sub = o.pos[0].value if o.pos else None
    c.write(o.get("-o", "--output-file"))
    if o.has(*VERSION_ARGS) or sub in ("rule", "version", "help", "config", "linter"):
        return
    targets = o.pos[1:] if sub in ("check", "format") else o.pos
    fixing = o.has("--fix", "--unsafe-fixes", "--fix-only", "--add-noqa")
    if sub == "clean":
        c.change("deletes ruff caches")
    elif (sub == "format" and not o.sure("--check", "--diff")) or fixing:
        c.write(targets or [lit(".")], "reformats or fixes files under")
    else:
        c.unknown("lints, writing .ruff_cache: effect unknown")


grammar(
    "gcc g++ cc c++ clang clang++",
    note="-o FILE (-oFILE, --output=FILE) and -MF FILE are written; without -o, a.out or "
    "object files; read-only only with -E, -M, -MM, -fsyntax-only, -###, --version, "
    "-print-* or -dump*; -wrapper, -fplugin, -B and -specs run other programs",
)
_CC_VALUE = words(
    """-o -x -I -L -l -D -U -include -imacros -isystem -iquote -idirafter -iprefix -MF -MT -MQ
    -Xlinker -Xassembler -Xpreprocessor -u -T -aux-info -wrapper -B --param -z -e"""
)
_CC_READ = words("-E -fsyntax-only -M -MM -### --version --help -dumpversion -dumpmachine")
_CC_RUNS = ("-wrapper", "-fplugin", "-B", "-specs")


@handles("gcc", "g++", "cc", "c++", "clang", "clang++")
def _compiler(c: Cmd) -> None:
    args, i, outputs, read, extra = c.args, 0, [], False, False
    if not args or [w.value for w in args] == ["-v"]:
        return
    while i < len(args):
        word, i = args[i], i + 1
        value = word.value or ""
        if word.value is None and maybe_option(word):
            c.doubts.append(f"{word.raw} may expand to an option such as -o")
        if value.startswith(_CC_RUNS):
            c.unknown("runs a program it is given (-wrapper, -fplugin, -B, -specs): effect unknown")
        if value in _CC_VALUE:
            if value in ("-o", "-MF", "-aux-info") and i < len(args):
                outputs.append(args[i])
            i += 1
            continue
        attached = _attached_output(value)
        if attached:
            outputs.append(lit(attached))
        read |= value in _CC_READ or value.startswith(("-print-", "--print-", "-dump"))
        extra |= value.startswith(("-MD", "-MMD", "-save-temps", "-fdump-"))
    c.write(outputs)
    if extra:
        c.change("writes dependency, dump or temporary files")
    if not outputs and not read:
        c.change("writes a.out or object files")


def _attached_output(value: str) -> str | None:
    """-ofile, -MFfile, --output=file."""
    for prefix in ("--output=", "-MF", "-o"):
        if value.startswith(prefix) and len(value) > len(prefix):
            return value[len(prefix) :]
    return None


@handles("uvx", "npx", "pnpx", "bunx")
def _package_runner(c: Cmd) -> None:
    values = [w.value for w in c.args]
    if not (values and values[0] in VERSION_ARGS):
        c.unknown("downloads and runs a package: effect unknown")


BUILD_TOOLS = words(
    """make gmake cmake ninja meson bazel bazelisk buck gradle gradlew mvn mvnw ant sbt scons
    tox nox pytest py.test jest vitest mocha karma ava tsc webpack vite rollup esbuild parcel
    turbo nx lerna rustc javac kotlinc scalac ghc dotnet swift
    swiftc zig ctest coverage mypy pyright pylint flake8 pyflakes eslint tslint stylelint
    rubocop golangci-lint pre-commit hatch pdm just invoke doit unittest doctest nosetests
    phpunit rspec rake bundle"""
)
_INTERPRETERS = words(
    "deno Rscript R lua luajit julia tclsh osascript pwsh powershell java groovy scala kotlin"
)
_REASONS = {
    "ssh": "runs commands on a remote host: effect unknown",
    "vim": "opens an editor: effect unknown",
    "vi": "opens an editor: effect unknown",
    "nvim": "opens an editor: effect unknown",
    "nano": "opens an editor: effect unknown",
    "emacs": "opens an editor: effect unknown",
    "code": "opens an editor: effect unknown",
    "ed": "runs a line editor: effect unknown",
}


def _fallback(c: Cmd) -> None:
    name = c.name
    known = name in BUILD_TOOLS or name in _INTERPRETERS
    if known and c.args and all(w.value in VERSION_ARGS for w in c.args):
        return
    if name in BUILD_TOOLS:
        c.unknown(
            "runs a build, test or lint tool: effect unknown (it may run project code "
            "and write outputs and caches)"
        )
    elif name in _INTERPRETERS:
        c.unknown("runs a program in an interpreter: effect unknown")
    elif name in _REASONS:
        c.unknown(_REASONS[name])
    elif "/" in name:
        c.unknown("runs a script or program by path: effect unknown")
    else:
        c.unknown(f"runs `{name}`, which is not a known program: effect unknown")


FALLBACK.append(_fallback)
