"""`epistemic mcp`: the four epistemic tools served over the Model Context Protocol (stdio), so
any MCP client's agent goes through the same gate, policy, journal, report and enforcement.

Built on the official `mcp` SDK's low-level server (2.x), which lets the tools keep exactly
the JSON Schemas the built-in agent uses. Tool calls run one at a time, in a worker thread
(commands and approvals block). The SDK points fd 1 at stderr while it serves, so nothing but
protocol messages reaches stdout; this module logs to stderr only.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from functools import cache, partial
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from ..core.cancel import Cancel
from ..core.tools import TOOL_SPECS
from ..core.version import __version__
from ..runtime.prompt import system_prompt
from ..runtime.results import Settings
from ..runtime.session import Session
from . import PROGRESS_EVERY
from .front import Front, Stop, divert_stdout, negotiated

if TYPE_CHECKING:
    from typing import Any

    from ..policy.rules import Policy

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
        supervisor: Any = None,
    ) -> None:
        self.workspace = workspace
        self.supervisor = supervisor
        self.policy = policy
        self.implicit = implicit
        self.approval_timeout = approval_timeout
        self.session: Session | None = None
        self.lock = threading.Lock()
        self.current: Cancel | None = None  # the call in flight, to withdraw on disconnect
        self.disconnected = threading.Event()  # the client closed its end of stdio
        self.stop: Stop | None = None  # the signals that end the server (serve installs it)
        self._closed = False
        self.progress_every = PROGRESS_EVERY
        self.session_choice: str | None = None  # --session: None starts a new session
        self.ticket: str | None = None  # --ticket

    def call(
        self, name: str, arguments: object, client: dict[str, Any], cancel: Cancel | None = None
    ) -> tuple[str, bool]:
        """Run one tool call; the text for the client and whether it is an error. A `cancel`
        set meanwhile (the client gave up on the call) withdraws or stops it."""
        with self.lock:
            self.current = cancel
            try:
                if self._closed:  # a call the SDK took just before serving ended
                    return "epistemic mcp is closing: the call was not run", True
                session = self._open(client)
                result = session.call(name, arguments, cancel=cancel)
            finally:
                self.current = None
                if cancel is not None:
                    cancel.close()
        failed = result.status in ("rejected", "denied", "cancelled") or not result.ok
        return result.for_model(), failed

    def _open(self, client: dict[str, Any]) -> Session:
        if self.session is None:
            settings = Settings(
                approval_timeout=self.approval_timeout,
                approval_channel="file",
                session=self.session_choice,
                owns_session=True,
            )
            header = {"mode": "mcp", "mcp_client": client}
            if self.ticket is not None:
                header["ticket"] = self.ticket
            self.session = Session(
                self.workspace,
                settings,
                header,
                self.policy,
                policy_implicit=self.implicit,
                supervisor=self.supervisor,
            ).open()
            for notice in self.session.notices:
                print(f"epistemic mcp: {notice}", file=sys.stderr)
            if not self.session.created:
                ticket = {"ticket": self.ticket} if self.ticket is not None else {}
                self.session.event("run", mode="mcp", mcp_client=client, **ticket)
        return self.session

    def gone(self, client: str | None = None) -> tuple[str, str]:
        """Who ended a call the client can no longer see the result of, and why (the record
        says `cancelled by WHO: WHY`)."""
        if self.stop is not None and self.stop.fired():
            return "epistemic mcp", f"the server was ended by {self.stop.name}"
        if self.disconnected.is_set():
            return client or "epistemic mcp", "the client disconnected"
        return client or "the client", "the client cancelled the request"

    def close(self) -> None:
        """Withdraw or stop the call in flight (the client cannot see its result any more),
        then close the session: its outcome is recorded, then `closed`. Once: the main
        thread calls it when serving ends, never a signal handler."""
        if self._closed:
            return
        self._closed = True
        current = self.current
        if current is not None:
            current.set(*self.gone())
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


@cache
def sdk() -> SimpleNamespace:
    """The MCP SDK and anyio: the one accessor for them. Lazy because importing them takes about
    a second, and the front (front.py) answers the client's handshake meanwhile."""
    import anyio
    import mcp_types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    return SimpleNamespace(anyio=anyio, types=mcp_types, Server=Server, stdio_server=stdio_server)


def build_server(keeper: Gatekeeper) -> Any:
    """The SDK server with the four tools."""
    loaded = sdk()
    anyio, types, Server = loaded.anyio, loaded.types, loaded.Server

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
        cancel = Cancel()
        work = partial(keeper.call, params.name, arguments, client, cancel)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_keep_alive, ctx, keeper.progress_every)
                text, failed = await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
                group.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():  # the SDK ends every handler when input ends
            cancel.set(*keeper.gone(client.get("name")))
            raise
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=failed)

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=instructions(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _keep_alive(ctx: Any, every: float) -> None:
    """Progress notifications while a call waits for approval or runs, for clients that sent
    a progress token (they may count them as signs of life instead of timing the call out)."""
    beats = 0
    while True:
        await sdk().anyio.sleep(every)
        beats += 1
        message = f"still working after {beats * every:g} s (an approval, or a command)"
        await ctx.session.report_progress(beats, None, message)


def handshake_answers() -> dict[str, Any]:
    """What the front answers before the SDK is ready: exactly what the SDK would say."""

    def initialize(params: Any) -> dict[str, Any]:
        requested = params.get("protocolVersion") if isinstance(params, dict) else None
        return {
            "capabilities": {"tools": {"listChanged": False}},
            "instructions": instructions(),
            "protocolVersion": negotiated(requested),
            "serverInfo": {"name": SERVER_NAME, "version": __version__},
        }

    def list_tools(params: Any) -> dict[str, Any]:
        return {"tools": [_tool_json(spec) for spec in TOOL_SPECS]}

    return {"initialize": initialize, "tools/list": list_tools}


def _tool_json(spec: Any) -> dict[str, Any]:
    hints = ANNOTATIONS[spec.name]
    return {
        "annotations": {
            "destructiveHint": hints["destructive"],
            "idempotentHint": hints["idempotent"],
            "openWorldHint": hints["open_world"],
            "readOnlyHint": hints["read_only"],
            "title": spec.name,
        },
        "description": spec.description,
        "inputSchema": spec.parameters,
        "name": spec.name,
    }


def serve(keeper: Gatekeeper) -> None:
    """Serve over stdio until the client closes the connection or ends the server with a
    signal: the front answers the handshake at once (front.py) while the SDK loads, then the
    SDK serves the rest. Either way the session is closed before this returns."""
    wire = divert_stdout()
    keeper.stop = stop = Stop()
    stop.install()
    ready = threading.Event()
    loaded: dict[str, Any] = {}
    threading.Thread(target=_load_sdk, args=(keeper, loaded, ready), daemon=True).start()
    front = Front(0, wire, handshake_answers(), stop)
    front.until(ready)
    if stop.fired():  # ended before the SDK was ready: no call was served, no session opened
        with contextlib.suppress(OSError):
            print(f"epistemic mcp: ended by {stop.name}", file=sys.stderr, flush=True)
        return
    ready.wait()
    if "error" in loaded:
        raise loaded["error"]
    anyio, stdio_server, server = loaded["anyio"], loaded["stdio_server"], loaded["server"]

    async def main() -> None:
        streams = {
            "stdin": anyio.wrap_file(front.reader(keeper.disconnected.set)),
            "stdout": anyio.wrap_file(front.writer()),
        }
        async with stdio_server(**streams) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        keeper.close()
        stop.ignore()
        said = "epistemic mcp: connection closed; the session is journaled"
        if stop.fired():
            said = f"epistemic mcp: ended by {stop.name}; the session is journaled"
        if keeper.session is not None:  # an anchor in the client's log, outside the workspace
            position = keeper.session.journal.position
            said += f"\nepistemic mcp: journal head {position.head} (line {position.lines})"
        with contextlib.suppress(OSError):  # a client that ended us may have closed stderr
            print(said, file=sys.stderr, flush=True)  # one write: the client may end us soon


def _load_sdk(keeper: Gatekeeper, loaded: dict[str, Any], ready: threading.Event) -> None:
    """Import the SDK and build the server (in a thread, while the front answers)."""
    try:
        found = sdk()
        loaded.update(
            anyio=found.anyio, stdio_server=found.stdio_server, server=build_server(keeper)
        )
    except BaseException as error:  # reported by the main thread
        loaded["error"] = error
    finally:
        ready.set()
