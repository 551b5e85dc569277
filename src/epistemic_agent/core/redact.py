"""Scrubbing secrets (API keys, tokens, passwords, secret environment values, the values of
keys that name a secret) out of text before it is recorded; each is replaced in place by a
marker such as `[REDACTED:openai-key]`."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from . import redact_assign as assign

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

MIN_ENV_VALUE = 8  # shorter values ("1", "true") would wreck the output
_SHORTEST = 8  # no built-in format or environment value is shorter
_MAX_PASSES = 16  # a replacement can expose another secret: rescan until nothing is found
_NAME_ENDS: tuple[str, ...] = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PASS", "_PASSWD")
_NAME_ENDS += ("_PAT", "_CREDENTIAL", "_CREDENTIALS")
_NAME_HAS = ("PASSWORD", "PASSWD", "SECRET", "TOKEN", "APIKEY", "API_KEY")

# Built-in formats, (label, regex), tried in this order at each position. Every regex starts
# with a literal character, so that `re` scans the combined alternation fast for its first
# characters, and checks the word boundary before its prefix by a look-behind after it
# (`(?<!\w.{3})` after "sk-"). `(?P<s>...)` is the part to replace, the rest being context.
# What a failed attempt reads is bounded (the look-aheads, a JWT's header, a PEM block up to
# the next BEGIN): a text full of near misses ("sk-sk-sk-...") costs linear time, not square.
# Tokens have a digit or a capital early on: "sk-learn-..." or "Bearer authentication" do not.
_TOKEN = r"(?=[\w.~+/=-]{0,39}[0-9A-Z])[\w.~+/=-]{16,}"
_USER = r"(?:(?!\[REDACTED:)[^\s:/@])*+"
_PASSWORD = r"(?:(?!\[REDACTED:)[^\s/@])++"
# The lines of a PEM block, after \n (or "\\n" in JSON): a header ("Proc-Type: 4,ENCRYPTED"),
# base64 (a short piece only if a whole line: not a word of prose); blank lines between.
_EOL = r"(?:\r?\n|(?:\\r)?\\n)"
_B64 = r"[A-Za-z0-9+/=]"
_PEM_LINES = rf"(?:{_EOL}+(?:[\w-]+: [^\r\n\\]*|{_B64}{{16,}}|{_B64}+(?={_EOL}|\Z)))*"
_DASH_P = r"[ \t](?:[^\n|;&]{0,512}?[ \t])?-p"  # ` -p` later on the same command
_GLUED = r"(?P<s>(?!\[REDACTED:)[^\s'\"]+)"
_FORMATS = (
    # a block cut short (no END line) still loses the base64 lines that follow its BEGIN
    (
        "private-key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:(?:(?!-----BEGIN )(?s:.))*?"
        r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|" + _PEM_LINES + ")",
    ),
    ("anthropic-key", r"sk-ant-(?<!\w.{7})[\w-]{20,}"),
    ("openai-key", r"sk-(?<!\w.{3})(?=[\w-]{0,39}[0-9A-Z])[\w-]{20,}"),
    ("stripe-key", r"sk_(?:live|test)_(?<!\w.{8})[A-Za-z0-9]{20,}"),
    ("stripe-key", r"rk_(?:live|test)_(?<!\w.{8})[A-Za-z0-9]{20,}"),
    ("aws-access-key-id", r"A(?:KIA|SIA)(?<!\w.{4})[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ("google-api-key", r"AIza(?<!\w.{4})[\w-]{35,}"),
    ("github-token", r"gh[pousr]_(?<!\w.{4})[A-Za-z0-9]{36,}"),
    ("github-token", r"github_pat_(?<!\w.{11})\w{22,}"),
    ("gitlab-token", r"glpat-(?<!\w.{6})[\w-]{20,}"),
    ("slack-token", r"xox[abprs]-(?<!\w.{5})[A-Za-z0-9-]{10,}"),
    ("huggingface-token", r"hf_(?<!\w.{3})[A-Za-z0-9]{30,}"),
    ("jwt", r"eyJ(?<!\w.{3})[\w-]{10,300}+\.[\w-]{10,}+\.[\w-]{10,}"),
    ("bearer-token", r"earer(?<=\b[Bb]earer)[ \t]+(?P<s>" + _TOKEN + ")"),
    ("bearer-token", r"EARER(?<=\bBEARER)[ \t]+(?P<s>" + _TOKEN + ")"),
    ("url-password", r"://(?<=[\w+.-]://)" + _USER + r":(?P<s>" + _PASSWORD + ")@"),
    # a password glued to its option on a command line: mysql -pSECRET, sshpass -p SECRET
    ("command-password", r"mysql(?<!\w.{5})[\w-]*+" + _DASH_P + _GLUED),
    ("command-password", r"mariadb(?<!\w.{7})[\w-]*+" + _DASH_P + _GLUED),
    ("command-password", r"sshpass(?<!\w.{7})" + _DASH_P + r"[ \t]*" + _GLUED),
)
# A text that holds none of these (nor "://" with "@") matches no built-in format: most
# texts are let through without compiling, let alone running, the regex above.
_CLUES = (
    *("-----BEGIN ", "sk-", "k_live_", "k_test_", "AKIA", "ASIA", "AIza", "ghp_", "gho_", "ghu_"),
    *("ghs_", "ghr_", "github_pat_", "glpat-", "xox", "hf_", "eyJ", "Bearer", "bearer", "BEARER"),
    *("mysql", "mariadb", "sshpass"),
)


def secret_name(name: str) -> bool:
    """Whether an environment variable's name says its value is a secret."""
    upper = name.upper()
    return upper.endswith(_NAME_ENDS) or any(word in upper for word in _NAME_HAS)


class Redactor:
    """Replaces secrets in text with `[REDACTED:<label>]`; regexes are compiled on first use."""

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        patterns: Sequence[str] = (),
        names: Sequence[str] = (),
    ) -> None:
        """`environ` None is `os.environ`; `patterns` raise `re.error` on first use if bad."""
        self._environ = os.environ if environ is None else environ
        self._patterns = tuple(patterns)
        self._names = frozenset(names)
        self._env: dict[str, str] | None = None  # secret value -> its marker, read on first use
        self._scans: dict[str, re.Pattern[str]] = {}
        self._policy: list[tuple[re.Pattern[str], str]] | None = None

    def text(self, value: str) -> tuple[str, int]:
        """`value` with every secret replaced by a marker, and how many were replaced."""
        if len(value) < _SHORTEST and not self._patterns:  # most record fields: no secret
            return value, 0
        out, total = value, 0
        for _ in range(_MAX_PASSES):
            out, count = self._pass(out)
            if not count:
                break
            total += count
        if "=" in out or ":" in out or "--" in out:  # last: a marker it leaves exposes nothing
            out, count = assign.scrub_assignments(out, _is_marker)
            total += count
        if "</" in out:
            out, count = assign.scrub_elements(out, _is_marker)
            total += count
        return (out if total else value), total

    def data(self, value: bytes) -> tuple[bytes, int]:
        """The same on bytes: not UTF-8 is no matter, every byte outside a secret is kept."""
        out, count = self.text(value.decode("utf-8", "surrogateescape"))
        return (out.encode("utf-8", "surrogateescape") if count else value), count

    def value(self, obj: object) -> tuple[object, int]:
        """Every str inside dicts, lists and tuples scrubbed (keys are not); the rest as is."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            scrubbed = {key: self.value(item) for key, item in obj.items()}
            total = sum(count for _, count in scrubbed.values())
            return ({key: v for key, (v, _) in scrubbed.items()} if total else obj), total
        if isinstance(obj, list | tuple):
            items = [self.value(item) for item in obj]
            total = sum(count for _, count in items)
            if not total:
                return obj, 0
            values = [v for v, _ in items]
            return (values if isinstance(obj, list) else tuple(values)), total
        return obj, 0

    def _pass(self, text: str) -> tuple[str, int]:
        """Environment values first (whole, whatever their shape), built-in formats, policy.
        (The values of keys that name a secret go after the passes: see `text`.)"""
        count, env = 0, self._secrets()
        contains = text.__contains__  # map() over a C method: no Python frame per clue
        if env and any(map(contains, env)):
            text, count = _scrub(self._scan("env"), text, env)
            contains = text.__contains__
        if any(map(contains, _CLUES)) or (contains("://") and contains("@")):
            text, more = _scrub(self._scan("formats"), text, env)
            count += more
        for pattern, marker in self._policy_patterns():
            text, more = self._policy_pass(pattern, marker, text)
            count += more
        return text, count

    def _policy_pass(self, pattern: re.Pattern[str], marker: str, text: str) -> tuple[str, int]:
        """A policy pattern applied to the text between markers, never across or inside one."""
        count = 0
        secret = "secret" if "secret" in pattern.groupindex else 0

        def replace(match: re.Match[str]) -> str:
            nonlocal count
            span = match.span(secret)
            if span[0] >= span[1]:  # nothing to hide: an empty match or an unmatched group
                return match.group()
            count += 1
            return _splice(match, span, marker)

        parts = self._scan("markers").split(text)  # the markers at odd indices
        parts[::2] = [pattern.sub(replace, part) for part in parts[::2]]
        return ("".join(parts) if count else text), count

    def _secrets(self) -> dict[str, str]:
        """The values of secret environment variables, each with its marker."""
        if self._env is None:
            env: dict[str, str] = {}
            for name, value in sorted(self._environ.items()):  # one value, the first name
                if len(value) >= MIN_ENV_VALUE and (name in self._names or secret_name(name)):
                    env.setdefault(value, f"[REDACTED:env:{_label_name(name)}]")
            self._env = env
        return self._env

    def _policy_patterns(self) -> list[tuple[re.Pattern[str], str]]:
        if self._policy is None:
            numbered = enumerate(self._patterns, 1)
            self._policy = [(re.compile(p), f"[REDACTED:policy:{i}]") for i, p in numbered]
        return self._policy

    def _scan(self, kind: str) -> re.Pattern[str]:
        """The regex for `kind` ("env", "formats" or "markers"), compiled on first use."""
        scan = self._scans.get(kind)
        if scan is not None:
            return scan
        env = self._secrets()
        labels = {label for label, _ in _FORMATS} | {assign.LABEL}
        labels.update(marker[10:-1] for marker in env.values())
        labels.update(f"policy:{i}" for i in range(1, len(self._patterns) + 1))
        marker = rf"\[REDACTED:(?:{'|'.join(map(re.escape, sorted(labels)))})\]"
        if kind == "markers":
            branches = [f"({marker})"]
        elif kind == "env":  # the longest value first, so that one inside another is no matter
            branches = [f"{marker}(?P<keep>)", *map(re.escape, sorted(env, key=len, reverse=True))]
        else:
            numbered = enumerate(_FORMATS)
            formats = (f"{rx.replace('(?P<s>', f'(?P<s{i}>')}(?P<b{i}>)" for i, (_, rx) in numbered)
            branches = [f"{marker}(?P<keep>)", *formats]
        scan = self._scans[kind] = re.compile("|".join(branches), re.ASCII)
        return scan


def _scrub(scan: re.Pattern[str], text: str, env: dict[str, str]) -> tuple[str, int]:
    """One pass of an "env" or "formats" regex: markers kept, the rest replaced by one."""
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        group = match.lastgroup
        if group == "keep":  # a marker already there (its first branch)
            return match.group()
        count += 1
        if group is None:  # the only branches without a group: environment values
            return env[match.group()]
        i = group[1:]
        marker = f"[REDACTED:{_FORMATS[int(i)][0]}]"
        if f"s{i}" in scan.groupindex:
            return _splice(match, match.span(f"s{i}"), marker)
        return marker

    out = scan.sub(replace, text)
    return (out if count else text), count


def _is_marker(value: str) -> bool:
    """Whether a value is scrubbed already: markers and nothing else but spaces, escaped line
    ends and an auth scheme (`Bearer [REDACTED:bearer-token]`); any other text goes."""
    return "[REDACTED:" in value and _SCRUBBED.fullmatch(value) is not None


_SCRUBBED = re.compile(
    r"(?:\s|\\[nrt]|\[REDACTED:[\w:.-]+\]|(?i:bearer|basic|token|digest|negotiate)\b)*"
)


def _splice(match: re.Match[str], span: tuple[int, int], marker: str) -> str:
    """The match with the part at `span` replaced by the marker, the rest kept."""
    whole, base = match.group(), match.start()
    return whole[: span[0] - base] + marker + whole[span[1] - base :]


def _label_name(name: str) -> str:
    """An environment variable's name as it may appear in a marker."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_.-") else "_" for c in name)


def check_patterns(patterns: object) -> list[str]:
    """The problems with a policy file's secret patterns: [] when every one is usable."""
    if not isinstance(patterns, list):
        return [f"patterns must be a list of regular expressions, not {type(patterns).__name__}"]
    problems = []
    for i, pattern in enumerate(patterns, 1):
        if not isinstance(pattern, str):
            problems.append(f"pattern {i}: must be a string, not {type(pattern).__name__}")
            continue
        try:
            compiled = re.compile(pattern)
        except (re.error, OverflowError, RecursionError, ValueError) as error:
            problems.append(f"pattern {i} ({pattern!r}): {error}")
            continue
        if _matches_empty(compiled):
            problems.append(f"pattern {i} ({pattern!r}): matches the empty string")
    return problems


def _matches_empty(pattern: re.Pattern[str]) -> bool:
    """Whether the pattern matches an empty string, alone or somewhere in printable ASCII."""
    sample = "\n" + "".join(map(chr, range(32, 127))) + "\n"
    return pattern.match("") is not None or any(
        m.end() == m.start() for m in pattern.finditer(sample)
    )
