"""Secrets by the name they are given: the value assigned to a key that names a secret, whatever
the value looks like (`password: hunter2`, `AWS_SECRET_ACCESS_KEY=...`, `"api_key": "..."`,
`--token VALUE`). Used by redact.py; the rules are in docs/policy.md ("Secrets").

The regexes find only the key's last word and its separator; the key's start and the value's
extent are found here, so a key that names no secret costs one failed check and never hides a
secret after it on the same line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

LABEL = "secret-assignment"
MARKER = f"[REDACTED:{LABEL}]"
#: Words that name a secret wherever they end a key (PGPASSWORD, csrftoken, clientSecret).
DISTINCT = frozenset(
    {"password", "passwd", "passphrase", "secret", "token", "credential", "credentials"}
    | {"apikey", "authorization", "key_base"}
)
#: What may come before `key` for it to name a secret (api_key, AccessKey, x-api-key).
KEY_QUALIFIERS = frozenset(
    {"api", "access", "private", "secret", "signing", "encryption", "master", "account"}
    | {"auth", "license", "client", "storage", "subscription", "consumer", "app", "shared"}
    | {"hmac", "session", "jwt", "webhook"}
)
WORDS = (
    *("password", "passwd", "passphrase", "pass", "pwd", "secret", "token", "credential"),
    *("credentials", "apikey", "authorization", "auth", "pat", "key", "key_base"),
)


def _cases(word: str) -> tuple[str, ...]:
    return word, word.upper(), word.capitalize()


def _trie(words: set[str]) -> str:
    """One regex for a set of words, as a trie (`p(?:ass(?:word|wd)?|wd)`): where an
    alternation of words would try each at every position, this fails on the first letter."""
    if "" in words and len(words) == 1:
        return ""
    ending = "" in words
    heads: dict[str, set[str]] = {}
    for word in words - {""}:
        heads.setdefault(word[0], set()).add(word[1:])
    branches = [re.escape(head) + _trie(rest) for head, rest in sorted(heads.items())]
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if ending else body


#: A separator and the key's last word before it, read backwards: the scan starts only at
#: `:` and `=` (rare next to letters), where a forward scan would start at every p, s, t or k.
#: The lookbehind is the forward `(?![=>~])`: not `==`, `=>`, `=~` (after the separator, so
#: that the scan still skips to the next `:` or `=`).
BACKWARDS = re.compile(
    r"(?P<sep>=:|[:=](?<![=>~][:=]))[ \t]*(?P<kq>[\"']?)(?P<word>"
    + _trie({case[::-1] for word in WORDS for case in _cases(word)})
    + r")(?P<rest>[\w.-]*)",  # the rest of the key, backwards: where it starts
    re.ASCII,
)
#: `--token VALUE`: an option and its argument, for a command line.
OPTION = re.compile(
    r"--(?=[A-Za-z])[\w-]*?(?P<word>"
    + _trie({case for word in WORDS for case in _cases(word)})
    + r")[ \t]+(?=[^\s=-])",
    re.ASCII,
)
_BARE_STOP = re.compile(r"[\s;&|\"'`<>]", re.ASCII)
_JSON_STOP = re.compile(r"[\s,}\]]", re.ASCII)
_REFERENCE = re.compile(r"\$(?:\w+|\{\w+\})")
_SPACE = re.compile(r"\s", re.ASCII)
_SPACES = re.compile(r"[ \t]*")
_DOUBLE = re.compile(r'(?:[^"\\\n]|\\.)*')  # inside "...", escapes kept together
_SINGLE = re.compile(r"[^'\n]*")
_LEAD = re.compile(r"(?:[^\s:]+:\d+:)?[ \t\-+#*>]*")
_WORD_STOP = re.compile(r"[\s,;)}\]\"'`]", re.ASCII)
PROSE_KEYS = frozenset({"pass", "auth"})
PROSE_WORD = 8  # a plain word this short after a bare `pass:` mid-line is prose
#: A type annotation, not a value: `def login(password: str)`, `token: Optional[str] = None`.
ANNOTATION = re.compile(
    r"(?:str|int|bytes|bool|float|string|number|boolean|any|object|None|SecretStr)"
    r"|(?:Optional|list|List|Secret)\[[\w.]*"
)
LEAD = 256  # how far back a key may be indented
_BLOCK = frozenset({"|", ">", "|-", ">-", "|+", ">+"})
_SPLIT = re.compile(r"[_.-]+|(?<=[a-z0-9])(?=[A-Z])")


#: A key and how it is assigned: (key start, word start, word end, where the value may
#: start, the separator or "" for `--option VALUE`, spaces after it, a quoted key).
Found = tuple[int, int, int, int, str, bool, bool]


def candidates(text: str) -> list[Found]:
    """Every `key[quote][spaces](: or =)` whose key ends in a word of WORDS, and every
    `--option VALUE` whose option does, in the text's order."""
    found: list[Found] = []
    size = len(text)
    for match in BACKWARDS.finditer(text[::-1]):
        sep_at = size - 1 - match.start("sep")
        after = _end(_SPACES, text, sep_at + 1)
        word = size - match.end("word"), size - match.start("word")
        spaced, quoted = after > sep_at + 1, match.start("word") > match.start("kq")
        sep = match.group("sep")[::-1]  # `:=` (Go, Make, Pascal) read forwards
        found.append((size - match.end(), *word, after, sep, spaced, quoted))
    found.reverse()
    if "--" in text:
        options = OPTION.finditer(text)
        more = [
            (m.start(), m.start("word"), m.end("word"), m.end(), "", True, False) for m in options
        ]
        found = sorted(found + more) if more else found
    return found


def scrub_assignments(text: str, keep: Callable[[str], bool]) -> tuple[str, int]:
    """`text` with each secret value replaced by MARKER; `keep(value)` spares a value (one
    that already is a marker)."""
    pieces, last, count = [], 0, 0
    for found in candidates(text):
        if found[1] < last:
            continue  # inside a value just replaced
        span = secret_value(text, found)
        if span is None or span[0] >= span[1]:
            continue
        if text.startswith("[REDACTED:", span[0]):  # a marker is one value, brackets and all
            span = span[0], max(span[1], text.find("]", span[0]) + 1)
        value = text[span[0] : span[1]]
        if keep(value) or _REFERENCE.fullmatch(value):
            continue
        pieces += [text[last : span[0]], MARKER]
        last, count = span[1], count + 1
    if not count:
        return text, 0
    pieces.append(text[last:])
    return "".join(pieces), count


#: `<password>VALUE</password>`: an XML element whose name names a secret (Maven's settings,
#: .NET config), its text up to the closing tag.
ELEMENT = re.compile(
    r"<(?P<key>[\w.:-]{0,64}?(?P<word>"
    + _trie({case for word in WORDS for case in _cases(word)})
    + r"))(?:[ \t][^<>\n]{0,256})?>(?P<s>[^<\n]{1,4096})</(?P=key)[ \t]*>",
    re.ASCII,
)


def scrub_elements(text: str, keep: Callable[[str], bool]) -> tuple[str, int]:
    """`text` with the text of each secret-naming XML element replaced by MARKER."""
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        value = match.group("s")
        key = match.group("key").rpartition(":")[2]  # a namespace prefix names nothing
        if not names_secret(key, match.group("word")) or keep(value) or not value.strip():
            return match.group(0)
        count += 1
        start, end = match.start("s") - match.start(), match.end("s") - match.start()
        return match.group(0)[:start] + MARKER + match.group(0)[end:]

    out = ELEMENT.sub(replace, text)
    return (out, count) if count else (text, 0)


def names_secret(key: str, word: str) -> bool:
    """Whether a key whose last word is `word` names a secret (see DISTINCT, KEY_QUALIFIERS)."""
    lowered = word.lower()
    if lowered in DISTINCT:
        return True
    before = key[: len(key) - len(word)].lstrip("-")
    if before and before[-1] not in "_.-" and not (before[-1].islower() and word[0].isupper()):
        return False  # inside a word: bypass, compass, monkey
    parts = [part.lower() for part in _SPLIT.split(before) if part]
    if lowered == "key":
        return bool(parts) and parts[-1] in KEY_QUALIFIERS
    if lowered in ("pwd", "pat"):
        return bool(parts)  # MYSQL_PWD, GITHUB_PAT; PWD alone is the working directory
    return True  # pass, auth


def secret_value(text: str, found: Found) -> tuple[int, int] | None:
    """Where the value assigned at `found` lies, when its key names a secret."""
    start, word_start, word_end, at, sep, spaced, quoted_key = found
    key = text[start:word_end]
    if not names_secret(key, text[word_start:word_end]):
        return None
    if not sep:  # `--token VALUE`: a command-line option and its argument
        return _word(text, at) if key.startswith("--") else None
    if sep == "=" and not spaced:  # KEY=VALUE: env, shell, --opt=, ?query=
        return _quoted(text, at) or _until(text, at, _BARE_STOP)
    if quoted_key:  # "key": value, as in JSON
        return _quoted(text, at) or _until(text, at, _JSON_STOP)
    opening = text[start - 1] if start else "\n"
    if opening in "\"'":  # -H "X-Api-Key: VALUE": up to the closing quote
        return at, _end(_DOUBLE if opening == '"' else _SINGLE, text, at)
    if sep != "=" and key.startswith("-"):
        return None
    if not _at_line_start(text, start):  # `log: password: VALUE`: one word (not a type)
        span = _quoted(text, at) or _until(text, at, _WORD_STOP)
        if ANNOTATION.fullmatch(text, *span) or _prose(key, text[span[0] : span[1]]):
            return None
        return span
    return _quoted(text, at) or _rest_of_line(text, at, start - text.rfind("\n", 0, start) - 1)


def _prose(key: str, value: str) -> bool:
    """`the tests pass: run them`: in the middle of a line, a bare `pass` or `auth` followed by
    a short plain word is English, not a secret (`pass: hunter2` and `db_pass: x` still are)."""
    return key.lower() in PROSE_KEYS and value.isalpha() and len(value) < PROSE_WORD


def _at_line_start(text: str, start: int) -> bool:
    """Only indentation, a list dash, a comment, quote or diff sign, or grep's `file:12:`,
    before `start` on its line (looked for a bounded way back: a long line costs no more)."""
    lead = max(0, start - LEAD)
    line = text.rfind("\n", lead, start) + 1 or lead
    return (line > 0 or lead == 0) and _LEAD.fullmatch(text, line, start) is not None


def _quoted(text: str, at: int) -> tuple[int, int] | None:
    """The inside of a quoted value starting at `at` (to the line's end if never closed)."""
    if at >= len(text) or text[at] not in "\"'":
        return None
    return at + 1, _end(_DOUBLE if text[at] == '"' else _SINGLE, text, at + 1)


def _end(pattern: re.Pattern[str], text: str, at: int) -> int:
    """Where a pattern that matches the empty string too stops matching from `at`."""
    found = pattern.match(text, at)
    return found.end() if found is not None else at


def _until(text: str, at: int, stop: re.Pattern[str]) -> tuple[int, int]:
    found = stop.search(text, at)
    return at, found.start() if found else len(text)


def _word(text: str, at: int) -> tuple[int, int]:
    return _quoted(text, at) or _until(text, at, _SPACE)


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _rest_of_line(text: str, at: int, indent: int) -> tuple[int, int]:
    """To the end of the line (trailing spaces, commas and semicolons left), and for a YAML
    block scalar (`password: |`) every more indented line after it."""
    end = _line_end(text, at)
    value = text[at:end].rstrip(" \t\r,;")
    if value not in _BLOCK:
        return at, at + len(value)
    while end < len(text):
        following = _line_end(text, end + 1)
        line = text[end + 1 : following]
        if line.strip() and len(line) - len(line.lstrip(" \t")) <= indent:
            break
        end = following
    return at, end
