"""Reading a policy file: bytes, TOML, the shape of every rule, and where each thing is written.

`tomllib` does not say where a value was written, so `Spots` scans the text once for table
headers and keys (skipping multi-line strings): enough to give every fault its line.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from ..core import TomlError, TooLarge, loads, read_regular
from .cel import compile_rules
from .extras import read_extras, resolve_signers
from .rules import DECISIONS, Policy, PolicyError, check_facts, short_repr
from .spec import Errors, Example, RuleSpec, Spots

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

MAX_BYTES = 256 << 10
MAX_CONDITIONS = 64 << 10  # characters of CEL in all: checking costs ~50 us each
MAX_EXAMPLES = 1000
MAX_ERRORS = 50
TOP_KEYS = (
    *("default", "default_message", "rule", "approval", "secrets", "sandbox", "hook"),
    "supervisor",
)
RULE_KEYS = (
    "id",
    "when",
    "decision",
    "message",
    "allowed_signers",
    "example",
    "examples_match",
    "examples_no_match",
)
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}")
_TOML_WHERE = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)\s*$")


def read_policy(path: Path, origin: Path | None = None) -> Policy:
    """Read `path`; `origin` (default: `path`) is where the policy lives: its name in the
    record, and the folder its relative allowed_signers paths are beside (a session going on
    under the policy it recorded reads the record's copy of a file that has since changed)."""
    origin = path if origin is None else origin
    source = str(origin)
    try:
        data = read_regular(path, MAX_BYTES)
    except TooLarge:
        raise PolicyError(f"{source}:1: the policy is larger than {MAX_BYTES} bytes") from None
    except OSError as error:
        raise PolicyError(f"{source}: cannot read the policy: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise PolicyError(
            f"{source}:{line}: not UTF-8 text (byte 0x{data[error.start]:02x}); "
            "a policy is a TOML file"
        ) from None
    try:
        document = loads(text)
    except TomlError as error:
        raise PolicyError(_toml_error(source, str(error), text)) from None
    except RecursionError:
        raise PolicyError(f"{source}:1: TOML syntax: the file nests too deeply") from None
    spots = Spots(text)
    errors: Errors = []
    default, default_message = _read_top(document, spots, errors)
    specs = _read_rules(document, spots, errors)
    rules, prepare = compile_rules(specs, errors)
    extras = read_extras(document, spots, errors)
    signers = resolve_signers(origin, specs, extras, spots, errors)
    rules = [rule.with_signers(signers.get(rule.id)) for rule in rules]
    if errors:
        lines = list(dict.fromkeys(f"{source}:{line}: {text}" for line, text in sorted(errors)))
        if len(lines) > MAX_ERRORS:
            more = f"{source}: ... and {len(lines) - MAX_ERRORS} more problem(s)"
            lines = [*lines[:MAX_ERRORS], more]
        raise PolicyError("\n".join(lines))
    digest = hashlib.sha256(data).hexdigest()
    return Policy(source, digest, tuple(rules), default, default_message, prepare, **extras)


def _toml_error(source: str, message: str, text: str) -> str:
    where = _TOML_WHERE.search(message)
    problem = message[: where.start()] if where else message
    if where and where.group(1):
        return f"{source}:{where[1]}: TOML syntax: {problem} (column {where[2]})"
    return f"{source}:{text.count(chr(10)) + 1}: TOML syntax: {problem} (at the end of the file)"


def _read_top(document: dict[str, Any], spots: Spots, errors: Errors) -> tuple[str, str]:
    for key in document:
        if key not in TOP_KEYS:
            errors.append(
                (
                    spots.top.get(key, 1),
                    f"unknown top-level key {key!r} (a policy has {', '.join(TOP_KEYS)})",
                )
            )
    default = document.get("default")
    if default is None:
        errors.append((1, f'no `default` decision: add `default = "ask"` ({_choices()})'))
    elif default not in DECISIONS:
        errors.append(
            (spots.top.get("default", 1), f"unknown default {short_repr(default)} ({_choices()})")
        )
    message = document.get("default_message", "")
    if not isinstance(message, str):
        errors.append((spots.top.get("default_message", 1), "`default_message` must be a string"))
    if isinstance(default, str) and default in DECISIONS and isinstance(message, str):
        return default, message
    return "deny", ""


def _choices() -> str:
    return "allow, deny or ask"


def _read_rules(document: dict[str, Any], spots: Spots, errors: Errors) -> list[RuleSpec]:
    raw_rules = document.get("rule", [])
    if not isinstance(raw_rules, list):
        errors.append((spots.top.get("rule", 1), "`rule` must be an array of tables: [[rule]]"))
        return []
    specs: list[RuleSpec] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_rules):
        line = spots.rule(index)
        if not isinstance(raw, dict):
            errors.append((line, f"rule #{index + 1} is not a table; write it as [[rule]]"))
            continue
        spec = _read_rule(index, raw, spots, errors)
        if spec is None:
            continue
        if spec.id in seen:
            errors.append((line, f"duplicate rule id {spec.id!r} (first at line {seen[spec.id]})"))
            continue
        seen[spec.id] = line
        specs.append(spec)
    size = sum(len(spec.when) for spec in specs)
    examples = sum(len(spec.examples) for spec in specs)
    if size > MAX_CONDITIONS or examples > MAX_EXAMPLES:
        errors.append(
            (
                1,
                f"the policy is too big to check: {size} characters of conditions (limit "
                f"{MAX_CONDITIONS}), {examples} examples (limit {MAX_EXAMPLES})",
            )
        )
        return []
    return specs


def _read_rule(index: int, raw: dict[str, Any], spots: Spots, errors: Errors) -> RuleSpec | None:
    line = spots.rule(index)
    before = len(errors)
    rule_id = raw.get("id")
    name = f"rule {short_repr(rule_id)}" if isinstance(rule_id, str) else f"rule #{index + 1}"
    for key in raw:
        if key not in RULE_KEYS:
            where = spots.rule(index, key)
            errors.append(
                (where, f"{name}: unknown key {key!r} (a rule has {', '.join(RULE_KEYS)})")
            )
    if rule_id is None:
        errors.append((line, f"{name} has no `id`"))
    elif not isinstance(rule_id, str) or not _ID.fullmatch(rule_id):
        errors.append(
            (
                spots.rule(index, "id"),
                f"{name}: `id` must be a short name of letters, "
                "digits and - _ . : (starting with a letter or digit)",
            )
        )
    when, decision = raw.get("when"), raw.get("decision")
    if when is None:
        errors.append((line, f"{name} has no `when` condition"))
    elif not isinstance(when, str):
        errors.append((spots.rule(index, "when"), f"{name}: `when` must be a string of CEL"))
    if decision is None:
        errors.append((line, f"{name} has no `decision` ({_choices()})"))
    elif decision not in DECISIONS:
        where = spots.rule(index, "decision")
        errors.append((where, f"{name}: unknown decision {short_repr(decision)} ({_choices()})"))
    message = raw.get("message", "")
    if not isinstance(message, str):
        errors.append((spots.rule(index, "message"), f"{name}: `message` must be a string"))
    examples = _read_examples(index, name, raw, spots, errors)
    fields = (rule_id, when, decision, message)
    if len(errors) > before or not all(isinstance(value, str) for value in fields):
        return None
    signers = raw.get("allowed_signers")
    if signers is not None and (not isinstance(signers, str) or not signers.strip()):
        errors.append(
            (spots.rule(index, "allowed_signers"), f"{name}: `allowed_signers` is a path")
        )
        return None
    when_line = spots.rule(index, "when@")
    rule_id, when, decision, message = map(str, fields)
    return RuleSpec(rule_id, when, decision, message, line, when_line, tuple(examples), signers)


def _read_examples(
    index: int, name: str, raw: dict[str, Any], spots: Spots, errors: Errors
) -> list[Example]:
    examples: list[Example] = []
    for key, implied in (("example", None), ("examples_match", True), ("examples_no_match", False)):
        items = raw.get(key, [])
        where = spots.rule(index, key)
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            shape = "[[rule.example]] tables" if implied is None else "an array of inline tables"
            errors.append((where, f"{name}: `{key}` must be {shape}"))
            continue
        for number, item in enumerate(items):
            facts = dict(item)
            label = facts.pop("name", None)
            label = f"example {label!r}" if isinstance(label, str) else f"{key} #{number + 1}"
            if implied is None:
                where = spots.example(index, number)
                match = facts.pop("match", None)
                if not isinstance(match, bool):
                    errors.append(
                        (where, f"{name}: {label} needs `match = true` or `match = false`")
                    )
                    continue
            else:
                match = implied
            problem = check_facts(facts)
            if problem is not None:
                errors.append((where, f"{name}: {label}: {problem}"))
                continue
            examples.append(Example(label, where, facts, match))
    return examples


def load_policy(path: Path) -> Policy:
    """Read, check and compile a policy file; PolicyError lists every fault as file:line."""
    return read_policy(path)
