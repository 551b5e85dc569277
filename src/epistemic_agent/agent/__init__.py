"""The agent: the loop (model, then gate, then run, until a stop), its model calls, the
compaction that keeps a long session in the context window, the prompt, resuming a session's
conversation, and what the front ends print (JSON events, the live view)."""
