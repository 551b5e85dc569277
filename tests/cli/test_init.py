"""`epistemic init`: what it writes, how it merges into a user's files, how it refuses."""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EPISTEMIC
from epistemic_agent.cli import main
from epistemic_agent.cli.client_setup import CLAUDE_DENY, INSTRUCTIONS
from epistemic_agent.cli.config_merge import SECTION_BEGIN, SECTION_END, Want, merge_json

ROOT = Path(__file__).resolve().parents[2]
FILES = {
    "claude-code": [".mcp.json", ".claude/settings.json", "CLAUDE.md", ".gitignore"],
    "codex": [".codex/config.toml", "AGENTS.md", ".gitignore"],
    "generic": [".mcp.json", "AGENTS.md", ".gitignore"],
}


def init(ws: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["init", *args, "-C", str(ws)])
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(ws: Path) -> dict[str, bytes]:
    return {str(p.relative_to(ws)): p.read_bytes() for p in sorted(ws.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("client", list(FILES))
def test_a_fresh_workspace_gets_every_file_and_a_second_run_changes_nothing(
    ws: Path, capsys: pytest.CaptureFixture[str], client: str
) -> None:
    code, out, err = init(ws, capsys, client)
    assert (code, err) == (0, "")
    assert sorted(snapshot(ws)) == sorted(FILES[client])
    for path in FILES[client]:
        assert f"created {path}" in out
    first = snapshot(ws)
    code, out, _ = init(ws, capsys, client)
    assert code == 0 and snapshot(ws) == first
    assert all(f"unchanged {path}" in out for path in FILES[client])


def server_of(ws: Path, client: str) -> dict[str, Any]:
    if client == "codex":
        config = tomllib.loads((ws / ".codex" / "config.toml").read_text())
        entry: dict[str, Any] = config["mcp_servers"]["epistemic"]
        return entry
    entry = json.loads((ws / ".mcp.json").read_text())["mcpServers"]["epistemic"]
    return entry


@pytest.mark.parametrize("client", list(FILES))
def test_the_server_entry_starts_this_epistemic_by_absolute_path(
    ws: Path, capsys: pytest.CaptureFixture[str], client: str
) -> None:
    init(ws, capsys, client)
    entry = server_of(ws, client)
    assert entry["command"] == EPISTEMIC and os.path.isabs(entry["command"])
    assert entry["args"] == ["mcp", "-C", str(ws.resolve()), "--here"]


def test_claude_code_loses_its_own_tools_and_waits_for_the_server(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    init(ws, capsys, "claude-code")
    settings = json.loads((ws / ".claude" / "settings.json").read_text())
    assert {"Bash", "Read", "Write", "Edit", "NotebookEdit", "Glob", "Grep"} <= set(
        settings["permissions"]["deny"]
    )
    assert settings["permissions"]["allow"] == ["mcp__epistemic"]
    assert settings["env"]["MCP_CONNECTION_NONBLOCKING"] == "false"
    entry = server_of(ws, "claude-code")
    assert entry["timeout"] == (600 + 120 + 60) * 1000 and entry["alwaysLoad"] is True
    assert INSTRUCTIONS in (ws / "CLAUDE.md").read_text()


def test_codex_runs_no_shell_of_its_own_and_waits_for_approvals(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "epistemic.toml").write_text('default = "allow"\napproval = { timeout = 900 }\n')
    code, out, _ = init(ws, capsys, "codex")
    assert code == 0
    config = tomllib.loads((ws / ".codex" / "config.toml").read_text())
    assert (config["sandbox_mode"], config["approval_policy"]) == ("read-only", "never")
    assert config["features"] == {"shell_tool": False, "unified_exec": False, "view_image": False}
    entry = config["mcp_servers"]["epistemic"]
    assert entry["required"] is True and entry["default_tools_approval_mode"] == "approve"
    assert entry["tool_timeout_sec"] == 900 + 120 + 60  # above the policy's approval wait
    assert f"codex exec --trust -C {ws.resolve()}" in out


def test_json_configs_are_merged_and_the_users_keys_kept(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = {"command": "npx", "args": ["-y", "some-server"]}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": other}, "x": 1}))
    (ws / ".claude").mkdir()
    mine = {"model": "opus", "permissions": {"deny": ["WebFetch", "Bash"], "allow": ["Bash(ls)"]}}
    (ws / ".claude" / "settings.json").write_text(json.dumps(mine))
    code, out, _ = init(ws, capsys, "claude-code")
    assert code == 0
    entries = json.loads((ws / ".mcp.json").read_text())
    assert entries["mcpServers"]["other"] == other and entries["x"] == 1
    settings = json.loads((ws / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus"
    assert settings["permissions"]["allow"] == ["Bash(ls)", "mcp__epistemic"]
    deny = settings["permissions"]["deny"]
    assert deny[:2] == ["WebFetch", "Bash"] and set(CLAUDE_DENY) <= set(deny)
    assert deny.count("Bash") == 1
    assert "merged into .claude/settings.json" in out
    assert 'added to permissions.allow: "mcp__epistemic"' in out


CODEX_CONFIG = """# my Codex settings
model = "gpt-5.5"  # the one we pay for

[profiles.fast]
model = "gpt-5.6-luna"

[mcp_servers.docs]  # a server of our own
command = "docs-server"
"""


def test_toml_is_merged_keeping_the_users_comments(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / ".codex").mkdir()
    (ws / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    assert init(ws, capsys, "codex")[0] == 0
    text = (ws / ".codex" / "config.toml").read_text()
    for kept in ("# my Codex settings", "# the one we pay for", "# a server of our own"):
        assert kept in text
    config = tomllib.loads(text)
    assert config["model"] == "gpt-5.5" and config["profiles"]["fast"]["model"] == "gpt-5.6-luna"
    assert config["mcp_servers"]["docs"] == {"command": "docs-server"}
    assert config["sandbox_mode"] == "read-only"  # top level, not inside a table
    assert config["mcp_servers"]["epistemic"]["command"] == EPISTEMIC


def test_a_value_of_the_users_is_replaced_only_with_force(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / ".codex").mkdir()
    mine = 'sandbox_mode = "workspace-write"  # we need it\n' + CODEX_CONFIG
    (ws / ".codex" / "config.toml").write_text(mine)
    before = snapshot(ws)
    code, out, err = init(ws, capsys, "codex")
    assert code == 2 and out == "" and snapshot(ws) == before  # not even AGENTS.md
    assert '.codex/config.toml: sandbox_mode is "workspace-write"; init sets "read-only"' in err
    assert "--force" in err and "nothing was written" in err
    code, out, err = init(ws, capsys, "codex", "--force")
    assert code == 0
    text = (ws / ".codex" / "config.toml").read_text()
    assert tomllib.loads(text)["sandbox_mode"] == "read-only"
    assert "# my Codex settings" in text and "docs-server" in text
    assert 'replaced sandbox_mode (was "workspace-write")' in out


def test_another_epistemic_entry_is_a_conflict(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = {"command": "/old/venv/bin/epistemic", "args": ["mcp", "-C", "/elsewhere"]}
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"epistemic": entry}}))
    code, _, err = init(ws, capsys, "generic")
    assert code == 2
    assert 'mcpServers.epistemic.command is "/old/venv/bin/epistemic"' in err
    assert "mcpServers.epistemic.args is" in err
    assert init(ws, capsys, "generic", "--force")[0] == 0
    assert server_of(ws, "generic")["command"] == EPISTEMIC


@pytest.mark.parametrize(
    ("client", "path", "text", "problem"),
    [
        ("claude-code", ".mcp.json", '{"mcpServers": ', "not valid JSON"),
        ("claude-code", ".claude/settings.json", "[1, 2]", "not a JSON object"),
        (
            "claude-code",
            ".claude/settings.json",
            '{"permissions": 3}',
            "permissions is 3, not a table",
        ),
        ("codex", ".codex/config.toml", "model = ", "not valid TOML"),
        ("codex", ".codex/config.toml", "[features]\nx = 1\n[features]\n", "not valid TOML"),
        ("generic", "AGENTS.md", f"{SECTION_BEGIN}\nmine\n", "markers are not one pair"),
    ],
)
def test_a_file_that_does_not_parse_is_never_written(
    ws: Path,
    capsys: pytest.CaptureFixture[str],
    client: str,
    path: str,
    text: str,
    problem: str,
) -> None:
    (ws / path).parent.mkdir(parents=True, exist_ok=True)
    (ws / path).write_text(text)
    before = snapshot(ws)
    for extra in ((), ("--force",)):
        code, _, err = init(ws, capsys, client, *extra)
        if "not a table" in problem and extra:
            continue  # --force may replace a value of the wrong shape
        assert code == 2 and problem in err and "Traceback" not in err, err
        assert snapshot(ws) == before


def test_bad_workspaces_and_clients_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "codex", "-C", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert main(["init", "codex", "-C", str(tmp_path / "file")]) == 2
    with pytest.raises(SystemExit) as stopped:
        main(["init", "cursor", "-C", str(tmp_path)])
    assert stopped.value.code == 2 and "invalid choice: 'cursor'" in capsys.readouterr().err
    assert not any(tmp_path.iterdir()) or sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_unreadable_files_are_refused(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "AGENTS.md").write_bytes(b"caf\xe9\n")
    code, _, err = init(ws, capsys, "codex")
    assert code == 2 and "is not UTF-8 text" in err and not (ws / ".codex").exists()
    (ws / "AGENTS.md").unlink()
    (ws / ".mcp.json").mkdir()
    code, _, err = init(ws, capsys, "generic")
    assert code == 2 and "is not a regular file" in err and not (ws / "AGENTS.md").exists()


def test_a_bad_policy_stops_init(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "epistemic.toml").write_text('default = "perhaps"\n')
    code, _, err = init(ws, capsys, "codex")
    assert code == 2 and "epistemic.toml" in err and snapshot(ws).keys() == {"epistemic.toml"}


def test_instructions_are_a_section_of_the_users_file(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "CLAUDE.md").write_text("# House rules\nTabs, never spaces.")
    init(ws, capsys, "claude-code")
    text = (ws / "CLAUDE.md").read_text()
    assert text.startswith("# House rules\nTabs, never spaces.\n\n" + SECTION_BEGIN)
    assert INSTRUCTIONS in text and text.endswith(SECTION_END + "\n")
    edited = text.replace("never with a built-in", "also with a built-in") + "More rules.\n"
    (ws / "CLAUDE.md").write_text(edited)
    code, _, err = init(ws, capsys, "claude-code")
    assert code == 2 and "CLAUDE.md: its epistemic section differs" in err
    assert init(ws, capsys, "claude-code", "--force")[0] == 0
    assert (ws / "CLAUDE.md").read_text() == text + "More rules.\n"


def test_gitignore_gains_only_the_missing_lines(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / ".gitignore").write_text("node_modules/\n.epistemic")
    init(ws, capsys, "generic")
    lines = (ws / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["node_modules/", ".epistemic"]
    assert lines.count("/RATIONALE.md") == 1 and "/.epistemic/" not in lines


def test_print_shows_each_file_as_written_and_writes_nothing(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / "AGENTS.md").write_text("Be brief.\n")
    code, printed, _ = init(ws, capsys, "codex", "--print")
    assert code == 0 and snapshot(ws).keys() == {"AGENTS.md"}
    shown = split_printed(printed)
    assert list(shown) == [
        ".codex/config.toml (new)",
        "AGENTS.md (merged)",
        ".gitignore (new)",
    ]
    init(ws, capsys, "codex")
    for title, text in shown.items():
        assert (ws / title.split(" ")[0]).read_text() == text


def split_printed(printed: str) -> dict[str, str]:
    """`==> PATH (STATE) <==` blocks, each file's text as it would be written."""
    parts = re.split(r"^==> (.+?) <==\n", printed, flags=re.M)
    assert parts[0] == ""
    titles, texts = parts[1::2], parts[2::2]
    texts = [text[:-1] if i < len(texts) - 1 else text for i, text in enumerate(texts)]
    return dict(zip(titles, texts, strict=True))


def readme_section(title: str) -> str:
    """The README's section under TITLE, up to the next `## ` heading outside a code block."""
    lines = (ROOT / "README.md").read_text().split(title + "\n", 1)[1].splitlines(True)
    fenced, kept = False, []
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("## ") and not fenced:
            break
        kept.append(line)
    return "".join(kept)


def test_the_readme_shows_exactly_what_init_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    section = readme_section("## Any agent, through MCP")
    blocks = re.findall(r"```text\n\$ (epistemic init .+?)\n(.*?)```", section, re.S)
    assert [command.split()[2] for command, _ in blocks] == list(FILES)
    for command, shown in blocks:
        words = command.split()
        assert words[3:] == ["-C", "/path/to/repo", "--print"], command
        ws = tmp_path / words[2]
        ws.mkdir()
        code, printed, _ = init(ws, capsys, words[2], "--print")
        assert code == 0
        expected = printed.replace(EPISTEMIC, "/path/to/venv/bin/epistemic")
        assert shown == expected.replace(str(ws.resolve()), "/path/to/repo"), command


settings_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@pytest.mark.system  # end to end, slow for the default tier
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(max_size=6), settings_values, max_size=5))
def test_a_merge_keeps_every_other_key_and_is_idempotent(document: dict[str, Any]) -> None:
    wants = [
        Want(("permissions", "deny"), ["Bash", "Read"], union=True),
        Want(("env", "MCP_TIMEOUT"), "60000"),
    ]
    merged = merge_json(json.dumps(document), wants, force=True)
    result = json.loads(merged.text)
    for key, value in document.items():
        if key not in ("permissions", "env"):
            assert result[key] == value
        elif isinstance(value, dict):  # a table of the user's: only our key changes in it
            for inner, kept in value.items():
                if inner not in ("deny", "MCP_TIMEOUT"):
                    assert result[key][inner] == kept
                elif isinstance(kept, list):  # the user's denials come first, all kept
                    assert result[key][inner][: len(kept)] == kept
    assert {"Bash", "Read"} <= set(result["permissions"]["deny"])
    assert result["env"]["MCP_TIMEOUT"] == "60000"
    again = merge_json(merged.text, wants, force=False)
    assert again.text == merged.text and again.notes == [] and again.conflicts == []


def test_escapes_in_a_users_json_survive_the_merge(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / ".mcp.json").write_text('{"note": "\\ud800 and caf\\u00e9", "mcpServers": {}}')
    assert init(ws, capsys, "generic")[0] == 0
    assert json.loads((ws / ".mcp.json").read_text())["note"] == "\ud800 and café"


def test_a_users_file_keeps_its_mode(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "AGENTS.md").write_text("Be brief.\n")
    (ws / "AGENTS.md").chmod(0o600)
    init(ws, capsys, "codex")
    assert (ws / "AGENTS.md").stat().st_mode & 0o777 == 0o600


def test_a_file_where_a_folder_should_be_stops_everything(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / ".claude").write_text("not a folder")
    before = snapshot(ws)
    code, _, err = init(ws, capsys, "claude-code")
    assert code == 2 and ".claude is not a directory" in err and snapshot(ws) == before


def test_what_a_file_holds_cannot_drive_the_terminal(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = {"mcpServers": {"epistemic": {"command": "\x1b]0;owned\x07\x9b2J"}}}
    (ws / ".mcp.json").write_text(json.dumps(hostile, ensure_ascii=False))
    code, _, err = init(ws, capsys, "generic")
    assert code == 2 and "\x1b" not in err and "\x9b" not in err and "\\x9b2J" in err


def test_the_docs_give_the_headless_invocations_the_tests_run() -> None:
    from epistemic_agent.cli.client_setup import CLAUDE_HEADLESS, CODEX_HEADLESS

    lines = [line.format(workspace="/path/to/repo") for line in (CLAUDE_HEADLESS, CODEX_HEADLESS)]
    for doc in (ROOT / "README.md", ROOT / "docs" / "clients.md"):
        text = doc.read_text()
        assert all(f"\n{line}\n" in text for line in lines), doc
