"""One self-contained HTML page of a session."""
