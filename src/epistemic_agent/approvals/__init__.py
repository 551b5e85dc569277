"""Approvals: the request a policy `ask` makes, the channels a human answers on (the terminal,
files), the signed answers, and which session a pending request belongs to."""
