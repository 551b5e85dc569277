"""The `epistemic` command line: argparse and one module per command group; the only place for lazy
imports at start-up.
"""

from .app import main

__all__ = ["main"]
