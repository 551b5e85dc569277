"""A session: one call through its named steps (check, decide, record, approve, run, observe,
record the outcome, publish), the collaborators of those steps, and the session's life
(opening, continuing, recovering, closing)."""
