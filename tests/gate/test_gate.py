"""The pure gate (`gate.check`) and the tool schemas it enforces (`tools.py`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from epistemic_agent.core.layout import is_protected
from epistemic_agent.core.tools import TOOL_NAMES, TOOLS_BY_NAME, anthropic_tools, openai_tools
from epistemic_agent.core.vocabulary import ACT_NAMES, ACTS, FILE_TOOL_ACTS
from epistemic_agent.gate import check as gate
from epistemic_agent.gate.check import RULES, Call, GateConfig, Rejected, check
from epistemic_agent.gate.reasons import HYPOTHESIS_EXAMPLE

WS = "/srv/gate-ws"
CONFIG = GateConfig(WS)
GOOD_REASON = "confirm the refactor kept the parser behaviour unchanged"
DROP = object()  # marks an argument to leave out

#: Rules only the disk-aware precheck (filetools.precheck) can produce, never the pure gate.
#: Rules that need the disk or the session's history: checked by the session after the gate.
PRECHECK_RULES = {"file-missing", "old-not-unique", "revert-unrelated", "cleanup-preexisting"}
#: Rules the agent loop produces for malformed model output (agent.py), not the pure gate.
AGENT_RULES = {"call-id-missing"}


def bash_args(**changes: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"command": "pytest -q tests", "type": "verify", "reason": GOOD_REASON}
    for key, value in changes.items():
        if value is DROP:
            args.pop(key, None)
        else:
            args[key] = value
    return args


VALID_ARGS: dict[str, dict[str, Any]] = {
    "bash": bash_args(),
    "read_file": {"path": "src/app.py", "reason": GOOD_REASON},
    "write_file": {"path": "src/app.py", "content": "print('hi')\n", "reason": GOOD_REASON},
    "str_replace_edit": {
        "path": "src/app.py",
        "old": "print('hi')",
        "new": "print('hello')",
        "reason": GOOD_REASON,
    },
}


def file_args(tool: str, **changes: Any) -> dict[str, Any]:
    args = dict(VALID_ARGS[tool])
    for key, value in changes.items():
        if value is DROP:
            args.pop(key, None)
        else:
            args[key] = value
    return args


def rejected(tool: object, args: object, rule: str) -> Rejected:
    verdict = check(tool, args, CONFIG)
    assert isinstance(verdict, Rejected), f"expected {rule}, got accepted {verdict!r}"
    assert verdict.rule == rule, verdict.text
    assert verdict.rule in RULES
    assert verdict.text == f"REJECTED {rule}: {verdict.message}"
    return verdict


def accepted(tool: object, args: object) -> Call:
    verdict = check(tool, args, CONFIG)
    assert isinstance(verdict, Call), getattr(verdict, "text", verdict)
    return verdict


# -- one case per rule: (tool, args, rule, fragments the message must contain) ---------------

RULE_CASES: list[tuple[str, object, object, str, list[str]]] = [
    (
        "unknown-tool",
        "python",
        bash_args(),
        "unknown-tool",
        ["unknown tool 'python'", "bash, read_file, write_file, str_replace_edit"],
    ),
    ("unknown-tool-none", None, bash_args(), "unknown-tool", ["unknown tool None"]),
    ("args-not-object-list", "bash", ["ls"], "args-not-object", ["JSON object, got array"]),
    ("args-not-object-str", "bash", "ls -la", "args-not-object", ["JSON object, got string"]),
    ("args-not-object-null", "read_file", None, "args-not-object", ["JSON object, got null"]),
    (
        "unknown-argument",
        "bash",
        bash_args(cwd="/tmp"),
        "unknown-argument",
        ["bash does not take 'cwd'", "its arguments are command, type, reason"],
    ),
    (
        "wrong-type-command-number",
        "bash",
        bash_args(command=5),
        "wrong-type",
        ["`command` must be a string, got number"],
    ),
    (
        "wrong-type-reason-list",
        "bash",
        bash_args(reason=["because", "tests"]),
        "wrong-type",
        ["`reason` must be a string, got array"],
    ),
    (
        "wrong-type-start-line-bool",
        "read_file",
        file_args("read_file", start_line=True),
        "wrong-type",
        ["`start_line` must be a", "integer", "got boolean"],
    ),
    (
        "wrong-type-end-line-float",
        "read_file",
        file_args("read_file", end_line=2.0),
        "wrong-type",
        ["`end_line`", "integer", "got number"],
    ),
    (
        "missing-argument",
        "write_file",
        file_args("write_file", content=DROP),
        "missing-argument",
        ["write_file needs 'content'"],
    ),
    (
        "missing-argument-two",
        "str_replace_edit",
        file_args("str_replace_edit", old=DROP, new=None),
        "missing-argument",
        ["str_replace_edit needs 'old', 'new'"],
    ),
    (
        "command-missing-absent",
        "bash",
        bash_args(command=DROP),
        "command-missing",
        ["`command` is missing"],
    ),
    (
        "command-missing-whitespace",
        "bash",
        bash_args(command="  \n\t "),
        "command-missing",
        ["`command` is empty"],
    ),
    (
        "type-missing",
        "bash",
        bash_args(type=DROP),
        "type-missing",
        ["`type` is mandatory"] + [f"- {act.name}: {act.meaning}" for act in ACTS],
    ),
    (
        "type-missing-blank",
        "bash",
        bash_args(type="   "),
        "type-missing",
        ["`type` is mandatory", "- collect-info:", "- cleanup:"],
    ),
    (
        "type-unknown",
        "bash",
        bash_args(type="explore"),
        "type-unknown",
        ["got 'explore'", ", ".join(ACT_NAMES)],
    ),
    (
        "reason-missing",
        "bash",
        bash_args(reason=DROP),
        "reason-missing",
        ["`reason` is mandatory", "Explain the intent, not the syntax"],
    ),
    (
        "reason-missing-blank",
        "read_file",
        file_args("read_file", reason=" \n "),
        "reason-missing",
        ["`reason` is mandatory"],
    ),
    (
        "reason-too-short",
        "bash",
        bash_args(reason="   check parser output   "),  # 19 chars once trimmed
        "reason-too-short",
        ["(19 chars, need >= 20)", "Explain the intent, not the syntax"],
    ),
    (
        "reason-restates-command",
        "bash",
        bash_args(command="git status --porcelain", reason="git status --porcelain"),
        "reason-restates-command",
        ["only restates the command"],
    ),
    (
        "reason-restates-command-filler",
        "bash",
        bash_args(command="git status --porcelain", reason="run git status --porcelain now please"),
        "reason-restates-command",
        ["only restates the command", "what you want to learn or achieve"],
    ),
    (
        "reason-restates-file-tool",
        "read_file",
        file_args("read_file", path="notes.txt", reason="read the file notes.txt please"),
        "reason-restates-command",
        ["only restates the command"],
    ),
    (
        "hypothesis-incomplete-belief-only",
        "bash",
        bash_args(
            type="test-hypothesis", reason="I believe the parser drops the final row of input"
        ),
        "hypothesis-incomplete",
        ["missing: what would refute it", "For example:", HYPOTHESIS_EXAMPLE],
    ),
    (
        "hypothesis-incomplete-refutation-only",
        "bash",
        bash_args(
            type="test-hypothesis",
            reason="if the row count differs from wc -l that would show a parser bug",
        ),
        "hypothesis-incomplete",
        ["missing: the belief under test.", "For example:"],
    ),
    (
        "hypothesis-incomplete-neither",
        "bash",
        bash_args(type="test-hypothesis", reason="look at how the parser handles the last row"),
        "hypothesis-incomplete",
        ["missing: the belief under test and what would refute it"],
    ),
    (
        "path-outside-workspace-dotdot",
        "read_file",
        file_args("read_file", path="../x"),
        "path-outside-workspace",
        ["'../x' is outside the workspace"],
    ),
    (
        "path-outside-workspace-absolute",
        "write_file",
        file_args("write_file", path="/etc/passwd"),
        "path-outside-workspace",
        ["'/etc/passwd' is outside the workspace"],
    ),
    (
        "path-outside-workspace-sibling-prefix",
        "read_file",
        file_args("read_file", path=WS + "-other/secret.txt"),
        "path-outside-workspace",
        ["is outside the workspace"],
    ),
    (
        "path-outside-workspace-root",
        "read_file",
        file_args("read_file", path="src/.."),
        "path-outside-workspace",
        ["is the workspace itself"],
    ),
    (
        "path-too-long-name",
        "write_file",
        file_args("write_file", path="notes/" + "n" * 256),
        "path-too-long",
        ["is 256 bytes long; a file or folder name may have at most 255"],
    ),
    (
        "path-too-long-whole",
        "read_file",
        file_args("read_file", path="/".join(["p" * 250] * 17)),
        "path-too-long",
        ["bytes long; a path may have at most 4095"],
    ),
    (
        "path-protected-journal",
        "read_file",
        file_args("read_file", path=".epistemic/journal.jsonl"),
        "path-protected",
        ["'.epistemic/journal.jsonl' is part of the session's record"],
    ),
    (
        "path-protected-rationale",
        "write_file",
        file_args("write_file", path="RATIONALE.md"),
        "path-protected",
        ["'RATIONALE.md' is part of the session's record"],
    ),
    (
        "path-protected-dotdot",
        "str_replace_edit",
        file_args("str_replace_edit", path="./x/../.epistemic/journal.jsonl"),
        "path-protected",
        ["'.epistemic/journal.jsonl' is part of the session's record"],
    ),
    (
        "path-protected-absolute",
        "write_file",
        file_args("write_file", path=WS + "/.epistemic/head.json"),
        "path-protected",
        ["'.epistemic/head.json'"],
    ),
    (
        "self-approval",
        "bash",
        bash_args(command="epistemic approve 4 --as alice", type="change-state"),
        "self-approval",
        ["an agent may not answer approval requests"],
    ),
    (
        "line-range-invalid-reversed",
        "read_file",
        file_args("read_file", start_line=5, end_line=3),
        "line-range-invalid",
        ["end_line 3 is before start_line 5"],
    ),
    (
        "line-range-invalid-zero",
        "read_file",
        file_args("read_file", start_line=0),
        "line-range-invalid",
        ["line numbers start at 1"],
    ),
    (
        "edit-noop-identical",
        "str_replace_edit",
        file_args("str_replace_edit", old="x = 1", new="x = 1"),
        "edit-noop",
        ["`old` and `new` are identical"],
    ),
    (
        "edit-noop-empty-old",
        "str_replace_edit",
        file_args("str_replace_edit", old="", new="x = 1"),
        "edit-noop",
        ["`old` is empty"],
    ),
    (
        "observation-writes-redirect",
        "bash",
        {
            "command": "grep -n total app.py > out.txt",
            "type": "collect-info",
            "reason": GOOD_REASON,
        },
        "observation-writes",
        [
            "declared an observation (collect-info), wrote an effect",
            "`> out.txt` writes out.txt",
            "use change-state",
            "write it under /tmp",
        ],
    ),
    (
        "observation-writes-git-commit",
        "bash",
        {"command": "git add -A && git commit -m wip", "type": "verify", "reason": GOOD_REASON},
        "observation-writes",
        ["declared an observation (verify)"],
    ),
    (
        "text-unencodable-nul-in-command",
        "bash",
        {"command": "echo a\x00b", "type": "collect-info", "reason": GOOD_REASON},
        "text-unencodable",
        ["`command`", "NUL"],
    ),
    (
        "text-unencodable-lone-surrogate-in-content",
        "write_file",
        file_args("write_file", content="broken \ud800 text"),
        "text-unencodable",
        ["`content`", "lone surrogate"],
    ),
]


@pytest.mark.parametrize(
    ("tool", "args", "rule", "fragments"),
    [case[1:] for case in RULE_CASES],
    ids=[case[0] for case in RULE_CASES],
)
def test_rule_is_produced_with_its_message(
    tool: object, args: object, rule: str, fragments: list[str]
) -> None:
    verdict = rejected(tool, args, rule)
    for fragment in fragments:
        assert fragment in verdict.message, (fragment, verdict.message)


def test_rule_cases_cover_every_rule_the_pure_gate_produces() -> None:
    covered = {case[3] for case in RULE_CASES}
    assert covered == set(RULES) - PRECHECK_RULES - AGENT_RULES


def test_pure_gate_leaves_disk_rules_to_the_precheck() -> None:
    # The workspace does not exist: a pure gate cannot know the file is missing.
    call = accepted("str_replace_edit", file_args("str_replace_edit", path="nowhere/none.py"))
    assert call.path == "nowhere/none.py"
    assert set(RULES) >= PRECHECK_RULES


# -- acceptance, normalisation, fixed acts ---------------------------------------------------


def test_valid_bash_call_is_normalised() -> None:
    call = accepted("bash", bash_args(type=" Collect-Info ", reason=f"  {GOOD_REASON}\n"))
    assert call.tool == "bash"
    assert call.act == "collect-info"
    assert call.args == {
        "command": "pytest -q tests",
        "type": "collect-info",
        "reason": GOOD_REASON,
    }
    assert call.reason == GOOD_REASON
    assert call.command == "pytest -q tests"
    assert call.path is None
    assert call.mutating is False
    assert call.describe() == "pytest -q tests"


@pytest.mark.parametrize("act", ACT_NAMES)
def test_every_act_is_accepted_in_any_case(act: str) -> None:
    reason = GOOD_REASON
    if act == "test-hypothesis":
        reason = "I believe the parser keeps the last row; a short count would refute that"
    call = accepted("bash", bash_args(type=f"  {act.upper()}\t", reason=reason))
    assert call.act == act
    assert call.mutating is {a.name: a.mutating for a in ACTS}[act]


def test_reason_of_exactly_twenty_chars_is_accepted() -> None:
    reason = "check parser outputs"
    assert len(reason) == 20
    call = accepted("bash", bash_args(reason=f"\t {reason}  "))
    assert call.reason == reason


def test_reason_too_short_counts_after_trimming_and_keeps_the_act() -> None:
    verdict = rejected(
        "bash", bash_args(type="Setup", reason=" " * 30 + "x" * 5), "reason-too-short"
    )
    assert "(5 chars, need >= 20)" in verdict.message
    assert verdict.act == "setup"
    assert verdict.tool == "bash"


def test_min_reason_is_configurable() -> None:
    verdict = check("bash", bash_args(reason="short but ok"), GateConfig(WS, min_reason=5))
    assert isinstance(verdict, Call)
    strict = check("bash", bash_args(), GateConfig(WS, min_reason=200))
    assert isinstance(strict, Rejected)
    assert strict.rule == "reason-too-short"
    assert "need >= 200" in strict.message


def test_reason_with_new_words_beyond_the_command_is_accepted() -> None:
    call = accepted(
        "bash",
        bash_args(
            command="git status --porcelain",
            type="collect-info",
            reason="git status to learn whether the build left stray files",
        ),
    )
    assert call.act == "collect-info"


def test_hypothesis_with_belief_and_refutation_is_accepted() -> None:
    reason = (
        "I believe parse_rows drops the last row; if the count equals the line count "
        "that belief is refuted"
    )
    call = accepted("bash", bash_args(type="test-hypothesis", reason=reason))
    assert call.act == "test-hypothesis"
    assert call.reason == reason
    example = accepted("bash", bash_args(type="test-hypothesis", reason=HYPOTHESIS_EXAMPLE))
    assert example.act == "test-hypothesis"


def test_type_unknown_does_not_claim_an_act() -> None:
    verdict = rejected("bash", bash_args(type="Explore "), "type-unknown")
    assert "got 'Explore '" in verdict.message
    assert verdict.act is None


@pytest.mark.parametrize(
    ("tool", "act", "mutating"),
    [
        ("read_file", "collect-info", False),
        ("write_file", "change-state", True),
        ("str_replace_edit", "change-state", True),
    ],
)
def test_file_tools_have_fixed_acts(tool: str, act: str, mutating: bool) -> None:
    assert FILE_TOOL_ACTS[tool] == act
    call = accepted(tool, file_args(tool, path="./src/../pkg/mod.py"))
    assert call.act == act
    assert call.mutating is mutating
    assert call.path == "pkg/mod.py"
    assert call.args["path"] == "pkg/mod.py"
    assert call.command is None


@pytest.mark.parametrize("tool", ["read_file", "write_file", "str_replace_edit"])
def test_passing_type_to_a_file_tool_is_unknown_argument(tool: str) -> None:
    verdict = rejected(tool, file_args(tool, type="collect-info"), "unknown-argument")
    assert f"{tool} does not take 'type'" in verdict.message


def test_file_tool_rejection_carries_the_fixed_act() -> None:
    verdict = rejected(
        "write_file", file_args("write_file", path="../out.txt"), "path-outside-workspace"
    )
    assert verdict.tool == "write_file"
    assert verdict.act == "change-state"


def test_absolute_path_inside_the_workspace_is_made_relative() -> None:
    call = accepted("read_file", file_args("read_file", path=WS + "/src/app.py"))
    assert call.path == "src/app.py"


@pytest.mark.parametrize("path", ["docs/RATIONALE.md", ".epistemically/notes", "x/.epistemic"])
def test_lookalikes_of_the_record_are_not_protected(path: str) -> None:
    assert accepted("write_file", file_args("write_file", path=path)).path == path


def test_read_file_line_range_is_kept_and_described() -> None:
    call = accepted("read_file", file_args("read_file", start_line=3, end_line=3))
    assert call.args["start_line"] == 3
    assert call.args["end_line"] == 3
    assert call.describe() == "read_file src/app.py (lines 3-3)"


def test_null_arguments_count_as_absent() -> None:
    call = accepted("read_file", file_args("read_file", start_line=None))
    assert "start_line" not in call.args
    rejected("bash", bash_args(command=None), "command-missing")


def test_module_rule_table_is_documented() -> None:
    assert all(isinstance(text, str) and text for text in gate.RULES.values())


# -- tools.py: both export formats, and the schemas agree with the gate ----------------------


def test_openai_and_anthropic_offer_the_same_four_tools() -> None:
    openai = openai_tools()
    anthropic = anthropic_tools()
    names = ["bash", "read_file", "write_file", "str_replace_edit"]
    assert [t["function"]["name"] for t in openai] == names
    assert [t["name"] for t in anthropic] == names
    assert all(t["type"] == "function" for t in openai)
    for o, a in zip(openai, anthropic, strict=True):
        assert o["function"]["parameters"] == a["input_schema"]
        assert o["function"]["description"] == a["description"]
    json.dumps(openai)
    json.dumps(anthropic)


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_schema_is_closed_and_consistent(tool: str) -> None:
    schema = TOOLS_BY_NAME[tool].parameters
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) <= set(schema["properties"])
    assert "reason" in schema["required"]
    assert ("type" in schema["properties"]) is (tool == "bash")


def test_bash_type_enum_is_the_vocabulary() -> None:
    prop = TOOLS_BY_NAME["bash"].properties["type"]
    assert prop["enum"] == list(ACT_NAMES)
    for act in ACTS:
        assert act.meaning in prop["description"]


def test_valid_arguments_for_every_schema_property_are_accepted() -> None:
    for tool in TOOL_NAMES:
        args = dict(VALID_ARGS[tool])
        if tool == "read_file":
            args.update(start_line=1, end_line=10)
        assert set(args) == set(TOOLS_BY_NAME[tool].properties), tool
        assert isinstance(check(tool, args, CONFIG), Call), tool


EXPECTED_MISSING_RULE = {
    ("bash", "command"): "command-missing",
    ("bash", "type"): "type-missing",
    ("bash", "reason"): "reason-missing",
}


@pytest.mark.parametrize(
    ("tool", "key"), [(spec, key) for spec in TOOL_NAMES for key in TOOLS_BY_NAME[spec].required]
)
def test_every_required_key_is_enforced_by_the_gate(tool: str, key: str) -> None:
    args = dict(VALID_ARGS[tool])
    del args[key]
    default = "reason-missing" if key == "reason" else "missing-argument"
    verdict = rejected(tool, args, EXPECTED_MISSING_RULE.get((tool, key), default))
    if verdict.rule == "missing-argument":
        assert repr(key) in verdict.message


@pytest.mark.parametrize(
    ("tool", "key"), [(spec, key) for spec in TOOL_NAMES for key in TOOLS_BY_NAME[spec].properties]
)
def test_every_schema_type_is_enforced_by_the_gate(tool: str, key: str) -> None:
    wanted = TOOLS_BY_NAME[tool].properties[key]["type"]
    args = dict(VALID_ARGS[tool])
    args[key] = 7 if wanted == "string" else "7"
    verdict = rejected(tool, args, "wrong-type")
    article = "an" if wanted == "integer" else "a"
    assert f"`{key}` must be {article} {wanted}" in verdict.message


def test_optional_schema_keys_are_not_required_by_the_gate() -> None:
    for tool in TOOL_NAMES:
        spec = TOOLS_BY_NAME[tool]
        args = {k: v for k, v in VALID_ARGS[tool].items() if k in spec.required}
        assert isinstance(check(tool, args, CONFIG), Call), tool


# -- properties: hostile input never raises; accepted calls satisfy the contract --------------

#: Text that includes lone surrogates, controls, newlines and quotes, not only "nice" text.
WILD_CATEGORIES = ["Cs", "Cc", "Zs", "Zl", "Lu", "Ll", "Lo", "Nd", "Po", "Pd", "So", "Sm"]
wild_text = st.text(st.characters(codec=None, categories=WILD_CATEGORIES), max_size=30)
some_text = st.one_of(st.text(max_size=30), wild_text)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | some_text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
act_like = st.one_of(
    st.sampled_from(ACT_NAMES),
    st.tuples(
        st.sampled_from(ACT_NAMES), st.sampled_from(["", " ", "\t", "  \n"]), st.booleans()
    ).map(lambda t: t[1] + (t[0].upper() if t[2] else t[0].title()) + t[1]),
    some_text,
)
reason_like = st.one_of(
    st.text(max_size=60),
    wild_text,
    st.sampled_from(
        [
            GOOD_REASON,
            HYPOTHESIS_EXAMPLE,
            "check parser outputs",
            "   check parser output   ",
            "run git status now please",
        ]
    ),
    some_text.map(lambda t: "learn why the build fails: " + t),
)
path_like = st.one_of(
    some_text,
    st.sampled_from(
        [
            "src/app.py",
            "../x",
            "/etc/passwd",
            ".epistemic/journal.jsonl",
            "RATIONALE.md",
            "./x/../.epistemic/journal.jsonl",
            WS + "/ok.txt",
            "",
            ".",
        ]
    ),
)
any_value = st.one_of(json_values, some_text)
#: Mostly well-typed values per argument (so calls get past the shape checks), some hostile.
ARG_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "command": st.one_of(st.sampled_from(["ls -la", "git status", " ", "echo hi"]), some_text),
    "type": act_like,
    "reason": reason_like,
    "path": path_like,
    "content": some_text,
    "old": st.one_of(st.sampled_from(["a", "b", ""]), some_text),
    "new": st.one_of(st.sampled_from(["a", "b", ""]), some_text),
    "start_line": st.integers(-2, 20),
    "end_line": st.integers(-2, 20),
}


def shaped_call(tool: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """Arguments shaped like the tool's schema: required keys usually present, extras rare."""
    spec = TOOLS_BY_NAME[tool]
    required = {key: ARG_VALUES[key] for key in spec.required}
    optional = {key: ARG_VALUES[key] for key in spec.properties if key not in spec.required}
    base = st.fixed_dictionaries(required, optional=optional)
    holes = st.lists(st.sampled_from(sorted(spec.properties)), max_size=2)
    extra = st.dictionaries(
        st.sampled_from(["type", "cwd", "command", "path"]), any_value, max_size=1
    )
    bad = st.dictionaries(st.sampled_from(sorted(spec.properties)), any_value, max_size=1)

    def build(
        parts: tuple[dict[str, Any], list[str], dict[str, Any], dict[str, Any], int],
    ) -> dict[str, Any]:
        args, drop, more, wrong, mode = parts
        args = dict(args)
        if mode == 1:
            for key in drop:
                args.pop(key, None)
        elif mode == 2:
            args.update(more)
        elif mode == 3:
            args.update(wrong)
        return args

    return st.tuples(base, holes, extra, bad, st.integers(0, 5)).map(build).map(lambda a: (tool, a))


tool_like = st.one_of(st.sampled_from(TOOL_NAMES), json_values)
hostile_call = st.tuples(tool_like, st.one_of(json_values, st.dictionaries(some_text, any_value)))
any_call = st.one_of(
    st.sampled_from(TOOL_NAMES).flatmap(shaped_call),
    st.sampled_from(TOOL_NAMES).flatmap(shaped_call),
    hostile_call,
)


def assert_contract(tool: object, args: object, verdict: object) -> None:
    if isinstance(verdict, Rejected):
        assert verdict.rule in RULES
        assert isinstance(verdict.message, str) and verdict.message
        assert isinstance(verdict.tool, str)
        assert verdict.act is None or verdict.act in ACT_NAMES
        return
    assert isinstance(verdict, Call), verdict
    assert isinstance(args, dict)
    assert verdict.tool == tool
    assert verdict.act in ACT_NAMES
    assert verdict.reason == verdict.reason.strip()
    assert len(verdict.reason) >= gate.MIN_REASON
    assert verdict.args["reason"] == verdict.reason
    if tool == "bash":
        assert isinstance(verdict.command, str)
        assert verdict.command.strip()
        assert verdict.command == args["command"]
        assert verdict.args["type"] == verdict.act
        assert verdict.path is None
    else:
        assert verdict.act == FILE_TOOL_ACTS[str(tool)]
        assert "type" not in args
        assert isinstance(verdict.path, str)
        assert not verdict.path.startswith(("/", "../")) and verdict.path != ".."
        assert not is_protected(verdict.path)
        if tool == "str_replace_edit":
            assert verdict.args["old"] and verdict.args["old"] != verdict.args["new"]


@settings(max_examples=200, deadline=None)
@given(call=any_call)
def test_check_never_raises_and_is_deterministic(call: tuple[object, object]) -> None:
    tool, args = call
    verdict = check(tool, args, CONFIG)
    assert_contract(tool, args, verdict)
    again = check(tool, args, CONFIG)
    assert again == verdict
    assert type(again) is type(verdict)
    if isinstance(verdict, Rejected):
        assert again.text == verdict.text


@settings(max_examples=200, deadline=None)
@given(
    command=st.one_of(some_text, st.sampled_from(["ls -la", "pytest -q", "  "])),
    act=act_like,
    reason=reason_like,
)
def test_bash_calls_accepted_only_when_complete(command: str, act: str, reason: str) -> None:
    args = {"command": command, "type": act, "reason": reason}
    verdict = check("bash", args, CONFIG)
    assert_contract("bash", args, verdict)
    if isinstance(verdict, Call):
        assert verdict.act == act.strip().lower()
        assert len(reason.strip()) >= 20
    elif "\x00" in command or not _encodable(command):
        assert verdict.rule == "text-unencodable"
    elif not command.strip():
        assert verdict.rule == "command-missing"
    elif act.strip().lower() not in ACT_NAMES:
        assert verdict.rule in ("type-missing", "type-unknown")
    else:
        assert verdict.rule.startswith(("reason-", "hypothesis-", "observation-", "path-"))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize(
    ("command", "passes"),
    [
        ('sort "$f"', False),  # "$f" may be -o FILE
        ('sort -- "$f"', True),
        ("sed -n 1p *.md", False),  # a file named -i.md makes it sed -i
        ("sed -n 1p ./*.md", True),
        ('sed -i "$edit" "$TMPDIR/mut/f.py"', True),  # writes scratch only; the doubt is unknown
        ("sort --out=report.txt data", False),
        ("git commit -m --dry-run", False),
        ("git clean -n --no-dry-run -f", False),
    ],
)
def test_observations_whose_words_may_be_options_that_write(command: str, passes: bool) -> None:
    args = bash_args(command=command, type="collect-info")
    if passes:
        accepted("bash", args)
        return
    verdict = rejected("bash", args, "observation-writes")
    if '"$f"' in command or "*" in command:
        assert "(after --, or as ./..., it cannot)" in verdict.message
