"""The walk of a command's syntax tree: statements, the directory they run in (cd, pushd,
popd), redirections, and each simple command handed to its program's handler (`Cmd.run`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .model import MUTATING, READ_ONLY, UNKNOWN, Effect
from .programs import Cmd, Findings, Word, environment, norm, program, shorten
from .syntax import node_text, parse, really_broken
from .words import word as _word

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tree_sitter import Node

MAX_NESTING = 8

Loc = tuple[str | None, ...]  # the directory stack (pushd); the last entry is the cwd
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|"})
_BRANCHES = frozenset({"elif_clause", "else_clause", "case_item"})
_LEAVES = frozenset({"word", "number", "raw_string", "ansi_c_string"})


class Walker:
    """One classification: the findings of every part of a command, nested strings included."""

    def __init__(self) -> None:
        self.out = Findings(self.nested)
        self.depth = 0
        self.src = b""  # the bytes of the script being walked (texts come from here)

    def top(self, command: str) -> Effect:
        root, self.src = parse(command)
        broken = root.has_error and really_broken(root)
        if broken:
            self.out.add(UNKNOWN, "the command does not parse as shell: effect unknown")
        self.stmt(root, (".",))
        out = self.out
        cls = MUTATING if out.mutating else UNKNOWN if out.unknown else READ_ONLY
        return Effect(
            UNKNOWN if broken else cls,
            _unique(out.writes),
            _unique(out.deletes),
            out.dynamic,
            _unique(out.reasons),
        )

    def nested(self, text: str, cwd: str | None, part: str) -> None:
        """Classify a command string run by a part of the command (bash -c, eval, ...)."""
        if self.depth >= MAX_NESTING:
            self.out.add(UNKNOWN, f"`{part}` nests command strings too deeply: effect unknown")
            return
        root, src = parse(text)
        if root.has_error and really_broken(root):
            self.out.add(UNKNOWN, f"`{part}` runs a string that does not parse: effect unknown")
            return
        self.depth, outer, self.src = self.depth + 1, self.src, src
        try:
            self.stmt(root, (cwd,))
        finally:
            self.depth, self.src = self.depth - 1, outer

    # -- statements: each returns the directory stack after it ---------------------------

    def stmt(self, node: Node, loc: Loc, tail: Sequence[Node] = ()) -> Loc:
        kind = node.type
        if kind in ("list", "pipeline"):
            return self.chain(node, loc, tail)
        for redirect in tail:
            self.redirect(redirect, loc)
        method = _METHODS.get(kind)
        if method is not None:
            return method(self, node, loc)
        for child in node.named_children:
            loc = self.stmt(child, loc)
        return loc

    def chain(self, node: Node, loc: Loc, tail: Sequence[Node]) -> Loc:
        """`a && b`, `a || b` (the cwd flows on) or `a | b` (each part in its own subshell).

        Redirections that tree-sitter hangs on the whole chain belong to its last part.
        """
        parts = [child for child in node.named_children if child.type != "comment"]
        if node.type == "pipeline":
            for i, part in enumerate(parts):
                self.stmt(part, loc, tail if i == len(parts) - 1 else ())
            return loc
        if len(parts) != 2 or not any(child.type == "||" for child in node.children):
            for i, part in enumerate(parts):
                loc = self.stmt(part, loc, tail if i == len(parts) - 1 else ())
            return loc
        left = self.stmt(parts[0], loc)
        start = loc if left == loc else (None,)  # `cd x || b`: b runs only if the cd failed
        right = self.stmt(parts[1], start, tail)
        return left if right == start else (None,)

    def sequence(self, node: Node, loc: Loc) -> Loc:
        before = loc
        for child in node.children:
            if child.is_named:
                before, loc = loc, self.stmt(child, loc)
            elif child.type == "&":
                loc = before  # a background job runs in a subshell
        return loc

    def subshell(self, node: Node, loc: Loc) -> Loc:
        self.sequence(node, loc)
        return loc

    def substitution(self, node: Node, loc: Loc) -> Loc:
        text = node_text(node, self.src)
        if text.startswith("`") and "\\" in text:  # nested escaped backticks: re-parse
            self.nested(re.sub(r"\\([\\`$])", r"\1", text[1:-1]), loc[-1], shorten(text))
        else:
            self.sequence(node, loc)
        return loc

    def branching(self, node: Node, loc: Loc) -> Loc:
        """if/case: branches start from the same place; a cd inside makes the cwd unknown."""
        current, changed = loc, False
        for child in node.named_children:
            if child.type in _BRANCHES:
                end = self.sequence(child, loc)
            else:
                current = end = self.stmt(child, current)
            changed |= end != loc
        return (None,) if changed else loc

    def loop(self, node: Node, loc: Loc) -> Loc:
        end = self.sequence(node, loc)
        if end == loc:
            return loc
        self.sequence(node, (None,))  # later iterations start somewhere else
        return (None,)

    def assignment(self, node: Node, loc: Loc) -> Loc:
        """`X=1 cmd`, `export X=1`: a variable that makes programs load code is a doubt."""
        name = node.child_by_field_name("name")
        if name is not None:
            environment(self.out, node_text(name, self.src), shorten(node_text(node, self.src)))
        for child in node.named_children:
            self.stmt(child, loc)
        return loc

    def function(self, node: Node, loc: Loc) -> Loc:
        name = node.child_by_field_name("name")
        if name is not None:
            self.out.functions.add(node_text(name, self.src))
        body = node.child_by_field_name("body")
        if body is not None:
            self.stmt(body, loc)
        return loc

    def redirected(self, node: Node, loc: Loc) -> Loc:
        body: Node | None = None
        redirects: list[Node] = []
        for child in node.named_children:
            if child.type in _REDIRECTS:
                redirects.append(child)
            elif body is None and child.type != "comment":
                body = child
        if body is not None and body.type in ("list", "pipeline"):
            return self.chain(body, loc, redirects)
        for redirect in redirects:
            self.redirect(redirect, loc)
        if body is None:
            return loc
        if body.type == "command":
            extra = [word for redirect in redirects for word in _extra_destinations(redirect)]
            return self.command(body, loc, extra)
        return self.stmt(body, loc)

    def command(self, node: Node, loc: Loc, extra: Sequence[Node] = ()) -> Loc:
        name: Node | None = None
        args: list[Node] = []
        for child in node.named_children:
            if child.type == "command_name":
                name = child.named_children[0] if child.named_children else child
            elif child.type in _REDIRECTS:
                self.redirect(child, loc)
                args.extend(_extra_destinations(child))
            elif child.type != "comment":
                args.append(child)
        args.extend(extra)
        for child in args if name is None else [name, *args]:
            if child.type not in _LEAVES:
                self.stmt(child, loc)  # substitutions inside the words and assignments
        if name is None or name.is_missing:
            return loc  # only assignments and redirections: shell state
        words = [_word(arg, self.src) for arg in args if arg.type != "variable_assignment"]
        head = _word(name, self.src)
        if head.value is not None and program(head.value) in ("cd", "pushd", "popd"):
            return _cd(program(head.value), words, loc)
        Cmd("", [], loc[-1], shorten(node_text(node, self.src)), self.out).run([head, *words])
        return loc

    # -- redirections ---------------------------------------------------------------------

    def redirect(self, node: Node, loc: Loc) -> None:
        if node.type == "file_redirect":
            self.file_redirect(node, loc)
            return
        for child in node.named_children:  # heredoc/herestring: body, targets, continuations
            if child.type == "file_redirect":
                self.file_redirect(child, loc)
            elif child.type not in ("heredoc_start", "heredoc_end"):
                self.stmt(child, loc)

    def file_redirect(self, node: Node, loc: Loc) -> None:
        op = next((child.type for child in node.children if not child.is_named), "")
        targets = [child for child in node.named_children if child.type != "file_descriptor"]
        if not targets:
            return
        self.stmt(targets[0], loc)
        target = _word(targets[0], self.src)
        duplicate = targets[0].type == "number" or target.value == "-"
        if op in _WRITE_OPS or (op == ">&" and not duplicate):
            Cmd("", [], loc[-1], shorten(node_text(node, self.src)), self.out).write([target])


_METHODS: dict[str, Callable[[Walker, Node, Loc], Loc]] = {
    "program": Walker.sequence,
    "compound_statement": Walker.sequence,
    "do_group": Walker.sequence,
    "subshell": Walker.subshell,
    "command_substitution": Walker.substitution,
    "process_substitution": Walker.substitution,
    "if_statement": Walker.branching,
    "case_statement": Walker.branching,
    "while_statement": Walker.loop,
    "for_statement": Walker.loop,
    "c_style_for_statement": Walker.loop,
    "function_definition": Walker.function,
    "variable_assignment": Walker.assignment,
    "redirected_statement": Walker.redirected,
    "command": Walker.command,
}


def _cd(name: str, words: list[Word], loc: Loc) -> Loc:
    """The directory stack after cd/pushd/popd."""
    targets = [w for w in words if not (w.value or "").startswith("-") or w.value == "-"]
    if name == "popd":
        return loc[:-1] if len(loc) > 1 else (None,)
    if not targets:
        return (*loc[:-1], "~") if name == "cd" else (None,)
    where = None if targets[0].value == "-" else norm(targets[0], loc[-1])
    return (*loc[:-1], where) if name == "cd" else (*loc, where)


def _extra_destinations(node: Node) -> list[Node]:
    """`echo hi >f arg`: tree-sitter files `arg` as a second target; it is an argument."""
    if node.type != "file_redirect":
        return []
    targets = [child for child in node.named_children if child.type != "file_descriptor"]
    return targets[1:]


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
