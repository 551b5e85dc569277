"""RATIONALE.md: an incremental projection of the journal."""
