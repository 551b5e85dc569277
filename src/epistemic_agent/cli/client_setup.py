"""What `epistemic init CLIENT` writes into a workspace so that the client runs every act
through `epistemic mcp`, headless included: the MCP entry, the settings that take the client's
own shell and file tools away, its timeouts, the instructions file and a `.gitignore`.

The facts behind each setting (tool names, config keys, defaults) were checked against the
client versions that tests/mcp/test_clients.py installs; docs/clients.md explains them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import struct
from .config_merge import Want

if TYPE_CHECKING:
    from pathlib import Path

CLIENTS = ("claude-code", "codex", "generic")
SERVER = "epistemic"
COMMAND_TIMEOUT = 120  # seconds: a command's default timeout (executor.DEFAULT_TIMEOUT)
MARGIN = 60  # seconds the client waits beyond the approval wait and the command

INSTRUCTIONS = (
    "Run every command and make every file change with the epistemic MCP tools (bash, "
    "read_file, write_file, str_replace_edit), never with a built-in shell or file tool; "
    "declare the act type and your reason on every call; a REJECTED or DENIED result did not "
    "run: read it, then fix the call or change course."
)
GITIGNORE = ["/.epistemic/", "/RATIONALE.md"]
GITIGNORE_COMMENT = "# epistemic: the session's record (export it with `epistemic export`)"

#: Claude Code's built-in tools that run programs or read or write files (deny rules also
#: bind its subagents), by the names Claude Code 2.1.332 knows: it warns on every run about a
#: deny rule that names no tool it knows. Web tools, agents, skills and schedules stay.
CLAUDE_DENY = (
    "Bash",
    "Monitor",
    "PowerShell",
    "Read",
    "Write",
    "Edit",
    "NotebookEdit",
    "Glob",
    "Grep",
    "LSP",
    "EnterWorktree",
    "ExitWorktree",
    "Artifact",
    "DesignSync",
    "Projects",
    "SendUserFile",
)
#: `-p` never trusts a workspace, and Claude Code drops (with a warning) the allow rules of the
#: project's own settings files there: `--setting-sources user` reads none of them, and
#: `--settings` loads the workspace's .claude/settings.json whole, as the command line's.
CLAUDE_HEADLESS = (
    'cd {workspace} && claude -p "TASK" --mcp-config .mcp.json --strict-mcp-config '
    "--settings .claude/settings.json --setting-sources user"
)
CODEX_HEADLESS = 'codex exec --trust -C {workspace} "TASK"'
CODEX_HEADER = (
    "Written by `epistemic init codex`: Codex runs every command and file change through the\n"
    "epistemic MCP server. Its own shell and image tools are off, and its sandbox is read-only\n"
    "with no approvals, so its patch tool cannot write. Codex reads this file in a trusted\n"
    "project only: `codex exec --trust` (once) or accept the trust prompt."
)


@struct
class FilePlan:
    """One file and what init wants in it."""

    path: str  # relative to the workspace
    kind: str  # json, toml, section (Markdown) or lines (.gitignore)
    wants: tuple[Want, ...] = ()
    body: str = ""  # section: the Markdown; lines: unused
    header: str = ""  # toml: the comment that opens a new file


@struct
class Setup:
    client: str
    files: tuple[FilePlan, ...]
    headless: tuple[str, ...]  # the invocations to print afterwards
    notes: tuple[str, ...] = ()


def tool_timeout(approval_timeout: float) -> int:
    """Seconds a client should wait for one call: the approval wait, the command, a margin."""
    return int(approval_timeout) + COMMAND_TIMEOUT + MARGIN


def plan(client: str, workspace: Path, command: list[str], approval_timeout: float) -> Setup:
    """What init writes for CLIENT; `command` starts `epistemic` (an absolute path)."""
    args = [*command[1:], "mcp", "-C", str(workspace), "--here"]  # the workspace init chose
    timeout = tool_timeout(approval_timeout)
    gitignore = FilePlan(".gitignore", "lines")
    if client == "claude-code":
        return _claude(workspace, command[0], args, timeout, gitignore)
    if client == "codex":
        return _codex(workspace, command[0], args, timeout, gitignore)
    entry = (
        Want(("mcpServers", SERVER, "command"), command[0]),
        Want(("mcpServers", SERVER, "args"), args),
    )
    return Setup(
        client,
        (FilePlan(".mcp.json", "json", entry), _instructions("AGENTS.md"), gitignore),
        (),
        (
            "take your client's own shell and file tools away in its settings, and give it "
            f"a tool timeout of at least {timeout} s (the approval wait, the command, a margin)",
        ),
    )


def _instructions(path: str) -> FilePlan:
    return FilePlan(path, "section", body=f"## Tools\n\n{INSTRUCTIONS}")


def _claude(
    workspace: Path, program: str, args: list[str], timeout: int, gitignore: FilePlan
) -> Setup:
    server = ("mcpServers", SERVER)
    entry = (
        Want((*server, "type"), "stdio"),
        Want((*server, "command"), program),
        Want((*server, "args"), args),
        Want((*server, "timeout"), timeout * 1000),  # milliseconds
        Want((*server, "alwaysLoad"), True),  # in the prompt from the start, never deferred
    )
    settings = (
        Want(("permissions", "allow"), [f"mcp__{SERVER}"], union=True),
        Want(("permissions", "deny"), list(CLAUDE_DENY), union=True),
        Want(("enabledMcpjsonServers",), [SERVER], union=True),
        Want(("env", "MCP_CONNECTION_NONBLOCKING"), "false"),  # wait for the server
        Want(("env", "MCP_TIMEOUT"), "60000"),  # its start-up, in milliseconds
    )
    files = (
        FilePlan(".mcp.json", "json", entry),
        FilePlan(".claude/settings.json", "json", settings),
        _instructions("CLAUDE.md"),
        gitignore,
    )
    return Setup("claude-code", files, (CLAUDE_HEADLESS.format(workspace=_quoted(workspace)),))


def _codex(
    workspace: Path, program: str, args: list[str], timeout: int, gitignore: FilePlan
) -> Setup:
    server = ("mcp_servers", SERVER)
    config: tuple[Want, ...] = (
        Want(("sandbox_mode",), "read-only"),
        Want(("approval_policy",), "never"),
        Want(("features", "shell_tool"), False),
        Want(("features", "unified_exec"), False),
        Want(("features", "view_image"), False),
        Want((*server, "command"), program),
        Want((*server, "args"), args),
        Want((*server, "required"), True),  # the turn waits for the server to start
        Want((*server, "startup_timeout_sec"), 30),
        Want((*server, "tool_timeout_sec"), timeout),
        Want((*server, "default_tools_approval_mode"), "approve"),  # the policy decides
    )
    files = (
        FilePlan(".codex/config.toml", "toml", config, header=CODEX_HEADER),
        _instructions("AGENTS.md"),
        gitignore,
    )
    return Setup("codex", files, (CODEX_HEADLESS.format(workspace=_quoted(workspace)),))


def _quoted(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))
