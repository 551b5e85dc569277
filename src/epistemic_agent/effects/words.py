"""Shell words as the classifier sees them: a literal value when the word is static, else the
literal text it starts with and whether it may split into several words (globs, unquoted
expansions, "$@"), which decides whether it may turn out to be an option."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .core import Word

if TYPE_CHECKING:
    from tree_sitter import Node

_SPECIAL = re.compile(r"[*?\[{\\]")
_ESCAPE = re.compile(r"\\(.)", re.S)
_DQ_ESCAPE = re.compile(r'\\([$`"\\\n])')
_GLOB = re.compile(r"(?<!\\)[*?\[]")
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_EXPANDS = re.compile(r"(?<!\\)[*?\[{]")
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "e": "\x1b"}


def text(node: Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def word(node: Node, src: bytes) -> Word:
    """The literal value of a word, or None when it depends on expansion."""
    kind, raw = node.type, text(node, src)
    if kind == "word":
        return _plain(raw)
    if kind == "raw_string":
        return Word(raw, raw[1:-1])
    if kind == "string":
        parts = node.named_children
        if all(child.type == "string_content" for child in parts):
            return Word(raw, _unquote(raw[1:-1]))
        first = parts[0]
        lead = first.type == "string_content" and first.start_byte == node.start_byte + 1
        many = "$@" in raw or "[@]" in raw
        return Word(raw, None, lead=_unquote(text(first, src)) if lead else "", split=many)
    if kind == "number":
        return Word(raw, raw)
    if kind == "ansi_c_string":
        return Word(raw, _ansi(raw[2:-1]))
    if kind == "concatenation":
        return _concatenation(node, src, raw)
    procsub = kind == "process_substitution"
    return Word(raw, None, procsub=procsub, split=not procsub)


def _plain(raw: str) -> Word:
    if not _SPECIAL.search(raw):
        return Word(raw, raw, tilde=raw.startswith("~"))
    if _GLOB.search(raw) or _BRACE.search(raw):
        found = _EXPANDS.search(raw)
        lead = _ESCAPE.sub(_unescape, raw[: found.start() if found else 0])
        return Word(raw, None, lead=lead, split=True)
    return Word(raw, _ESCAPE.sub(_unescape, raw), tilde=raw.startswith("~"))


def _unescape(match: re.Match[str]) -> str:
    return "" if match.group(1) == "\n" else match.group(1)


def _unquote(inner: str) -> str:
    return _DQ_ESCAPE.sub(_unescape, inner) if "\\" in inner else inner


def _ansi(body: str) -> str | None:
    out, i = [], 0
    while i < len(body):
        if body[i] != "\\":
            out.append(body[i])
            i += 1
        elif body[i + 1 : i + 2] in _ANSI:
            out.append(_ANSI[body[i + 1]])
            i += 2
        else:
            return None  # octal, hex, unicode, control escapes: not worth decoding
    return "".join(out)


def _concatenation(node: Node, src: bytes, raw: str) -> Word:
    parts = node.named_children
    values = [word(part, src) for part in parts]
    unquoted = "".join(text(part, src) for part in parts if part.type == "word")
    braces = bool(_BRACE.search(unquoted))
    if any(v.value is None for v in values) or braces:
        lead = ""
        for value in values:
            lead += value.value if value.value is not None else value.lead
            if value.value is None:
                break
        split = braces or any(v.split for v in values)
        return Word(raw, None, lead="" if braces else lead, split=split)
    tilde = parts[0].type == "word" and raw.startswith("~")
    return Word(raw, "".join(v.value or "" for v in values), tilde=tilde)
