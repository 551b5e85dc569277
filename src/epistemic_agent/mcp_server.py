"""`epistemic mcp`: the four epistemic tools served over the Model Context Protocol (stdio), so
any MCP client's agent goes through the same gate, policy, journal, report and enforcement.

Built on the official `mcp` SDK's low-level server (2.x), which lets the tools keep exactly
the JSON Schemas the built-in agent uses. Tool calls run one at a time, in a worker thread
(commands and approvals block). The SDK points fd 1 at stderr while it serves, so nothing but
protocol messages reaches stdout; this module logs to stderr only.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from . import __version__
from .prompt import system_prompt
from .tools import TOOL_SPECS

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from typing import Any

    from .policy import Policy
    from .session import Session

SERVER_NAME = "epistemic"
#: MCP tool annotations (hints for the client): what each tool may do to the workspace.
ANNOTATIONS: dict[str, dict[str, bool]] = {
    "bash": {"read_only": False, "destructive": True, "idempotent": False, "open_world": True},
    "read_file": {"read_only": True, "destructive": False, "idempotent": True, "open_world": False},
    "write_file": {
        "read_only": False,
        "destructive": True,
        "idempotent": True,
        "open_world": False,
    },
    "str_replace_edit": {
        "read_only": False,
        "destructive": True,
        "idempotent": False,
        "open_world": False,
    },
}
INSTRUCTIONS_TAIL = (
    "\nUse these tools instead of any built-in shell or file tools: every call is checked, "
    "journaled and may need a human's approval. A call that comes back as an error starting "
    "with REJECTED or DENIED did not run; read the message, fix the call or change course."
)


def instructions() -> str:
    """The server's instructions: the built-in agent's system prompt, plus how to use them."""
    return system_prompt() + INSTRUCTIONS_TAIL


class Gatekeeper:
    """Opens the session on the first tool call (after the handshake, so the header can name
    the client) and runs calls one at a time."""

    def __init__(
        self,
        workspace: Path,
        policy: Policy,
        approval_timeout: float | None,
        implicit: bool = False,
    ) -> None:
        self.workspace = workspace
        self.policy = policy
        self.implicit = implicit
        self.approval_timeout = approval_timeout
        self.session: Session | None = None
        self.lock = threading.Lock()

    def call(self, name: str, arguments: object, client: dict[str, Any]) -> tuple[str, bool]:
        """Run one tool call; the text for the client and whether it is an error."""
        with self.lock:
            session = self._open(client)
            result = session.call(name, arguments)
        failed = result.status in ("rejected", "denied") or not result.ok
        return result.for_model(), failed

    def _open(self, client: dict[str, Any]) -> Session:
        if self.session is None:
            from .session import Session, Settings

            settings = Settings(approval_timeout=self.approval_timeout, approval_channel="file")
            header = {"mode": "mcp", "mcp_client": client}
            self.session = Session(
                self.workspace, settings, header, self.policy, policy_implicit=self.implicit
            )
            if not self.session.created:
                self.session.event("run", mode="mcp", mcp_client=client)
        return self.session

    def close(self) -> None:
        with self.lock:
            if self.session is not None:
                self.session.close()


def _client_of(ctx: Any) -> dict[str, Any]:
    """The client's name and version, from the initialisation handshake."""
    params = getattr(getattr(ctx, "session", None), "client_params", None)
    info = getattr(params, "client_info", None)
    if info is None:
        return {"name": None, "version": None}
    return {"name": getattr(info, "name", None), "version": getattr(info, "version", None)}


def build_server(keeper: Gatekeeper) -> Any:
    """The SDK server with the four tools."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tools = [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=spec.parameters,
            annotations=types.ToolAnnotations(
                title=spec.name,
                read_only_hint=ANNOTATIONS[spec.name]["read_only"],
                destructive_hint=ANNOTATIONS[spec.name]["destructive"],
                idempotent_hint=ANNOTATIONS[spec.name]["idempotent"],
                open_world_hint=ANNOTATIONS[spec.name]["open_world"],
            ),
        )
        for spec in TOOL_SPECS
    ]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        client = _client_of(ctx)
        arguments = params.arguments if params.arguments is not None else {}
        text, failed = await anyio.to_thread.run_sync(keeper.call, params.name, arguments, client)
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=failed)

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=instructions(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(keeper: Gatekeeper) -> None:
    """Serve over stdio until the client closes the connection."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(keeper)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        keeper.close()
        said = "epistemic mcp: connection closed; the session is journaled"
        if keeper.session is not None:  # an anchor in the client's log, outside the workspace
            position = keeper.session.journal.position
            said += f"\nepistemic mcp: journal head {position.head} (line {position.lines})"
        print(said, file=sys.stderr, flush=True)  # one write: the client may end us soon


def register(sub: Any) -> None:
    from .cliargs import policy_options, workspace_option

    p = sub.add_parser(
        "mcp",
        help="serve the four tools to any MCP client (stdio)",
        description="An MCP server over stdio: bash, read_file, write_file and "
        "str_replace_edit behind the gate, policy, journal and report of the workspace. "
        "Approvals go through `epistemic pending` / `approve` / `deny` (stdio belongs to "
        "the protocol). Logs go to stderr.",
    )
    workspace_option(p)
    policy_options(p)
    p.set_defaults(handler=_cmd_mcp)


def _cmd_mcp(args: Any) -> int:
    from .cliargs import chosen_policy
    from .errors import UsageError
    from .guard import workspace_policy

    directory = Path(args.directory).resolve()
    if not directory.is_dir():
        raise UsageError(f"workspace {args.directory} is not a directory")
    if args.approval_timeout is not None and not args.approval_timeout > 0:
        raise UsageError("--approval-timeout must be a positive number of seconds")
    named = chosen_policy(args)
    policy = named or workspace_policy(directory)  # a bad policy stops here
    keeper = Gatekeeper(directory, policy, args.approval_timeout, implicit=named is None)
    print(f"epistemic mcp: serving {directory} (policy {policy.source})", file=sys.stderr)
    serve(keeper)
    return 0
