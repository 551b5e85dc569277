"""String literals a condition compares a fact with, when the fact could never hold them.

`act == 'chnage-state'` is valid CEL and type-checks, and it never matches: the gate admits
only the seven acts. The same holds for `tool`, `effect` and the keys of `counts`, whose values
are closed vocabularies (rules.CLOSED_FACTS). A rule written so is a rule that silently does
nothing, so a policy that holds one does not load, and `epistemic policy check` names the
literal with the closest known value.

Checked, on the parse tree cel.py hands over (lark trees; this module imports no celpy):
`FACT == 'x'`, `'x' == FACT`, `!=` alike, `FACT in ['x', ...]`, `'x' in counts`,
`counts['x']` and `counts.x`. A fact's name bound by a macro (`paths.exists(act, ...)`) is the
macro's variable, not the fact, and is left alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import ACT_NAMES, did_you_mean
from .rules import CLOSED_FACTS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

#: Nodes that only pass one operand on: unwrapped to find what an operand is.
_PASSING = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication"}
    | {"unary", "member", "primary", "paren_expr"}
)
_STRINGS = frozenset(["STRING_LIT", "MLSTRING_LIT"])
_NOUNS = {"act": "acts", "tool": "tools", "effect": "effects"}


def literal_problems(
    ast: Any, bound: set[str], value_of: Callable[[Any], str | None]
) -> list[tuple[int, str]]:
    """(line, problem) for each string literal compared with a closed fact it can never be.
    `value_of` gives a literal node's string value (None: not a plain string)."""
    problems = []
    for fact, node, token in _compared(ast, bound):
        value = str(token) if node is None else value_of(node)  # counts.NAME: the name
        allowed = ACT_NAMES if fact == "counts" else CLOSED_FACTS[fact]
        if value is None or value in allowed:
            continue
        hint = did_you_mean(value, allowed)
        if fact == "counts":
            said = f"`counts` has no key {value!r} (its keys are the acts: {', '.join(allowed)})"
        else:
            said = f"`{fact}` is never {value!r} (the {_NOUNS[fact]} are {', '.join(allowed)})"
        problems.append((getattr(token, "line", None) or 1, f"{said}.{hint}"))
    return problems


def _compared(ast: Any, bound: set[str]) -> Iterator[tuple[str, Any, Any]]:
    """(fact, literal node, its token) for each literal compared with a closed fact."""
    for tree in ast.iter_subtrees():
        kids = tree.children
        if tree.data == "relation" and len(kids) == 2 and _is_tree(kids[0]):
            operator = kids[0].data
            left = next((kid for kid in kids[0].children if _is_tree(kid)), None)
            if left is not None and operator in ("relation_eq", "relation_ne"):
                yield from _pair(left, kids[1], bound)
                yield from _pair(kids[1], left, bound)
            elif left is not None and operator == "relation_in":
                yield from _membership(left, kids[1], bound)
        elif tree.data == "member_index" and len(kids) == 2:
            if _fact(kids[0], bound) == "counts" and (found := _literal(kids[1])):
                yield "counts", *found
        elif tree.data == "member_dot" and len(kids) == 2 and not _is_tree(kids[1]):
            named = _fact(kids[0], bound) == "counts"  # counts.NAME: the name is the key
            yield from [("counts", None, kids[1])] if named else []


def _pair(side: Any, other: Any, bound: set[str]) -> Iterator[tuple[str, Any, Any]]:
    fact = _fact(side, bound)
    if fact in CLOSED_FACTS and (found := _literal(other)):
        yield fact, *found


def _membership(left: Any, right: Any, bound: set[str]) -> Iterator[tuple[str, Any, Any]]:
    """`FACT in ['a', 'b']`, and `'a' in counts`."""
    fact = _fact(left, bound)
    listed = _unwrap(right)
    if fact in CLOSED_FACTS and _is_tree(listed) and listed.data == "list_lit":
        for items in listed.children:
            for item in items.children if _is_tree(items) else ():
                if found := _literal(item):
                    yield fact, *found
    elif _fact(right, bound) == "counts" and (found := _literal(left)):
        yield "counts", *found


def _fact(node: Any, bound: set[str]) -> str | None:
    """The fact an operand is, when it is a bare name (not a macro's variable)."""
    leaf = _unwrap(node)
    if _is_tree(leaf) and leaf.data == "ident" and leaf.children:
        name = str(leaf.children[0])
        return None if name in bound else name
    return None


def _literal(node: Any) -> tuple[Any, Any] | None:
    """(the literal node, its token) when an operand is a lone string literal."""
    leaf = _unwrap(node)
    if _is_tree(leaf) and leaf.data == "literal" and leaf.children:
        token = leaf.children[0]
        if getattr(token, "type", None) in _STRINGS:
            return leaf, token
    return None


def _unwrap(node: Any) -> Any:
    while _is_tree(node) and node.data in _PASSING and len(node.children) == 1:
        node = node.children[0]
    return node


def _is_tree(node: Any) -> bool:
    return hasattr(node, "data") and hasattr(node, "children")
