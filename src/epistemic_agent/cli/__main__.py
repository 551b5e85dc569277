"""`python -m epistemic_agent.cli`: the same as the `epistemic` command."""

import sys

from .app import main

sys.exit(main())
