"""Policies: ordered rules with CEL conditions over a call's facts; the first match decides.

A policy file (`epistemic.toml`, see docs/policy.md) is read with `tomllib`, checked in full when
it loads (TOML syntax, the shape of every rule, CEL syntax, unknown variables and functions,
type errors found by evaluating each condition on the default facts, and each rule's examples)
and refused with one `file:line: problem` line per fault. CEL (`celpy`) is imported only while a
file loads: presets and importing this module cost nothing.

At run time a condition that fails to evaluate never lets a call through silently: the rule
counts as matched, and an `allow` rule asks instead (`deny` stays `deny`).
"""

from __future__ import annotations

import hashlib
import re
import shlex
from typing import TYPE_CHECKING

from ..core import (
    ACT_NAMES,
    FILE_TOOL_ACTS,
    POLICY_NAME,
    TOOL_NAMES,
    EpistemicError,
    field,
    is_mutating,
    struct,
)
from ..effects import classifier

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path
    from typing import Any

    from ..effects import Effect
    from .alerts import Hook
    from .supervisor import SupervisorSpec

DECISIONS = ("allow", "deny", "ask")

EFFECTS = ("read-only", "mutating", "unknown")
#: The facts whose values are a closed vocabulary (docs/policy.md, "The facts"): a condition
#: that compares one with any other string can never see it (cel_values.py says so at load).
CLOSED_FACTS: dict[str, tuple[str, ...]] = {"act": ACT_NAMES, "effect": EFFECTS, "tool": TOOL_NAMES}
#: What each fact holds, for the docs and for checking the facts an example gives.
FACT_TYPES: dict[str, str] = {
    "tool": "string",
    "act": "string",
    "mutating": "bool",
    "command": "string",
    "argv0": "string",
    "paths": "list",
    "paths_known": "bool",
    "effect": "string",
    "effect_reasons": "list",
    "reason": "string",
    "seq": "int",
    "counts": "map",
    "reverts": "int",
    "rejections": "int",
    "ticket": "string",
}
_PYTHON_TYPES: dict[str, type[Any]] = {
    "string": str,
    "bool": bool,
    "int": int,
    "list": list,
    "map": dict,
}
_WRAPPERS = frozenset(
    ["sudo", "doas", "env", "nice", "nohup", "time", "command", "exec", "stdbuf", "timeout"]
)
_WRAPPER_VALUE_OPTIONS = frozenset(["-u", "-g", "-n", "-s", "-k"])
# patterns, compiled on first use (re caches them): compiling costs start-up time
_ASSIGNMENT = r"[A-Za-z_][A-Za-z0-9_]*="
_WRAPPER_ARG = r"-.*|\d+(\.\d+)?[smhd]?"
_OPERATOR = r"[();<>|&]+"


class PolicyError(EpistemicError):
    """A policy that cannot be used: one `file:line: problem` line per fault."""

    def lines(self) -> list[str]:
        return self.errors or [str(self)]

    @property
    def errors(self) -> list[str]:
        return str(self).splitlines()


@struct
class Decision:
    """What the policy says about one call: allow, deny or ask; the rule that said it (None for
    the default) and the message for the human or the model."""

    decision: str
    rule: str | None
    message: str


@struct
class Rule:
    """A loaded rule. `test` takes the facts as prepared by the policy and says whether it hits."""

    id: str
    decision: str
    message: str
    when: str
    line: int = 0
    examples: int = 0
    test: Callable[[Any], bool] = field(default=None, compare=False)
    allowed_signers: str | None = None  # this rule's approvers (else the policy's)

    def with_signers(self, signers: str | None) -> Rule:
        if signers is None:
            return self
        fields = (self.id, self.decision, self.message, self.when, self.line, self.examples)
        return Rule(*fields, self.test, signers)


@struct
class Policy:
    """Ordered rules and a default. `source` is the file (or `preset:NAME`); `sha256` hashes its
    bytes (or the preset name) for the session header."""

    source: str
    sha256: str
    rules: tuple[Rule, ...]
    default: str
    default_message: str = ""
    prepare: Callable[[dict[str, Any]], Any] = field(default=None, compare=False)
    hooks: tuple[Hook, ...] = ()  # alerts on events: see alerts.py
    secret_patterns: tuple[str, ...] = ()  # regular expressions scrubbed from the record
    secret_names: tuple[str, ...] = ()  # environment variables whose values are scrubbed
    approval_timeout: float | None = None  # seconds an `ask` waits before it is denied
    approval_channel: str | None = None  # auto, terminal or file
    writable: dict[str, tuple[str, ...]] | None = None  # [sandbox] grants per act (None: default)
    hidden: tuple[str, ...] | None = None  # [sandbox] what no act may see (None: the default)
    allowed_signers: str | None = None  # [approval] who may approve (an allowed_signers file)
    signatures: str = "optional"  # required (files) or optional (presets, or said so)
    require_confinement: tuple[str, ...] = ()  # guarantees without which no session starts
    supervisor: SupervisorSpec | None = None  # [supervisor]: who reviews calls before they run

    def unsigned_asks(self) -> list[str]:
        """What asks a human although nobody may approve: with signatures required, every
        `ask` rule (and an `ask` default) without an allowed_signers file of its own or the
        policy's. A session under such a policy could never accept an answer."""
        if self.signatures != "required" or self.allowed_signers:
            return []
        found = [
            f"rule {rule.id!r}"
            for rule in self.rules
            if rule.decision == "ask" and not rule.allowed_signers
        ]
        return found + (["the default"] if self.default == "ask" else [])

    def check_signers(self) -> None:
        """PolicyError when the policy asks humans but names nobody who may approve."""
        asks = self.unsigned_asks()
        if asks:
            raise PolicyError(
                f"{self.source}: {', '.join(asks)} asks a human, but the policy names nobody "
                'who may approve: add [approval] allowed_signers = "path" (an OpenSSH '
                'allowed_signers file), or say signatures = "optional" to take unsigned answers'
            )

    def signer_files(self) -> list[str]:
        """Every allowed_signers file the policy names, the policy's first."""
        found = [self.allowed_signers, *(rule.allowed_signers for rule in self.rules)]
        return list(dict.fromkeys(path for path in found if path))

    def signers_for(self, rule: str | None) -> str | None:
        """The allowed_signers file that decides who may approve what `rule` asks about."""
        for item in self.rules:
            if item.id == rule and item.allowed_signers:
                return item.allowed_signers
        return self.allowed_signers

    def decide(self, facts: dict[str, Any]) -> Decision:
        """The first rule whose condition holds decides; else the default. Never raises."""
        try:
            full = complete_facts(facts, classify=False)
            subject = full if self.prepare is None else self.prepare(full)
        except Exception as error:
            return Decision("ask", None, f"the call's facts could not be checked ({error})")
        for rule in self.rules:
            try:
                hit = rule.test(subject)
            except Exception as error:  # RecursionError included: fail closed, never silently
                decision = "deny" if rule.decision == "deny" else "ask"
                problem = str(error).split("\n", 1)[0][:200] or type(error).__name__
                return Decision(
                    decision, rule.id, f"rule {rule.id} could not be evaluated ({problem})"
                )
            if hit:
                return Decision(rule.decision, rule.id, rule.message or f"policy rule {rule.id}")
        message = self.default_message or f"no rule matched; the default is {self.default}"
        return Decision(self.default, None, message)


def default_facts() -> dict[str, Any]:
    """The facts of a call that says nothing: the base of examples and of the load-time check."""
    return {
        "tool": "bash",
        "act": "collect-info",
        "mutating": False,
        "command": "",
        "argv0": "",
        "paths": [],
        "paths_known": True,
        "effect": "read-only",
        "effect_reasons": [],
        "reason": "",
        "seq": 1,
        "counts": dict.fromkeys(ACT_NAMES, 0),
        "reverts": 0,
        "rejections": 0,
        "ticket": "",
    }


def call_facts(
    tool: str,
    act: str,
    mutating: bool,
    command: str,
    reason: str,
    paths: list[str],
    effect: str,
    seq: int,
    counts: dict[str, int],
    reverts: int,
    rejections: int,
    effect_reasons: Sequence[str] = (),
    paths_known: bool = True,
    ticket: str = "",
) -> dict[str, Any]:
    """The fact map a condition sees for one call (argv0 is derived from the command)."""
    return {
        "tool": tool,
        "act": act,
        "mutating": bool(mutating),
        "command": command,
        "argv0": first_program(command) if tool == "bash" else "",
        "paths": list(paths),
        "paths_known": bool(paths_known),
        "effect": effect,
        "effect_reasons": list(effect_reasons),
        "reason": reason,
        "seq": int(seq),
        "counts": {**dict.fromkeys(ACT_NAMES, 0), **counts},
        "reverts": int(reverts),
        "rejections": int(rejections),
        "ticket": ticket,
    }


def first_program(command: str) -> str:
    """The program the first simple command runs: `FOO=1 sudo /usr/bin/pip3 install x` -> pip3.

    Leading assignments, the wrappers in `_WRAPPERS` and their options are skipped; the
    directory part is dropped. "" when there is none. Only the first command of a list counts:
    `cd a && npm install` -> cd (conditions that care about the rest use `effect_reasons`)."""
    words: list[str] = []
    try:
        lexer = shlex.shlex(command[:10_000], posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        for word in lexer:
            words.append(word)
            if len(words) >= 64:
                break
    except ValueError:  # an unclosed quote: what came before it still names the program
        words = words or command[:10_000].split()[:64]
    wrapped = False
    for index, word in enumerate(words):
        if word in ("(", "((", "{", "!"):
            continue
        if re.fullmatch(_OPERATOR, word):
            break
        after_value_option = wrapped and index > 0 and words[index - 1] in _WRAPPER_VALUE_OPTIONS
        if re.match(_ASSIGNMENT, word) or after_value_option:
            continue
        if wrapped and re.fullmatch(_WRAPPER_ARG, word):
            continue
        name = word.rstrip("/").rsplit("/", 1)[-1]
        if name in _WRAPPERS:
            wrapped = True
            continue
        return name
    return ""


def check_facts(partial: dict[str, Any]) -> str | None:
    """What is wrong with facts an example or a caller gives, or None."""
    for key, value in partial.items():
        kind = FACT_TYPES.get(key)
        if kind is None:
            return f"unknown fact {key!r} (the facts are {', '.join(FACT_TYPES)})"
        wanted = _PYTHON_TYPES[kind]
        if not isinstance(value, wanted) or (kind == "int" and isinstance(value, bool)):
            article = "an" if kind == "int" else "a"
            return f"fact {key!r} must be {article} {kind}, got {short_repr(value)}"
        if kind == "list" and not all(isinstance(item, str) for item in value):
            return f"fact {key!r} must be a list of strings"
        if kind == "map" and not all(
            k in ACT_NAMES and isinstance(v, int) and not isinstance(v, bool)
            for k, v in value.items()
        ):
            return f"fact 'counts' maps act names ({', '.join(ACT_NAMES)}) to integers"
    for key, allowed in CLOSED_FACTS.items():
        if key in partial and partial[key] not in allowed:
            return (
                f"fact {key!r} must be one of {', '.join(allowed)}; got {short_repr(partial[key])}"
            )
    return None


def short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def paths_known(effect: Effect) -> bool:
    """Whether `paths` is all a command writes or deletes: no path only known at run time
    (`$VAR`, a glob, a substitution) and no effect the analysis cannot tell (an interpreter,
    a script)."""
    return not effect.dynamic and effect.cls != "unknown"


def complete_facts(partial: dict[str, Any], classify: bool = True) -> dict[str, Any]:
    """Partial facts made whole. What is not given is derived where it can be (`mutating` from
    the act, `argv0` from the command, `act` from a file tool; with `classify`, `paths`, `effect`
    and `effect_reasons` from the static effect analysis of a bash command), else defaulted."""
    facts = default_facts()
    facts.update(partial)
    facts["counts"] = {**dict.fromkeys(ACT_NAMES, 0), **partial.get("counts", {})}
    tool, command = facts["tool"], facts["command"]
    if "act" not in partial and tool in FILE_TOOL_ACTS:
        facts["act"] = FILE_TOOL_ACTS[tool]
    if "mutating" not in partial:
        facts["mutating"] = is_mutating(facts["act"])
    if "argv0" not in partial and tool == "bash":
        facts["argv0"] = first_program(command)
    if tool != "bash" and "command" not in partial and facts["paths"]:
        facts["command"] = f"{tool} {facts['paths'][0]}"
    derived: dict[str, Any] = {"effect": "mutating" if facts["mutating"] else "read-only"}
    if classify and tool == "bash" and command.strip():
        effect = classifier()(command)
        derived = {
            "effect": effect.cls,
            "paths": effect.to_json()["paths"],
            "paths_known": paths_known(effect),
            "effect_reasons": list(effect.reasons),
        }
    for key, value in derived.items():
        if key not in partial:
            facts[key] = value
    return facts


def _predicate_test(subject: Any) -> bool:
    return bool(subject["mutating"])


#: Presets: (rules as (id, decision, message), default).
PRESETS: dict[str, tuple[tuple[tuple[str, str, str], ...], str]] = {
    "approve-mutating": ((("mutating", "ask", "every mutating act needs approval"),), "allow"),
    "approve-none": ((), "allow"),
    "read-only": ((("mutating", "deny", "this session may not change anything"),), "allow"),
}


def preset(name: str) -> Policy:
    """A built-in policy: approve-mutating, approve-none or read-only (spaces work too)."""
    key = "-".join(name.strip().lower().split())
    if key not in PRESETS:
        raise PolicyError(f"unknown preset {name!r}; the presets are {', '.join(PRESETS)}")
    rules, default = PRESETS[key]
    loaded = tuple(
        Rule(rule_id, decision, message, "mutating", test=_predicate_test)
        for rule_id, decision, message in rules
    )
    digest = hashlib.sha256(key.encode()).hexdigest()
    return Policy(f"preset:{key}", digest, loaded, default)


def find_policy(workspace: Path) -> Path | None:
    """The workspace's policy file, if it has one: whatever is at its name (a FIFO, a symlink
    loop...) is the policy, which reading then refuses, rather than no policy at all."""
    path = workspace / POLICY_NAME
    return path if path.is_symlink() or path.exists() else None
