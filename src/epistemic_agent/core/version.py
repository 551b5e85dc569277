"""The version of epistemic-agent, as the record and the MCP handshake name it."""

__version__ = "0.1.0"
