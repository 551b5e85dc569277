"""The audit bundle: export and verification."""
