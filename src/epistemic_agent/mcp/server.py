"""`epistemic mcp`: the four epistemic tools served over the Model Context Protocol (stdio), so
any MCP client's agent goes through the same gate, policy, journal, report and enforcement.

The gatekeeper runs the calls, one at a time, in worker threads (commands and approvals
block), whoever serves them: the front (front.py, calls.py), or the official `mcp` SDK's
low-level server (2.x), for what the front leaves to it, built here with exactly the JSON
Schemas the built-in agent uses. Nothing but protocol messages reaches stdout (fd 1 points at
stderr while the server runs); this module logs to stderr only.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from functools import cache, partial
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from ..core import TOOL_SPECS, Cancel, __version__
from ..effects import classifier
from ..execute import observer_class
from ..session import Session, Settings
from .handshake import ANNOTATIONS, PROGRESS_EVERY, SERVER_NAME, instructions

if TYPE_CHECKING:
    from typing import Any

    from ..policy import Policy
    from .stop import Stop
    from .streams import Replay, Wire


class Gatekeeper:
    """Opens the session once the client has introduced itself (`begin`: its header names the
    client), or else at the first tool call, and runs calls one at a time."""

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
        self._failed: Exception | None = None  # why `begin` could not open the session

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

    def begin(self, client: dict[str, Any]) -> None:
        """Open the session now, before any call, and load what the first act would load on
        its way (`_ready_for_acts`): the first call then costs about what the others do.
        What stops the session opening is kept for the first call, which fails with it as if
        it had opened the session itself; the next call tries again."""
        with self.lock:
            if self._closed or self.session is not None:
                return
            try:
                self._open(client)
            except Exception as error:
                self._failed = error
                return
            with contextlib.suppress(Exception):  # the first act meets, and says, what fails
                _ready_for_acts()

    def _open(self, client: dict[str, Any]) -> Session:
        if self._failed is not None:
            failed, self._failed = self._failed, None
            raise failed
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


def _ready_for_acts() -> None:
    """Load what an act loads the first time, while the client is still thinking: the gate's
    command classifier (its program tables and the bash parser), the observer of the
    workspace and the tripwire of the act's confinement. They are loaded late for the sake
    of `exec`'s start-up; a server's session runs acts until it ends."""
    from ..execute import Tripwire  # noqa: F401 - loaded, for the first act

    classifier()("ls")
    observer_class("fanotify")


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


def run_sdk(keeper: Gatekeeper, reader: Replay, writer: Wire) -> None:
    """Serve the rest of the connection with the SDK (front.py hands it over)."""
    loaded = sdk()
    anyio, server = loaded.anyio, build_server(keeper)

    async def main() -> None:
        streams = {"stdin": anyio.wrap_file(reader), "stdout": anyio.wrap_file(writer)}
        async with loaded.stdio_server(**streams) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
