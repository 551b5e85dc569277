"""What the server says of itself in the handshake (`initialize` and `tools/list`), in the
SDK's words: the front (front.py) answers them before the SDK has loaded, and
tests/mcp/test_mcp_front.py compares the two."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent import system_prompt
from ..core import TOOL_SPECS, __version__

PROGRESS_EVERY = 10.0  # seconds between progress notifications while a call waits or runs

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

SERVER_NAME = "epistemic"
#: The protocol revisions the SDK (mcp 2.3) negotiates through `initialize`, oldest first;
#: tests/mcp/test_mcp_front.py checks them against `mcp_types.version`.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
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


def negotiated(requested: object) -> str:
    """The version the server answers with: the client's, when it is one it speaks."""
    if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
        return requested
    return HANDSHAKE_VERSIONS[-1]


def handshake_answers() -> dict[str, Callable[[Any], Any]]:
    """The results of `initialize` and `tools/list`: exactly what the SDK would say."""

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


def client_of(params: object) -> dict[str, Any]:
    """The client's name and version, from its `initialize` (each None when it gave none), as
    the session's header records them."""
    info = params.get("clientInfo") if isinstance(params, dict) else None
    if not isinstance(info, dict):
        return {"name": None, "version": None}
    name, version = info.get("name"), info.get("version")
    return {
        "name": name if isinstance(name, str) else None,
        "version": version if isinstance(version, str) else None,
    }


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
