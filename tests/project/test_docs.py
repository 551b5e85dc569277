"""The docs are part of the contract: they must match the code."""

from __future__ import annotations

import os
import re
from pathlib import Path

from epistemic_agent.cli.docs import render_cli_docs
from epistemic_agent.gate.check import RULES
from epistemic_agent.journal.migrations import MIGRATIONS
from epistemic_agent.journal.schema import KINDS
from epistemic_agent.journal.schema_docs import render as render_journal_tables

ROOT = Path(__file__).resolve().parents[2]


def test_cli_docs_are_generated_from_the_current_parser() -> None:
    assert (ROOT / "docs" / "cli.md").read_text() == render_cli_docs(), (
        "docs/cli.md is stale: run `python -m epistemic_agent.cli.docs > docs/cli.md`"
    )


def test_journal_format_tables_are_generated_from_the_record_schema() -> None:
    doc = (ROOT / "docs" / "journal-format.md").read_text()
    assert doc.count("<!-- generated: ") == doc.count("<!-- end generated -->") > 20
    assert doc == render_journal_tables(doc), (
        "docs/journal-format.md is stale: run `python -m epistemic_agent.cli.journal_docs`"
    )
    for kind in KINDS:
        assert f"<!-- generated: kind {kind} -->" in doc or kind == "confinement", kind
    for migration in MIGRATIONS:
        assert f"`{migration.name}`" in doc


def test_readme_quick_start_has_exactly_two_commands_that_exist() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    commands = [c for c in commands if c]
    assert commands == ["./scripts/demo", "./scripts/test"]
    for command in commands:
        assert os.access(ROOT / command, os.X_OK), command


def test_ci_runs_the_readme_test_command_and_the_checkers() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    for needed in ("scripts/test", "mypy", "ruff check", "ruff format --check"):
        assert needed in ci


def test_ci_runs_both_tiers_and_the_readme_names_the_default_one() -> None:
    """CI's scripts/test leaves no tier out; the marker is registered; developers find the
    default tier's command where they look."""
    script = (ROOT / "scripts" / "test").read_text()
    command = next(line for line in script.splitlines() if line.startswith("exec "))
    assert "-m" not in command.split() and "system" not in command, command
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"system: ' in pyproject and "--strict-markers" in pyproject
    development = (ROOT / "README.md").read_text().split("## Development", 1)[1]
    assert '-m "not system"' in development


def test_every_record_kind_is_documented() -> None:
    doc = (ROOT / "docs" / "journal-format.md").read_text()
    source = "\n".join(p.read_text() for p in (ROOT / "src" / "epistemic_agent").rglob("*.py"))
    kinds = set(re.findall(r'"kind": "([a-z-]+)"', source))
    kinds |= set(re.findall(r'self\.session\.event\(\s*"([a-z-]+)"', source))
    assert {"session", "call", "outcome", "rejected", "recovery", "model", "stop"} <= kinds
    missing = sorted(kind for kind in kinds if f"`{kind}`" not in doc)
    assert not missing, f"record kinds missing from docs/journal-format.md: {missing}"


def test_every_rule_has_a_description() -> None:
    assert all(isinstance(text, str) and len(text) > 10 for text in RULES.values())
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", rule) for rule in RULES)


def test_readme_python_example_runs(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Python API", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    code = block.group(1).replace('"path/to/repo"', repr(str(tmp_path)))
    code = code.replace('"pytest -q"', '"true"')  # no test suite in an empty workspace
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert (tmp_path / ".epistemic" / "journal.jsonl").is_file()
    assert "### 1. `verify` · ok" in (tmp_path / "RATIONALE.md").read_text()


def test_readme_regulated_team_policy_is_ten_lines_and_works(tmp_path: Path) -> None:
    from epistemic_agent.policy.file import load_policy
    from epistemic_agent.policy.rules import call_facts

    section = (ROOT / "README.md").read_text().split("## Policies and approval", 1)[1]
    block = re.search(r"```toml\n(.*?)```", section, re.S)
    assert block is not None and len(block.group(1).splitlines()) == 10
    path = tmp_path / "epistemic.toml"
    path.write_text(block.group(1))
    (tmp_path / "allowed_signers").write_text("alice@example.com ssh-ed25519 AAAAC3Nza\n")
    policy = load_policy(path)
    assert policy.signatures == "required"
    assert policy.allowed_signers == str(tmp_path / "allowed_signers")
    policy.check_signers()  # a session may run under it
    assert policy.approval_timeout == 900 and policy.hooks[0].on == (
        "first-revert",
        "denial",
        "flag",
    )
    facts = call_facts("bash", "setup", True, "pip install x", "r", [], "mutating", 1, {}, 0, 0)
    assert policy.decide(facts).decision == "ask"
    facts = call_facts("bash", "cleanup", True, "rm -f x", "r", [], "mutating", 1, {}, 0, 0)
    assert policy.decide(facts).decision == "allow"


def test_readme_mcp_configuration_names_the_real_command() -> None:
    """The server entry the README shows (`init generic`; tests/cli/test_init.py checks it is
    exactly what init writes) starts `epistemic mcp` on the workspace."""
    import json

    from epistemic_agent.cli import app as cli

    section = (ROOT / "README.md").read_text().split("## Any agent, through MCP", 1)[1]
    block = re.search(
        r"\$ epistemic init generic .*?==> \.mcp\.json \(new\) <==\n(.*?)\n\n", section, re.S
    )
    assert block is not None
    server = json.loads(block.group(1))["mcpServers"]["epistemic"]
    assert server["command"].endswith("/bin/epistemic") and server["args"][0] == "mcp"
    parsed = cli.build_parser("mcp").parse_args(server["args"])
    assert parsed.directory == "/path/to/repo"


def test_every_epistemic_command_in_the_readme_parses() -> None:
    import shlex

    from epistemic_agent.cli import app as cli

    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    joined = [block.replace("\\\n", " ") for block in blocks]  # continuation lines
    lines = [re.sub(r"\s+#.*$", "", line) for block in joined for line in block.splitlines()]
    commands = [line for line in lines if line.startswith("epistemic ")]
    assert len(commands) >= 25
    for command in commands:
        words = shlex.split(command)[1:]
        parsed = cli.build_parser(words[0]).parse_args(words)
        assert callable(parsed.handler), command
