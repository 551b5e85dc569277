"""What one command changed: fanotify where it can, a snapshot elsewhere."""
