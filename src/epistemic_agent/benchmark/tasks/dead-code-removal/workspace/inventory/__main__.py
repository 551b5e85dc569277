"""Entry point: ``python3 -m inventory STOCKFILE COMMAND [ARGS...]``."""

import sys

from .commands import main

sys.exit(main(sys.argv[1:]))
