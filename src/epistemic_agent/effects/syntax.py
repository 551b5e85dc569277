"""The syntax tree of a shell command: tree-sitter-bash, loaded on first use, and the repairs
its output needs before the walker reads it.

tree-sitter is imported on the first parse, through `bash_parser()`, its one accessor
(importing this module does not import it: start-up time). One Parser per process, behind a
lock. Every non-ASCII byte is replaced by "x" before parsing (same offsets, same tokens; texts
are read from the original bytes): tree-sitter-bash 0.25's scanner calls isalpha() on raw
code points and segfaults the process on some non-ASCII input. tree-sitter-bash breaks
`time { ...; }`, `time for ...` and `! { ...; }` apart; those keywords are blanked and the
text re-parsed. `x=1 > f` gets an empty MISSING command name from tree-sitter: accepted.
A typical command costs 30-150 us (see bench/bench_effects.py).
"""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node


class _Bash:
    """tree-sitter's bash grammar and the lock around its parser (a Parser is not meant to be
    shared between threads)."""

    def __init__(self) -> None:
        import tree_sitter
        import tree_sitter_bash

        self.parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        self.lock = threading.Lock()


@functools.cache
def bash_parser() -> _Bash:
    """The one accessor of tree-sitter: it is imported on the first parse (start-up cost)."""
    return _Bash()


#: Every non-ASCII byte becomes "x" before parsing. tree-sitter-bash's scanner calls isalpha()
#: and friends on raw code points, which is undefined above 255 and segfaults the process on
#: some inputs. Non-ASCII characters are ordinary word characters to bash, so "x" keeps the
#: tokens (and the byte offsets) the same; texts are always read from the original bytes.
_ASCII_ONLY = bytes(range(128)) + b"x" * 128


def parse(text: str) -> tuple[Node, bytes]:
    """The syntax tree of a script, and the bytes its node offsets index into."""
    bash = bash_parser()
    source = text.encode("utf-8", "surrogatepass")
    data = source.translate(_ASCII_ONLY)
    with bash.lock:
        root = bash.parser.parse(data).root_node
        for _ in range(4):  # `! ! { a; }` needs two rounds
            spans = _misparsed_keywords(root) if b"time" in data or b"!" in data else []
            if not spans:
                break
            blanked, ascii_blanked = bytearray(source), bytearray(data)
            for start, end in spans:
                blanked[start:end] = ascii_blanked[start:end] = b" " * (end - start)
            source, data = bytes(blanked), bytes(ascii_blanked)
            root = bash.parser.parse(data).root_node
    return root, source


_RESERVED = frozenset({b"{", b"for", b"while", b"until", b"if", b"case", b"select", b"[[", b"!"})


def _misparsed_keywords(root: Node) -> list[tuple[int, int]]:
    """`time { a; }`, `! if ...`: tree-sitter-bash takes the keyword `time` for a command, and
    after `time` or `!` breaks a compound command apart. Neither keyword changes what the
    command does to files: blank them and re-parse."""
    spans, stack = [], [root]
    while stack:
        node = stack.pop()
        children = node.named_children
        stack.extend(children)
        if node.type == "negated_command" and children and children[0].type == "command":
            name = children[0].named_children[0] if children[0].named_child_count else None
            if name is not None and _first_token(name.text) in _RESERVED:
                spans.append((node.start_byte, node.start_byte + 1))
        if node.type != "command" or len(children) < 2 or children[0].text != b"time":
            continue
        name, *args = children
        end = name.end_byte
        if args[0].text == b"-p" and len(args) > 1:
            end, args = args[0].end_byte, args[1:]
        if (
            args[0].type in ("subshell", "compound_statement")
            or _first_token(args[0].text) in _RESERVED
        ):
            spans.append((name.start_byte, end))
    return spans


def _first_token(text: bytes | None) -> bytes:
    """`{ [[` (tree-sitter glues a misparsed group into one word): its first token."""
    return (text or b"").split(maxsplit=1)[0] if (text or b"").strip() else b""


def really_broken(root: Node) -> bool:
    """has_error, except for `x=1 > f`: tree-sitter-bash wants a command name there and
    inserts an empty (MISSING) one, but bash accepts it."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or (node.is_missing and not _missing_name_is_benign(node)):
            return True
        stack.extend(node.children)
    return False


def _missing_name_is_benign(node: Node) -> bool:
    name = node.parent
    command = name.parent if name is not None else None
    if node.type != "word" or name is None or command is None or name.type != "command_name":
        return False
    return any(child.type in ("variable_assignment", "file_redirect") for child in command.children)


def node_text(node: Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")
