"""`python -m epistemic_agent.cli.journal_docs [FILE]`: rewrite the field tables of FILE
(default docs/journal-format.md) from the record schema (journal/schema_docs.py); `--check`
only says whether it is current (exit 1 if not)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..journal import DEFAULT, render

COMMAND = "python -m epistemic_agent.cli.journal_docs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=COMMAND,
        description="Regenerate the field tables of docs/journal-format.md from the schema.",
    )
    parser.add_argument("path", nargs="?", default=str(DEFAULT), help="the doc to rewrite")
    parser.add_argument("--check", action="store_true", help="exit 1 when it is stale")
    args = parser.parse_args(argv)
    path, check = Path(args.path), bool(args.check)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        print(f"{path}: {error.strerror or error}", file=sys.stderr)
        return 2
    wanted = render(text)
    if wanted == text:
        return 0
    if check:
        print(f"{path} is stale: run `{COMMAND}`")
        return 1
    path.write_text(wanted, encoding="utf-8")
    print(f"{path}: tables regenerated from the schema")
    return 0


if __name__ == "__main__":
    sys.exit(main())
