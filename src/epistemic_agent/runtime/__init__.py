"""Wiring: the session (a call through its named steps), the agent loop, the prompt, the live
view."""
