"""The MCP server: the four tools behind the gate, for any agent client."""
