"""Policies: loading and checking a file, deciding calls, presets, and `epistemic policy`."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import epistemic_strict
from epistemic_agent.cli import app as cli
from epistemic_agent.policy.file import load_policy
from epistemic_agent.policy.rules import (
    Decision,
    Policy,
    PolicyError,
    call_facts,
    complete_facts,
    find_policy,
    first_program,
    preset,
)

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "policy.md").read_text()
#: The example policy of docs/policy.md: its four rules are the ones the issue asks for.
DOC_POLICY = re.search(r"```toml\n(.*?)```", DOC, re.S).group(1)  # type: ignore[union-attr]
#: The faulty policy whose `policy check` output docs/policy.md shows.
BAD_POLICY = """\
default = "allow"

[[rule]]
id = "changes"
when = "mutating && act in ['change-state', 'revert'"
decision = "ask"

[[rule]]
id = "tests"
when = "act == 'verify' && argv == 'pytest'"
decision = "allow"

[[rule]]
id = "many-setups"
when = "counts.setup > '3'"
decision = "ask"

[[rule]]
id = "installs"
when = "act == 'setup' && argv0 == 'pip'"
decision = "ask"
examples_match = [{ act = "setup", command = "python -m pip install x" }]

[[rule]]
id = "edits"
when = "act == 'chnage-state'"
decision = "ask"
"""


@pytest.fixture(scope="module")
def doc_policy(tmp_path_factory: pytest.TempPathFactory) -> Policy:
    return load_policy(write(tmp_path_factory.mktemp("doc"), DOC_POLICY))


def write(tmp_path: Path, text: str | bytes, name: str = "epistemic.toml") -> Path:
    path = tmp_path / name
    if text == DOC_POLICY:  # it names an allowed_signers file beside it
        (tmp_path / "allowed_signers").write_text("alice@example.com ssh-ed25519 AAAAC3Nza\n")
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def problems(tmp_path: Path, text: str | bytes) -> list[str]:
    """The fault lines of a policy that must not load, without the file name."""
    path = write(tmp_path, text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    lines = caught.value.errors
    assert lines and all(line.startswith(f"{path}:") for line in lines), lines
    return [line[len(f"{path}:") :] for line in lines]


def rule(when: str, decision: str = "ask", rule_id: str = "r", extra: str = "") -> str:
    head = f'default = "allow"\n\n[[rule]]\nid = "{rule_id}"\n'
    return f'{head}when = {when}\ndecision = "{decision}"\n{extra}'


def decide(policy: Policy, **partial: Any) -> Decision:
    return policy.decide(complete_facts(partial))


def run_cli(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    code = cli.main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- the four rules of the issue, as docs/policy.md writes them -------------------------------


@pytest.mark.parametrize(
    ("partial", "expected"),
    [
        ({"act": "change-state", "command": "sed -i s/a/b/ src/app.py"}, ("ask", "changes")),
        ({"act": "revert", "command": "git checkout -- src/app.py"}, ("ask", "changes")),
        ({"tool": "str_replace_edit", "paths": ["src/app.py"]}, ("ask", "changes")),
        ({"act": "cleanup", "command": "rm -f /tmp/x"}, ("allow", None)),
        ({"act": "collect-info", "command": "cat src/app.py"}, ("allow", None)),
    ],
)
def test_change_state_or_revert_needs_approval(
    doc_policy: Policy, partial: dict[str, Any], expected: tuple[str, str | None]
) -> None:
    decision = decide(doc_policy, **partial)
    assert (decision.decision, decision.rule) == expected


@pytest.mark.parametrize(
    ("command", "hit"),
    [
        ("pip install requests", True),
        ("sudo pip3 install requests", True),
        ("python -m pip install -e .", True),
        ("cd web && npm ci", True),
        ("apt-get install -y jq", True),
        ("uv add httpx", True),
        ("cargo install ripgrep", True),
        ("pip list", False),
        ("npm ls", False),
        ("mkdir -p build", False),
    ],
)
def test_setup_may_not_install_packages_without_approval(
    doc_policy: Policy, command: str, hit: bool
) -> None:
    decision = decide(doc_policy, act="setup", command=command)
    assert (decision.rule, decision.decision) == (("installs", "ask") if hit else (None, "allow"))
    # the same install declared as another act is not this rule's business
    assert decide(doc_policy, act="collect-info", command=command).rule != "installs"


@pytest.mark.parametrize(
    ("partial", "denied"),
    [
        ({"act": "change-state", "command": "rm migrations/0001_init.py"}, True),
        ({"act": "cleanup", "command": "echo x > migrations/tmp.sql"}, True),
        ({"act": "setup", "command": "cd migrations && touch x"}, True),
        ({"tool": "write_file", "paths": ["migrations/0002.py"]}, True),
        ({"act": "change-state", "command": "rm src/migrations.py"}, False),
        ({"act": "change-state", "command": "rm old-migrations/x"}, False),
        ({"act": "collect-info", "command": "cat migrations/0001_init.py"}, False),
        ({"tool": "read_file", "paths": ["migrations/0001.py"], "mutating": False}, False),
    ],
)
def test_mutating_acts_under_migrations_are_denied(
    doc_policy: Policy, partial: dict[str, Any], denied: bool
) -> None:
    decision = decide(doc_policy, **partial)
    assert (decision.decision == "deny") == denied
    assert (decision.rule == "no-migrations") == denied


@pytest.mark.parametrize(
    ("act", "reverts", "hit"),
    [
        ("cleanup", 1, True),
        ("setup", 3, True),
        ("cleanup", 0, False),
        ("verify", 1, False),
        ("collect-info", 5, False),
    ],
)
def test_after_the_first_revert_every_mutating_act_asks(
    doc_policy: Policy, act: str, reverts: int, hit: bool
) -> None:
    decision = decide(doc_policy, act=act, command="mkdir -p build", reverts=reverts)
    assert (decision.rule == "after-revert") == hit
    assert decision.decision == ("ask" if hit else "allow")


def test_first_matching_rule_wins(doc_policy: Policy, tmp_path: Path) -> None:
    # after a revert, a change under migrations/ hits both; no-migrations comes first
    decision = decide(doc_policy, act="change-state", command="rm migrations/x", reverts=2)
    assert (decision.decision, decision.rule) == ("deny", "no-migrations")
    text = (
        'default = "deny"\n'
        '[[rule]]\nid = "first"\nwhen = "mutating"\ndecision = "ask"\nmessage = "one"\n'
        '[[rule]]\nid = "second"\nwhen = "true"\ndecision = "allow"\nmessage = "two"\n'
    )
    policy = load_policy(write(tmp_path, text))
    assert decide(policy, act="setup") == Decision("ask", "first", "one")
    assert decide(policy, act="verify") == Decision("allow", "second", "two")


def test_default_decides_when_nothing_matches(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, rule("\"act == 'revert'\"", "deny")))
    assert decide(policy, act="setup") == Decision(
        "allow", None, "no rule matched; the default is allow"
    )
    text = 'default = "ask"\ndefault_message = "nothing allowed this"\n'
    policy = load_policy(write(tmp_path, text))
    assert policy.rules == ()
    assert decide(policy) == Decision("ask", None, "nothing allowed this")


def test_source_and_sha256_of_a_file(tmp_path: Path) -> None:
    path = write(tmp_path, DOC_POLICY)
    policy = load_policy(path)
    assert policy.source == str(path)
    assert policy.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [r.id for r in policy.rules] == ["no-migrations", "after-revert", "installs", "changes"]
    assert [r.line for r in policy.rules] == [4, 15, 33, 51]
    assert find_policy(tmp_path) == path
    assert find_policy(tmp_path / "missing") is None


def test_a_condition_failing_at_run_time_never_allows_silently(tmp_path: Path) -> None:
    # true on the default facts (paths is empty); paths[1] fails when paths has one entry
    when = "\"size(paths) == 0 || paths[1] == 'x'\""
    for decision, expected in (("allow", "ask"), ("ask", "ask"), ("deny", "deny")):
        policy = load_policy(write(tmp_path, rule(when, decision)))
        result = decide(policy, act="change-state", paths=["a"], command="touch a")
        assert (result.decision, result.rule) == (expected, "r")
        assert "could not be evaluated" in result.message


def test_decide_never_raises_on_bad_facts(doc_policy: Policy) -> None:
    for facts in ({"counts": "x"}, {"paths": None}, {"mutating": object()}, {"seq": 10**30}):
        assert doc_policy.decide(facts).decision in ("allow", "deny", "ask")


# -- examples ----------------------------------------------------------------------------------


def test_examples_are_checked_when_the_policy_loads(tmp_path: Path) -> None:
    extra = 'examples_match = [{ act = "setup" }, { act = "verify" }]\n'
    assert problems(tmp_path, rule("\"act == 'setup'\"", extra=extra)) == [
        '7: rule \'r\': examples_match #2 {"act": "verify"} should match, '
        "but the condition is false"
    ]
    extra = '\n[[rule.example]]\nname = "a setup"\nact = "setup"\nmatch = false\n'
    assert problems(tmp_path, rule("\"act == 'setup'\"", extra=extra)) == [
        "8: rule 'r': example 'a setup' {\"act\": \"setup\"} should not match, "
        "but the condition is true"
    ]


def test_examples_fill_in_facts_from_the_command(tmp_path: Path) -> None:
    extra = (
        'examples_match = [{ act = "setup", command = "FOO=1 sudo /usr/bin/pip3 install x" }]\n'
        'examples_no_match = [{ act = "setup", argv0 = "npm", command = "pip list" }]\n'
    )
    policy = load_policy(
        write(tmp_path, rule("\"argv0 == 'pip3' && effect == 'mutating'\"", extra=extra))
    )
    assert policy.rules[0].examples == 2


@pytest.mark.parametrize(
    ("example", "problem"),
    [
        ('{ act = "setup", colour = "red" }', "unknown fact 'colour'"),
        ('{ act = "setup", mutating = "yes" }', "fact 'mutating' must be a bool"),
        ('{ act = "setup", seq = true }', "fact 'seq' must be an int"),
        ('{ act = "setup", paths = [1] }', "fact 'paths' must be a list of strings"),
        ('{ act = "set-up" }', "fact 'act' must be one of"),
        ("{ counts = { nope = 1 } }", "fact 'counts' maps act names"),
        ('{ tool = "rm" }', "fact 'tool' must be one of"),
    ],
)
def test_malformed_examples_are_refused(tmp_path: Path, example: str, problem: str) -> None:
    [line] = problems(tmp_path, rule('"true"', extra=f"examples_match = [{example}]\n"))
    assert line.startswith("7: rule 'r': examples_match #1: ") and problem in line


def test_an_example_table_needs_match(tmp_path: Path) -> None:
    extra = '\n[[rule.example]]\nact = "setup"\n'
    assert problems(tmp_path, rule('"true"', extra=extra)) == [
        "8: rule 'r': example #1 needs `match = true` or `match = false`"
    ]


# -- faults, each with its line ----------------------------------------------------------------


def test_the_docs_fault_listing(tmp_path: Path) -> None:
    assert problems(tmp_path, BAD_POLICY) == [
        "5: rule 'changes': CEL syntax error at column 37: unexpected end of the condition; "
        "expected ')' or ',' or ']'",
        "10: rule 'tests': unknown variable 'argv'; the facts are tool, act, mutating, command, "
        "argv0, paths, paths_known, effect, effect_reasons, reason, seq, counts, reverts, "
        "rejections, ticket",
        "15: rule 'many-setups': type error in `counts.setup > '3'`: found no matching overload "
        "for > applied to '(int, string)'",
        '22: rule \'installs\': examples_match #1 {"act": "setup", "command": "python -m pip '
        'install x"} should match, but the condition is false',
        "26: rule 'edits': `act` is never 'chnage-state' (the acts are collect-info, "
        "test-hypothesis, verify, change-state, setup, revert, cleanup). Did you mean "
        "'change-state'?",
    ]


ACTS = "collect-info, test-hypothesis, verify, change-state, setup, revert, cleanup"
NEVER_ACT = f"`act` is never 'chnage-state' (the acts are {ACTS}). Did you mean 'change-state'?"
NO_KEY = f"`counts` has no key 'setpu' (its keys are the acts: {ACTS}). Did you mean 'setup'?"


@pytest.mark.parametrize(
    ("when", "problem"),
    [
        ("act == 'chnage-state'", NEVER_ACT),
        ("'chnage-state' == act", NEVER_ACT),
        ("act != 'chnage-state'", NEVER_ACT),
        ('(act) == "chnage-state"', NEVER_ACT),
        ("mutating && act in ['revert', 'chnage-state']", NEVER_ACT),
        ("tool == 'bsh'", "`tool` is never 'bsh' (the tools are bash, read_file, write_file, "
         "str_replace_edit). Did you mean 'bash'?"),
        ("effect == 'mutatin'", "`effect` is never 'mutatin' (the effects are read-only, "
         "mutating, unknown). Did you mean 'mutating'?"),
        ("counts['setpu'] > 0", NO_KEY),
        ("counts.setpu > 0", NO_KEY),
        ("'setpu' in counts", NO_KEY),
        ("act == 'deploy'", f"`act` is never 'deploy' (the acts are {ACTS})."),
    ],
)  # fmt: skip
def test_a_literal_a_fact_can_never_hold_is_a_fault(
    tmp_path: Path, when: str, problem: str
) -> None:
    """Each of these type-checks and evaluates; each rule would silently never match (or,
    with !=, always match): the policy does not load, and says which value was meant."""
    assert problems(tmp_path, rule(json.dumps(when))) == [f"5: rule 'r': {problem}"]


@pytest.mark.parametrize(
    "when",
    [
        "act == 'change-state' && tool != 'bash' && effect in ['unknown', 'mutating']",
        "counts['setup'] > 0 && counts.revert == 0 && 'cleanup' in counts",
        "paths.exists(act, act == 'src/x')",  # `act` is the macro's variable here
        "argv0 == 'chnage-state' || ticket == 'deploy' || reason.contains('setpu')",
        'r\'verify\' == act || act == """setup"""',
    ],
)
def test_literals_a_fact_can_hold_load(tmp_path: Path, when: str) -> None:
    assert load_policy(write(tmp_path, rule(json.dumps(when)))).rules


def test_a_literal_fault_names_its_line_in_a_multi_line_condition(tmp_path: Path) -> None:
    when = "'''\nmutating &&\n  tool == 'bash' &&\n  act in ['setup',\n 'chnage-state']\n'''"
    assert problems(tmp_path, rule(when)) == [f"9: rule 'r': {NEVER_ACT}"]


def test_policy_check_refuses_a_rule_that_can_never_match(ws: Path) -> None:
    (ws / "epistemic.toml").write_text(rule(json.dumps("act == 'chnage-state'"), "deny"))
    done = epistemic_strict("policy", "check", "-C", str(ws))
    assert done.returncode == 1 and done.stdout == "", done
    assert done.stderr == f"{ws / 'epistemic.toml'}:5: rule 'r': {NEVER_ACT}\n"
    (ws / "epistemic.toml").write_text(rule(json.dumps("act == 'change-state'"), "deny"))
    done = epistemic_strict("policy", "check", "-C", str(ws))
    assert done.returncode == 0 and done.stdout.endswith("ok\n"), done


def test_toml_syntax_error_has_its_line(tmp_path: Path) -> None:
    assert problems(tmp_path, 'default = "allow"\n\n[[rule]\nid = "x"\n') == [
        "3: TOML syntax: Expected ']]' at the end of an array declaration (column 7)"
    ]
    [line] = problems(tmp_path, 'default = "allow"\nx = "unterminated\n')
    assert line.startswith("2: TOML syntax: ")


def test_cel_errors_point_into_multi_line_conditions(tmp_path: Path) -> None:
    when = "'''\nmutating &&\n  act == 'setup' &&\n  frobnicate(act)\n'''"
    assert problems(tmp_path, rule(when)) == ["8: rule 'r': unknown function 'frobnicate'"]
    when = '"""\nmutating &&\n  (act == \'setup\'\n"""'
    [line] = problems(tmp_path, rule(when))
    assert line.startswith("7: rule 'r': CEL syntax error at column ")
    when = "'''\nmutating &&\n  typo\n'''"
    [line] = problems(tmp_path, rule(when))
    assert line.startswith("7: rule 'r': unknown variable 'typo'")


@pytest.mark.parametrize(
    ("when", "problem"),
    [
        ('"mutating || typo"', "unknown variable 'typo'"),  # || never looks at it
        ('"false && act == 1"', "type error in `act == 1`"),  # && never looks at it
        ('"mutating ? act.startsWith(1) : false"', "type error in `act.startsWith(1)`"),
        ('"mutating || act"', "`act` is a string; &&, || and ?: need a bool"),
        ('"counts.setup + 1"', "the condition gives an int, not a bool"),
        ("\"paths[0] == 'x'\"", "fails on the default facts"),
        ("\"command.matches('(')\"", "bad regular expression '('"),
        ('"act.frob()"', "unknown function 'frob'"),
        ('""', "the condition is empty"),
        ('"act =="', "CEL syntax error at column 5: unexpected end of the condition"),
        ('"act @ 1"', "CEL syntax error at column 5: unexpected character '@'"),
    ],
)
def test_condition_faults(tmp_path: Path, when: str, problem: str) -> None:
    [line] = problems(tmp_path, rule(when))
    assert line.startswith("5: rule 'r': ") and problem in line, line


def test_conditions_that_are_fine(tmp_path: Path) -> None:
    conditions = [
        "size(paths) > 0 && paths[0] == 'x'",
        "paths.all(p, p.endsWith('.md')) && counts['setup'] < 3",
        "'verify' in counts && counts.verify >= 0 && has(counts.setup)",
        "seq > 100 || rejections > 5 || reason.contains('urgent')",
        "command.matches('^git (push|reset)') || tool != 'bash'",
        "effect == 'unknown' ? act != 'collect-info' : false",
        "paths.exists_one(p, p == 'a') || paths.filter(p, p.startsWith('/')).size() > 0",
    ]
    for when in conditions:
        assert load_policy(write(tmp_path, rule(json.dumps(when)))).rules[0].when == when


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ['1: no `default` decision: add `default = "ask"` (allow, deny or ask)']),
        ('default = "maybe"', ["1: unknown default 'maybe' (allow, deny or ask)"]),
        (
            'default = "allow"\ncolour = "red"',
            [
                "2: unknown top-level key 'colour' (a policy has default, default_message, "
                "rule, approval, secrets, sandbox, hook, supervisor)"
            ],
        ),
        ('default = "allow"\n[rule]\nid = "x"', ["2: `rule` must be an array of tables: [[rule]]"]),
        ('default = "allow"\nrule = [1]', ["2: rule #1 is not a table; write it as [[rule]]"]),
        (
            'default = "allow"\n[[rule]]\nid = "a"\nwhen = "true"\ndecision = "block"',
            ["5: rule 'a': unknown decision 'block' (allow, deny or ask)"],
        ),
        (
            'default = "allow"\n[[rule]]\nwhen = "true"\ndecision = "ask"',
            ["2: rule #1 has no `id`"],
        ),
        (
            'default = "allow"\n[[rule]]\nid = "a"\ndecision = "ask"',
            ["2: rule 'a' has no `when` condition"],
        ),
        (
            'default = "allow"\n[[rule]]\nid = "a"\nwhen = "true"',
            ["2: rule 'a' has no `decision` (allow, deny or ask)"],
        ),
        (
            'default = "allow"\n[[rule]]\nid = "a"\nwhen = 1\ndecision = "ask"',
            ["4: rule 'a': `when` must be a string of CEL"],
        ),
        (
            'default = "allow"\n[[rule]]\nid = "a b"\nwhen = "true"\ndecision = "ask"',
            [
                "3: rule 'a b': `id` must be a short name of letters, digits and - _ . : "
                "(starting with a letter or digit)"
            ],
        ),
        (
            'default = "allow"\n[[rule]]\nid = "a"\nwhen = "true"\ndecision = "ask"\n'
            'decison = "deny"',
            [
                "6: rule 'a': unknown key 'decison' (a rule has id, when, decision, message, "
                "allowed_signers, example, examples_match, examples_no_match)"
            ],
        ),
        (
            'default = "allow"\n[[rule]]\nid = "a"\nwhen = "true"\ndecision = "ask"\n'
            '[[rule]]\nid = "a"\nwhen = "false"\ndecision = "deny"',
            ["6: duplicate rule id 'a' (first at line 2)"],
        ),
    ],
)
def test_shape_faults(tmp_path: Path, text: str, expected: list[str]) -> None:
    assert problems(tmp_path, text) == expected


def test_every_fault_is_listed_in_line_order(tmp_path: Path) -> None:
    text = (
        'default = "allow"\n[[rule]]\nid = "a"\nwhen = "typo"\ndecision = "ask"\n'
        '[[rule]]\nid = "b"\nwhen = "true"\ndecision = "nope"\n'
        '[[rule]]\nid = "c"\nwhen = "act +"\ndecision = "ask"\n'
    )
    assert [line.split(":")[0] for line in problems(tmp_path, text)] == ["4", "9", "12"]


# -- hostile input -----------------------------------------------------------------------------


def test_hostile_files_are_refused_with_a_line(tmp_path: Path) -> None:
    binary = bytes(range(256)) * 8
    assert problems(tmp_path, binary) == [  # byte 10 is a newline: 0x80 is on line 2
        "2: not UTF-8 text (byte 0x80); a policy is a TOML file"
    ]
    assert problems(tmp_path, b'default = "allow"\n\xff') == [
        "2: not UTF-8 text (byte 0xff); a policy is a TOML file"
    ]
    [line] = problems(tmp_path, "#!/bin/sh\nrm -rf /\n")
    assert line.startswith("2: TOML syntax: ")
    [line] = problems(tmp_path, b'default = "allow"\x00\n')
    assert line.startswith("1: TOML syntax: ")
    [line] = problems(tmp_path, "x = " + "[" * 5000)
    assert "TOML syntax" in line
    assert problems(tmp_path, "# " + "x" * (300 << 10)) == [
        "1: the policy is larger than 262144 bytes"
    ]


def test_unreadable_paths_are_policy_errors(tmp_path: Path) -> None:
    for path in (tmp_path, tmp_path / "missing.toml"):
        with pytest.raises(PolicyError, match=r"cannot read the policy"):
            load_policy(path)


@pytest.mark.parametrize(
    ("when", "problem"),
    [
        ("(" * 1500 + "true" + ")" * 1500, "the condition nests too deeply"),
        ("!" * 3000 + "true", "the condition nests too deeply"),
        ("[" * 1500 + "]" * 1500 + " == []", "the condition nests too deeply"),
        (" && ".join(["mutating"] * 1100), "the condition is 13196 characters; the limit is 4096"),
    ],
)
def test_huge_expressions_are_refused(tmp_path: Path, when: str, problem: str) -> None:
    [line] = problems(tmp_path, rule(json.dumps(when)))
    assert line == f"5: rule 'r': {problem}"


def test_long_but_legal_conditions_load_quickly(tmp_path: Path) -> None:
    when = " || ".join(["(act == 'revert' && mutating)"] * 160)[:4000].rsplit(" ||", 1)[0]
    policy = load_policy(write(tmp_path, rule(json.dumps(when))))
    assert decide(policy, act="setup").rule is None


def test_too_much_to_check_is_refused(tmp_path: Path) -> None:
    rules = "".join(
        f'[[rule]]\nid = "r{n}"\nwhen = "{"mutating && " * 300}true"\ndecision = "ask"\n'
        for n in range(20)
    )
    [line] = problems(tmp_path, 'default = "allow"\n' + rules)
    assert line.startswith("1: the policy is too big to check: 72080 characters of conditions")


def test_many_faults_are_capped(tmp_path: Path) -> None:
    rules = "".join(f'[[rule]]\nid = "r{n}"\nwhen = "x{n}"\ndecision = "ask"\n' for n in range(80))
    lines = problems(tmp_path, 'default = "allow"\n' + rules)
    assert len(lines) == 51 and lines[-1] == " ... and 30 more problem(s)"


TOKENS = [
    "act", "mutating", "paths", "counts", "seq", "'x'", "1", "2u", "1.5", "b'z'", "true",
    "null", "&&", "||", "!", "==", "<", "+", "/", "%", "in", "(", ")", "[", "]", "{", "}",
    ":", ",", ".", "?", "size", "exists", "all", "map", "p", "has", "int", "'\\q'",
    "duration", "'1s'", "type", "0x10", "9223372036854775807", "1e400", "paths[0]", "'('",
    "mutating &&", "act == 'x'", "reverts > 0 ||", "paths.exists(p, p == 'a')", "!mutating",
]  # fmt: skip
PHRASES = ["act == 'setup'", "paths.exists(p, p == 'a')", "!mutating", "size(paths) > 0",
           "paths[0] == 'x'", "counts.setup > 1", "1 / seq > 0", "argv0.matches('^r')"]  # fmt: skip


@pytest.mark.system  # end to end, slow for the default tier
def test_garbage_conditions_never_escape_as_tracebacks(tmp_path: Path) -> None:
    import random

    chooser = random.Random(5)
    loaded = 0
    for _ in range(150):
        parts = [chooser.choice(TOKENS) for _ in range(chooser.randint(1, 7))]
        if chooser.random() < 0.3:  # some well-formed ones too, so some load and decide
            parts = [chooser.choice(PHRASES) for _ in range(chooser.randint(1, 3))]
            parts = [" && ".join(parts) if chooser.random() < 0.5 else " || ".join(parts)]
        when = " ".join(parts)
        path = write(tmp_path, rule(json.dumps(when)))
        try:
            policy = load_policy(path)
        except PolicyError as error:
            assert all(line.startswith(f"{path}:") for line in error.errors)
            continue
        loaded += 1
        for facts in ({}, {"act": "setup", "command": "rm -rf migrations/x", "reverts": 2}):
            assert decide(policy, **facts).decision in ("allow", "deny", "ask")
    assert loaded > 0


# -- presets -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "mutating", "readonly"),
    [
        ("approve-mutating", ("ask", "mutating"), ("allow", None)),
        ("approve mutating", ("ask", "mutating"), ("allow", None)),
        ("approve-none", ("allow", None), ("allow", None)),
        ("read-only", ("deny", "mutating"), ("allow", None)),
    ],
)
def test_presets(name: str, mutating: tuple[str, str | None], readonly: tuple[str, None]) -> None:
    policy = preset(name)
    key = "-".join(name.split())
    assert policy.source == f"preset:{key}"
    assert policy.sha256 == hashlib.sha256(key.encode()).hexdigest()
    for act in ("change-state", "setup", "revert", "cleanup"):
        decision = decide(policy, act=act)
        assert (decision.decision, decision.rule) == mutating
    for act in ("collect-info", "verify", "test-hypothesis"):
        decision = decide(policy, act=act)
        assert (decision.decision, decision.rule) == readonly


def test_unknown_preset() -> None:
    with pytest.raises(PolicyError, match="unknown preset 'yolo'; the presets are"):
        preset("yolo")


def test_celpy_is_imported_only_when_a_file_loads() -> None:
    code = (
        "import sys\n"
        "from epistemic_agent.cli import policy as cli_policy\n"
        "from epistemic_agent.policy import rules as policy\n"
        "assert 'celpy' not in sys.modules and 'tomllib' not in sys.modules\n"
        "facts = policy.call_facts('bash', 'setup', True, 'pip install x', 'r', [], 'mutating',"
        " 1, {}, 0, 0)\n"
        "assert policy.preset('read-only').decide(facts).decision == 'deny'\n"
        "assert 'celpy' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# -- facts -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("pip install x", "pip"),
        ("FOO=1 BAR=2 /usr/bin/pip3 install x", "pip3"),
        ("sudo -u root apt-get install jq", "apt-get"),
        ("env -i PATH=/bin npm ci", "npm"),
        ("nice -n 10 timeout 30s cargo build", "cargo"),
        ("cd web && npm ci", "cd"),
        ("(make test)", "make"),
        ("echo 'unclosed", "echo"),
        ("", ""),
        ("FOO=1", ""),
        ("&& ls", ""),
    ],
)
def test_first_program(command: str, program: str) -> None:
    assert first_program(command) == program


def test_call_facts() -> None:
    facts = call_facts(
        "bash",
        "setup",
        True,
        "sudo pip install x",
        "need it",
        [],
        "mutating",
        4,
        {"setup": 2},
        1,
        0,
    )
    assert facts["argv0"] == "pip" and facts["effect_reasons"] == []
    assert facts["counts"] == {
        "collect-info": 0,
        "test-hypothesis": 0,
        "verify": 0,
        "change-state": 0,
        "setup": 2,
        "revert": 0,
        "cleanup": 0,
    }
    facts = call_facts(
        "write_file", "change-state", True, "write_file a.txt (3 bytes)", "r", ["a.txt"],
        "mutating", 1, {}, 0, 0,
    )  # fmt: skip
    assert facts["argv0"] == "" and facts["paths"] == ["a.txt"]


# -- the command line --------------------------------------------------------------------------


def test_check_prints_each_rule_and_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, DOC_POLICY)
    code, out, err = run_cli(["policy", "check", "-C", str(tmp_path)], monkeypatch, capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"{path}: 4 rule(s), sha256 {hashlib.sha256(path.read_bytes()).hexdigest()}"
    assert [line.split()[0] for line in lines[1:5]] == [
        "no-migrations", "after-revert", "installs", "changes"
    ]  # fmt: skip
    assert lines[-2:] == ["  default: allow", "ok"]
    code, out, _ = run_cli(["policy", "check", str(path), "--json"], monkeypatch, capsys)
    report = json.loads(out)
    assert code == 0 and report["ok"] is True and report["default"] == "allow"
    assert report["rules"][0] == {
        "id": "no-migrations",
        "decision": "deny",
        "message": "migrations/ is history: write a new migration by hand instead",
        "when": "mutating && paths.exists(p, p == 'migrations' || p.startsWith('migrations/'))",
        "line": 4,
        "examples": 4,
    }


def test_check_lists_faults_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, BAD_POLICY, "custom.toml")
    code, out, err = run_cli(["policy", "check", str(path)], monkeypatch, capsys)
    assert code == 1 and out == ""
    assert [line.split(": ")[0] for line in err.splitlines()] == [
        f"{path}:5", f"{path}:10", f"{path}:15", f"{path}:22", f"{path}:26"
    ]  # fmt: skip
    code, out, err = run_cli(["policy", "check", str(path), "--json"], monkeypatch, capsys)
    report = json.loads(out)
    assert code == 1 and report["ok"] is False and len(report["errors"]) == 5


def test_check_without_a_policy_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["policy", "check", "-C", str(tmp_path)], monkeypatch, capsys)
    assert code == 2 and out == ""
    where = tmp_path / "epistemic.toml"
    assert err == f"epistemic: no policy: {where} does not exist (give a FILE, or -C DIR)\n"
    code, _, err = run_cli(["policy", "check", str(tmp_path / "x.toml")], monkeypatch, capsys)
    assert code == 2 and "does not exist" in err
    code, _, err = run_cli(
        ["policy", "explain", "-C", str(tmp_path), "--type", "setup", "--", "ls"],
        monkeypatch,
        capsys,
    )
    assert code == 2 and "no policy" in err


def test_explain_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, DOC_POLICY)
    args = ["policy", "explain", "--policy", str(path), "--json", "--type", "cleanup"]
    args += ["--reverts", "1", "--count", "revert=1", "--seq", "9", "--", "rm -f /tmp/x"]
    code, out, _ = run_cli(args, monkeypatch, capsys)
    result = json.loads(out)
    assert code == 0 and set(result) == {"rule", "decision", "message", "facts"}
    assert (result["rule"], result["decision"]) == ("after-revert", "ask")
    facts = result["facts"]
    assert (facts["seq"], facts["reverts"], facts["counts"]["revert"]) == (9, 1, 1)
    assert (facts["argv0"], facts["effect"], facts["paths"]) == ("rm", "mutating", ["/tmp/x"])


def test_explain_default_and_preset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, DOC_POLICY)
    args = ["policy", "explain", "-C", str(tmp_path), "--type", "verify", "--", "pytest", "-q"]
    code, out, _ = run_cli(args, monkeypatch, capsys)
    assert code == 0 and out == "default: allow\nmessage: no rule matched; the default is allow\n"
    args = ["policy", "explain", "--preset", "approve-mutating", "--type", "setup", "--", "ls"]
    code, out, _ = run_cli(args, monkeypatch, capsys)
    assert out.splitlines()[0] == "rule mutating (preset:approve-mutating): ask"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--", "ls"], "--type is required for bash"),
        (["--type", "nope", "--", "ls"], "--type must be one of"),
        (["--type", "setup"], "give the command"),
        (["--type", "setup", "--count", "setup", "--", "ls"], "--count takes ACT=N"),
        (["--tool", "rm", "--", "x"], "unknown tool 'rm'"),
        (
            ["--tool", "write_file", "--type", "setup", "--", "x"],
            "write_file is always change-state",
        ),
        (["--preset", "yolo", "--type", "setup", "--", "ls"], "unknown preset 'yolo'"),
    ],
)
def test_explain_usage_errors_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    write(tmp_path, DOC_POLICY)
    code, _, err = run_cli(["policy", "explain", "-C", str(tmp_path), *args], monkeypatch, capsys)
    assert code == 2 and message in err


def test_explain_with_a_faulty_policy_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, BAD_POLICY)
    args = ["policy", "explain", "-C", str(tmp_path), "--type", "setup", "--", "ls"]
    code, out, err = run_cli(args, monkeypatch, capsys)
    assert code == 1 and out == "" and len(err.splitlines()) == 5


# -- docs/policy.md is true --------------------------------------------------------------------


def test_docs_console_sessions_are_real_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    write(good, DOC_POLICY)
    write(bad, BAD_POLICY)
    blocks = re.findall(r"```console\n(.*?)```", DOC, re.S)
    ran = 0
    for block in blocks:
        monkeypatch.chdir(bad if "CEL syntax error" in block else good)
        for session in re.split(r"^(?=\$ )", block, flags=re.M):
            if not session.strip():
                continue
            command, _, expected = session.partition("\n")
            words = shlex.split(command[2:])
            assert words[0] == "epistemic"
            code, out, err = run_cli(words[1:], monkeypatch, capsys)
            assert out + err == expected, command
            assert code == (1 if "CEL syntax error" in block else 0)
            ran += 1
    assert ran >= 13


def test_docs_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, DOC_POLICY)
    monkeypatch.chdir(tmp_path)
    code = re.search(r"```python\n(.*?)```", DOC, re.S).group(1)  # type: ignore[union-attr]
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/policy.md", "exec"), namespace)
    decision = namespace["decision"]
    assert (decision.decision, decision.rule) == ("ask", "installs")


UNSEEN = """\
default = "allow"

[[rule]]
id = "no-migrations"
when = "mutating && paths.exists(p, p == 'migrations' || p.startsWith('migrations/'))"
decision = "deny"

[[rule]]
id = "unseen-writes"
when = "mutating && !paths_known"
decision = "deny"
"""


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("rm -r migrations/0001.py", "no-migrations"),
        ("d=migr; rm -r ${d}ations", "unseen-writes"),
        ("rm -r migrations/*", "unseen-writes"),
        ("rm -r $(echo migrations)", "unseen-writes"),
        ("python3 -c 'import shutil; shutil.rmtree(\"migrations\")'", "unseen-writes"),
        ("./cleanup.sh", "unseen-writes"),
        ("eval 'rm -r migrations'", "no-migrations"),  # the analysis reads eval's text
        ("rm -r src/old.py", None),
    ],
)
def test_a_path_rule_with_paths_known_catches_what_the_analysis_cannot_see(
    tmp_path: Path, command: str, rule: str | None
) -> None:
    """`paths` alone misses a path built at run time; `!paths_known` sends those elsewhere."""
    (tmp_path / "epistemic.toml").write_text(UNSEEN)
    policy = load_policy(tmp_path / "epistemic.toml")
    facts = complete_facts({"tool": "bash", "act": "change-state", "command": command})
    assert policy.decide(facts).rule == rule, facts
    assert facts["paths_known"] is (rule != "unseen-writes")


def test_file_tools_know_their_paths() -> None:
    facts = complete_facts({"tool": "write_file", "paths": ["a.txt"]})
    assert facts["paths_known"] is True
