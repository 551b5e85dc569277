"""The exit statuses the commands share (docs/cli.md lists every one)."""

EXIT_REJECTED = 2  # the gate rejected the call, or a human denied it
EXIT_USAGE = 2
EXIT_RECORD = 74  # the record cannot be written (a broken or unreadable journal)
EXIT_TIMEOUT = 124
EXIT_PIPE = 141  # what a shell reports for a reader that went away (128 + SIGPIPE)
