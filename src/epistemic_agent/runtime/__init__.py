"""Arguments several commands share."""
