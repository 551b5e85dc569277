"""`epistemic mcp` as a client meets it: the server process driven by the official SDK's client
over stdio, and the raw JSON-RPC messages of the handshake, for tests that write the stream.

Imported as `from mcpclient import ...`; pytest puts tests/ on the path (pyproject's
`pythonpath`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import EPISTEMIC

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def initialize_request(client: str = "probe", version: str = "1") -> dict[str, Any]:
    """The `initialize` request (id 1) that a client called `client`, at `version`, sends."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": client, "version": version},
        },
    }


@asynccontextmanager
async def connect(
    ws: Path, *opts: str, errlog: Any = None, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized SDK session with `epistemic mcp -C ws *opts`; the server's stderr goes
    to `errlog`, or else to `server.err` beside the workspace."""
    params = StdioServerParameters(command=EPISTEMIC, args=["mcp", "-C", str(ws), *opts], env=env)
    log = errlog if errlog is not None else open(ws.parent / "server.err", "w")  # noqa: SIM115
    try:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
    finally:
        if errlog is None:
            log.close()
