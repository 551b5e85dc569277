"""Traceability: which declared act wrote each line, the requirement matrix."""
