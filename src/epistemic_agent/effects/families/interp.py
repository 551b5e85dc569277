"""Interpreters: inline code is unknown (a tiny allow-list of pure `python -c` programs aside),
in-place editing (perl -i, ruby -i) writes, and `python -m` runs the module's own table."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from ..core import HANDLERS, PATTERNS, VERSION_ARGS, Cmd, Word, handles, lit, words
from ..options import grammar, options, parse
from .tools import BUILD_TOOLS

PYTHON = re.compile(r"python[0-9.]*|pypy[0-9.]*|py")
_PYTHON = grammar(
    "python python3 pypy py",
    "bBc:*dEhiIm:*OPqRsSuvVW:xX:",
    "check-hash-based-pycs: help-env help-xoptions help-all",
    note="options up to the script; -c CODE and -m MODULE end them (the rest is the program's "
    "argv); -m json.tool, venv, compileall and the modules that have tables here (pip, black, "
    "pytest...) are judged as those programs",
    abbrev=False,
    stop=True,
    end="\0",
)
_PY_PURE_CALLS = words(
    """print len str repr int float bool abs round min max sum sorted list tuple dict set
    frozenset range hex oct bin chr ord format divmod pow all any enumerate zip reversed"""
)
_PY_MODULES = frozenset({"sys", "platform", "math"})


def _python(c: Cmd) -> None:
    o = parse(c.args, _PYTHON)
    if o.has(*VERSION_ARGS, "--help-env", "--help-xoptions", "--help-all"):
        return
    code, module = o.rest.get("-c"), o.rest.get("-m")
    if code is not None:
        _python_code(c, code[0].value if code else None)
    elif module is not None:
        _python_module(c, module[0].value if module else None, module[1:])
    elif o.pos and o.pos[0].value != "-":
        c.unknown(f"runs the script {o.pos[0].raw}: effect unknown")
    else:
        c.unknown("starts an interpreter reading stdin: effect unknown")


PATTERNS.append((PYTHON, _python))


def _python_code(c: Cmd, code: str | None) -> None:
    if code is None or not _python_pure(code):
        c.unknown("runs inline code: effect unknown")


def _python_pure(code: str) -> bool:
    """Only imports of sys/platform/math and expressions calling pure builtins (print)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    imported: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            if any(a.name not in _PY_MODULES or a.asname for a in stmt.names):
                return False
            imported.update(a.name for a in stmt.names)
        elif not isinstance(stmt, ast.Expr) or not _python_expr(stmt.value, imported):
            return False
    return True


def _python_expr(node: object, imported: set[str]) -> bool:
    for sub in ast.walk(node):  # type: ignore[arg-type]
        if isinstance(sub, ast.Lambda | ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom):
            return False
        if isinstance(sub, ast.Attribute) and sub.attr.startswith("_"):
            return False
        if isinstance(sub, ast.Name) and sub.id.startswith("__"):
            return False
        if isinstance(sub, ast.Call) and not _python_call(sub.func, imported):
            return False
    return True


def _python_call(func: object, imported: set[str]) -> bool:
    if isinstance(func, ast.Name):
        return func.id in _PY_PURE_CALLS
    if isinstance(func, ast.Attribute):
        base = func.value
        if isinstance(base, ast.Name):
            return base.id in imported and base.id != "sys"
        return isinstance(base, ast.Constant | ast.JoinedStr)
    return False


_JSON_TOOL = grammar(
    ("python -m json.tool",),
    "h",
    "sort-keys json-lines indent: tab no-indent compact no-ensure-ascii",
    note="the second operand is written",
    complete=True,
)
_VENV = grammar(
    ("python -m venv",),
    "",
    """system-site-packages symlinks copies clear upgrade without-pip prompt: upgrade-deps
    without-scm-ignore-files""",
    note="every operand is created",
)


def _python_module(c: Cmd, module: str | None, rest: Sequence[Word]) -> None:
    if module == "json.tool":
        c.write(options(c, _JSON_TOOL, rest).pos[1:2])
    elif module in ("venv", "virtualenv"):
        c.write(options(c, _VENV, rest).pos, "creates a virtual environment in")
    elif module in ("compileall", "py_compile"):
        c.change("writes bytecode files")
    elif module is not None and (module in HANDLERS or module in BUILD_TOOLS):
        c.run([lit(module), *rest])
    else:
        c.unknown(f"runs the module {module or '(not known statically)'}: effect unknown")


#: What each switch letter takes: code (-e), the in-place suffix (-i, the rest of the word),
#: a value (the rest of the word or the next word), the rest of the word, or digits.
_SWITCHES = {
    "perl": {"e": "code", "E": "code", "i": "suffix", "I": "value", "l": "digits", "0": "hex"}
    | dict.fromkeys("MmxCdDVF", "rest"),
    "ruby": {"e": "code", "i": "suffix", "0": "digits", "W": "digits", "T": "digits"}
    | dict.fromkeys("IrECX", "value")
    | dict.fromkeys("xF", "rest"),
}
grammar(
    "perl",
    note="switches may be bundled (-lane, -pi.bak): -e/-E CODE, -I DIR (attached or the next "
    "word), -i[SUFFIX], -M/-m/-x/-C/-d/-D/-V/-F take the rest of the word, -l/-0 digits; "
    "with -i the file operands are rewritten",
)
grammar(
    "ruby",
    note="as perl: -e CODE, -I/-r/-E/-C/-X take a value, -i[SUFFIX] rewrites the file operands",
)


@handles("perl", "ruby")
def _perl(c: Cmd) -> None:
    args, i, inline, in_place = c.args, 0, False, False
    table = _SWITCHES[c.name]
    while i < len(args):
        value = args[i].value
        if value in VERSION_ARGS or value == "-v":
            return
        if value is None or len(value) < 2 or value[0] != "-" or value.startswith("--"):
            i += value == "--"
            break
        i += 1
        k = 1
        while k < len(value):
            kind, k = table.get(value[k], "flag"), k + 1
            if kind in ("digits", "hex"):
                while k < len(value) and (
                    value[k].isdigit() or (kind == "hex" and value[k] in "xXabcdefABCDEF")
                ):
                    k += 1
            elif kind != "flag":
                inline |= kind == "code"
                in_place |= kind == "suffix"
                i += kind in ("code", "value") and k == len(value)  # the next word
                break
    if in_place:
        c.write(args[i if inline else i + 1 :], "modifies in place")
    if inline:
        c.unknown("runs inline code: effect unknown")
    elif i < len(args):
        c.unknown(f"runs the script {args[i].raw}: effect unknown")
    else:
        c.unknown("starts an interpreter reading stdin: effect unknown")


@handles("node", "nodejs", "php")
def _node(c: Cmd) -> None:
    values = [w.value for w in c.args]
    if values and values[0] in VERSION_ARGS | {"-v"}:
        return  # version, help
    if c.name == "php" and values[:1] == ["-l"] and all(v and v[0] != "-" for v in values[1:]):
        return  # php -l FILE... lints
    if any(v in ("-e", "--eval", "-p", "--print", "-r", "-R", "-B", "-E", "-F") for v in values):
        c.unknown("runs inline code: effect unknown")
    elif c.args:
        c.unknown(f"runs the script {c.args[0].raw}: effect unknown")
    else:
        c.unknown("starts an interpreter reading stdin: effect unknown")
