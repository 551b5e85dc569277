"""The MCP server: the four tools behind the gate, for any agent client."""

PROGRESS_EVERY = 10.0  # seconds between progress notifications while a call waits or runs
