"""The CEL side of policies: compile each condition, check it, run its examples (celpy lives here).

Checks at load time, each reported with the line of the condition it concerns:
    - syntax (celpy's parser, with its line and column);
    - unknown variables and functions, found by walking the parse tree (an `||` whose left side
      is true never evaluates its right side, so evaluating alone would miss them);
    - regular expression literals given to `matches` (compiled with RE2, as at run time);
    - string literals compared with a fact they can never be (`act == 'chnage-state'`:
      cel_values.py);
    - evaluation on the default facts: any error, or a result that is not a bool;
    - every operand of `&&`, `||` and `?:` on its own: a type error (`act == 1`) or an operand
      that is not a bool, even where the default facts never reach it. Operands using a macro's
      variable (`p` in `paths.exists(p, ...)`) are skipped: they have no value outside the macro.
celpy's objects (parse trees, runners, CEL values) are `Any` here.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from typing import TYPE_CHECKING, Any

from .cel_values import literal_problems
from .rules import FACT_TYPES, Rule, complete_facts, default_facts

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .spec import Errors, Example, RuleSpec

MAX_CONDITION = 4096
MAX_OPERAND_CHECKS = 64  # per condition: bounds the load time of hostile input
MACROS = frozenset(["all", "exists", "exists_one", "map", "filter"])
_OPERATORS = {
    "relation_eq": "==",
    "relation_ne": "!=",
    "relation_lt": "<",
    "relation_le": "<=",
    "relation_gt": ">",
    "relation_ge": ">=",
    "relation_in": "in",
    "addition_add": "+",
    "addition_sub": "-",
    "multiplication_mul": "*",
    "multiplication_div": "/",
    "multiplication_mod": "%",
}
_FAILS = "the condition fails on the default facts (a bash collect-info with no command)"
_TERMINALS = {"RPAR": "')'", "LPAR": "'('", "RSQB": "']'", "RBRACE": "'}'", "COMMA": "','"}


class _Cel:
    """The names this module uses from celpy, lark (celpy's parser) and re2."""

    def __init__(self) -> None:
        import celpy
        import re2  # type: ignore[import-untyped]
        from celpy.adapter import json_to_cel
        from celpy.celparser import CELParseError
        from celpy.celtypes import BoolType
        from celpy.evaluation import CELEvalError, base_functions
        from lark import Token, Tree
        from lark.exceptions import UnexpectedCharacters, UnexpectedToken

        self.Environment: Any = celpy.Environment
        self.json_to_cel: Any = json_to_cel
        self.CELParseError: Any = CELParseError
        self.CELEvalError: Any = CELEvalError
        self.BoolType: Any = BoolType
        self.base_functions: Any = base_functions
        self.Token: Any = Token
        self.Tree: Any = Tree
        self.UnexpectedCharacters: Any = UnexpectedCharacters
        self.UnexpectedToken: Any = UnexpectedToken
        self.re2: Any = re2


@functools.cache
def _cel() -> _Cel:
    """The one accessor of celpy, lark and re2: lazy, as they cost ~120 ms to import and only a
    policy file with rules needs them (presets and exec in a workspace without one never do)."""
    return _Cel()


def compile_rules(
    specs: list[RuleSpec], errors: Errors
) -> tuple[list[Rule], Callable[[dict[str, Any]], Any]]:
    """Compile and check every rule; faults are appended to `errors` as (line, problem)."""
    cel = _cel()
    limit = sys.getrecursionlimit()
    env = cel.Environment()  # sets the recursion limit to 2500: never lower it
    sys.setrecursionlimit(max(limit, 2500))

    def prepare(facts: dict[str, Any]) -> dict[str, Any]:
        return {key: cel.json_to_cel(value) for key, value in facts.items()}

    defaults = prepare(default_facts())
    rules: list[Rule] = []
    for spec in specs:
        try:
            test = _compile(env, spec, defaults, errors)
        except RecursionError:
            test = None
            errors.append((spec.when_line, f"rule {spec.id!r}: the condition nests too deeply"))
        except Exception as error:  # a celpy surprise: a fault of this rule, never a traceback
            test = None
            problem = f"the condition could not be checked ({type(error).__name__}: {error})"
            errors.append((spec.when_line, f"rule {spec.id!r}: {problem[:300]}"))
        if test is None:
            continue
        for example in spec.examples:
            _check_example(spec, example, test, prepare, errors)
        rule = Rule(
            spec.id, spec.decision, spec.message, spec.when, spec.line, len(spec.examples), test
        )
        rules.append(rule)
    return rules, prepare


def _compile(
    env: Any, spec: RuleSpec, defaults: Any, errors: Errors
) -> Callable[[Any], bool] | None:
    name, when = f"rule {spec.id!r}", spec.when
    if len(when) > MAX_CONDITION:
        errors.append(
            (
                spec.when_line,
                f"{name}: the condition is {len(when)} characters; the limit is {MAX_CONDITION}",
            )
        )
        return None
    if not when.strip():
        errors.append((spec.when_line, f"{name}: the condition is empty"))
        return None
    try:
        ast = env.compile(when)
    except _cel().CELParseError as error:
        line = spec.when_line + (getattr(error, "line", None) or 1) - 1
        column = getattr(error, "column", None)
        where = f" at column {column}" if column else ""
        errors.append((line, f"{name}: CEL syntax error{where}: {_parse_problem(error)}"))
        return None
    problems = _static_problems(env, ast)
    problems = problems or _default_problems(env, ast, when, defaults)
    for cel_line, problem in problems:
        errors.append((spec.when_line + cel_line - 1, f"{name}: {problem}"))
    return None if problems else _make_test(env.program(ast))


def _make_test(runner: Any) -> Callable[[Any], bool]:
    cel = _cel()

    def test(subject: Any) -> bool:
        try:
            result = runner.evaluate(subject)
        except cel.CELEvalError as error:
            raise ValueError(_eval_problem(error)) from None
        if isinstance(result, cel.CELEvalError):
            raise ValueError(_eval_problem(result))
        if not isinstance(result, cel.BoolType):
            raise ValueError(f"the condition gives {_type_name(result)}, not a bool")
        return bool(result)

    return test


def _parse_problem(error: Exception) -> str:
    cel = _cel()
    cause = error.__context__
    if isinstance(cause, cel.UnexpectedToken):
        token = cause.token
        found = "end of the condition" if token.type == "$END" else repr(str(token))
        wanted = sorted(_TERMINALS.get(name, "") for name in cause.expected)
        hint = f"; expected {' or '.join(wanted)}" if wanted and all(wanted) else ""
        return f"unexpected {found}{hint}"
    if isinstance(cause, cel.UnexpectedCharacters):
        return f"unexpected character {cause.char!r}"
    return " ".join(str(error).split()) or type(error).__name__


def _static_problems(env: Any, ast: Any) -> list[tuple[int, str]]:
    """Unknown variables and functions, and regular expressions RE2 will not compile."""
    cel = _cel()
    base_functions, Tree = cel.base_functions, cel.Tree
    bound = _macro_variables(ast)
    names: list[Any] = []
    calls: list[Any] = []
    patterns: list[Any] = []
    for tree in ast.iter_subtrees():
        kids = tree.children
        if tree.data == "member_dot_arg":
            args = kids[2].children if len(kids) > 2 and isinstance(kids[2], Tree) else []
            if kids[1] not in MACROS:
                calls.append(kids[1])
            if kids[1] == "matches" and args:
                patterns.append(args[0])
        elif tree.data in ("ident_arg", "dot_ident_arg"):
            calls.append(kids[0])
            args = kids[1].children if len(kids) > 1 and isinstance(kids[1], Tree) else []
            if kids[0] == "matches" and len(args) > 1:
                patterns.append(args[1])
        elif tree.data in ("ident", "dot_ident") and kids and isinstance(kids[0], cel.Token):
            names.append(kids[0])
    known = set(base_functions) | {"has"} | MACROS
    problems = [
        (token.line or 1, f"unknown variable {str(token)!r}; the facts are {', '.join(FACT_TYPES)}")
        for token in names
        if token not in FACT_TYPES and token not in bound and token not in base_functions
    ]
    problems += [(t.line or 1, f"unknown function {str(t)!r}") for t in calls if t not in known]
    problems += literal_problems(ast, bound, functools.partial(_string_value, env))
    return problems or _pattern_problems(env, patterns)


def _string_value(env: Any, literal: Any) -> str | None:
    """A string literal's value (escapes and raw strings as CEL reads them)."""
    try:
        value = env.program(literal).evaluate({})
    except Exception:
        return None  # the evaluation on the default facts reports it
    return str(value) if isinstance(value, str) else None


def _pattern_problems(env: Any, patterns: list[Any]) -> list[tuple[int, str]]:
    re2 = _cel().re2
    options = re2.Options()
    options.log_errors = False  # RE2 would print to stderr
    problems = []
    for tree in patterns:
        tokens = list(tree.scan_values(_is_token))
        if not tokens or not all(t.type in ("STRING_LIT", "MLSTRING_LIT") for t in tokens):
            continue  # not a literal: checked when it runs
        try:
            pattern = str(env.program(tree).evaluate({}))
        except Exception:
            continue  # the evaluation on the default facts reports it
        try:
            re2.compile(pattern, options)
        except re2.error as error:
            detail = (
                error.args[0].decode() if error.args and isinstance(error.args[0], bytes) else error
            )
            problems.append((tokens[0].line or 1, f"bad regular expression {pattern!r}: {detail}"))
    return problems


def _default_problems(env: Any, ast: Any, when: str, defaults: Any) -> list[tuple[int, str]]:
    """Evaluate the condition, and each operand of && || ?:, on the default facts."""
    bound = _macro_variables(ast)
    for number, (operand, needs_bool) in enumerate(_operands(ast)):
        if number >= MAX_OPERAND_CHECKS:
            break
        if bound and _uses(operand, bound):
            continue
        problem = _operand_problem(env, operand, when, defaults, needs_bool)
        if problem is not None:
            return [problem]
    problem = _operand_problem(env, ast, when, defaults, needs_bool=False)
    if problem is not None:
        return [problem]
    try:
        _make_test(env.program(ast))(defaults)
    except ValueError as error:
        text = str(error)
        return [(1, text if text.startswith("the condition gives") else f"{_FAILS}: {text}")]
    return []


def _operands(ast: Any) -> Iterator[tuple[Any, bool]]:
    """Each operand of && || ?: once (a chain's inner links are not re-evaluated as a whole),
    and whether it must be a bool."""
    for tree in ast.iter_subtrees_topdown():
        kids = tree.children
        if tree.data in ("conditionaland", "conditionalor") and len(kids) == 2:
            if len(kids[0].children) == 1:
                yield kids[0], True  # the first operand of the chain
            yield kids[1], True
        elif tree.data == "expr" and len(kids) == 3:
            yield kids[0], True
            yield from (
                (k, False) for k in kids[1:] if not (k.data == "expr" and len(k.children) == 3)
            )


def _operand_problem(
    env: Any, operand: Any, when: str, defaults: Any, needs_bool: bool
) -> tuple[int, str] | None:
    cel = _cel()
    try:
        value = env.program(operand).evaluate(defaults)
    except cel.CELEvalError as error:
        value = error
    if isinstance(value, cel.CELEvalError):
        cause = value.args[1] if len(value.args) > 1 else None
        primary = "CELEvalError" not in str(value.args[0] if value.args else "")
        if not (cause is TypeError and primary):
            return None  # a missing key or index on the default facts: not a type error
        before, after = "type error in `", f"`: {_eval_problem(value)}"
    elif needs_bool and not isinstance(value, cel.BoolType):
        before, after = "`", f"` is {_type_name(value)}; &&, || and ?: need a bool"
    else:
        return None
    tokens = sorted(operand.scan_values(_is_token), key=lambda t: t.start_pos or 0)
    line = (tokens[0].line or 1) if tokens else 1
    return line, before + _snippet(when, operand, tokens) + after


def _check_example(
    spec: RuleSpec,
    example: Example,
    test: Callable[[Any], bool],
    prepare: Callable[[dict[str, Any]], Any],
    errors: Errors,
) -> None:
    shown = json.dumps(example.facts, ensure_ascii=False, separators=(", ", ": "))
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    where = f"rule {spec.id!r}: {example.label} {shown}"
    try:
        hit = test(prepare(complete_facts(example.facts)))
    except Exception as error:  # ValueError from the test; RecursionError; a celpy surprise
        errors.append((example.line, f"{where} could not be evaluated: {error}"))
        return
    if hit != example.match:
        expected, got = ("match", "false") if example.match else ("not match", "true")
        errors.append((example.line, f"{where} should {expected}, but the condition is {got}"))


def _eval_problem(error: Any) -> str:
    args = error.args
    text = str(args[0]) if args else type(error).__name__
    text = text.split(" (in activation", 1)[0]
    text = re.sub(r"<class 'celpy\.celtypes\.(\w+?)Type'>", lambda m: m[1].lower(), text)
    text = re.sub(r"Token\('RULE', '(\w+)'\)", lambda m: _OPERATORS.get(m[1], m[1]), text)
    cause = args[1] if len(args) > 1 else None
    if isinstance(cause, type) and cause is not TypeError:
        detail = f": {args[2][0]}" if len(args) > 2 and args[2] else ""
        text = f"{text} ({cause.__name__}{detail})"
    return " ".join(text.split())[:300]


def _type_name(value: Any) -> str:
    name = type(value).__name__.removesuffix("Type").lower()
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def _snippet(when: str, tree: Any, tokens: list[Any]) -> str:
    """The source text a subtree was parsed from (its positions, else its tokens' span)."""
    meta = getattr(tree, "meta", None)
    start, end = getattr(meta, "start_pos", None), getattr(meta, "end_pos", None)
    if start is None or end is None:
        if not tokens:
            return "?"
        start, end = tokens[0].start_pos or 0, tokens[-1].end_pos or len(when)
    text = " ".join(when[start:end].split())
    return text if len(text) <= 60 else text[:57] + "..."


def _macro_variables(ast: Any) -> set[str]:
    Tree = _cel().Tree
    bound: set[str] = set()
    for tree in ast.iter_subtrees():
        kids = tree.children
        macro = tree.data == "member_dot_arg" and kids[1] in MACROS and len(kids) > 2
        if macro and isinstance(kids[2], Tree) and kids[2].children:
            first = kids[2].children[0]
            bound.update(str(t) for t in first.scan_values(_is_token) if t.type == "IDENT")
    return bound


def _uses(tree: Any, names: set[str]) -> bool:
    return any(t.type == "IDENT" and t in names for t in tree.scan_values(_is_token))


def _is_token(value: Any) -> bool:
    return isinstance(value, _cel().Token)
