"""Step 1 of the sales pipeline: raw application logs -> one JSON event per line.

Usage: python3 step1_extract.py RAW_DIR OUTPUT

Reads every ``*.log`` file in RAW_DIR, in name order, and writes OUTPUT as JSON
Lines (UTF-8), one object per request event, in log order::

    {"id": "4a11", "ts": "2024-06-03T08:11:39Z", "user": "bob",
     "action": "purchase", "amount": "7.25"}

A request event is an INFO line with a ``req=`` field. ``amount`` is the text
of the line's amount field, or null when it has none (views have none).
Heartbeats, warnings and any other lines are not events and are skipped.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

EVENT = re.compile(r"^(?P<ts>\S+) INFO\s+req=(?P<id>\w+)\s+(?P<fields>.*)$")


def parse_fields(text: str) -> dict[str, str]:
    """``user=bob action=view`` -> {"user": "bob", "action": "view"}."""
    return dict(part.split("=", 1) for part in text.split() if "=" in part)


def extract(raw_dir: Path) -> Iterator[dict[str, Any]]:
    """Every request event of every log in ``raw_dir``, in order."""
    for log in sorted(raw_dir.glob("*.log")):
        with log.open(encoding="utf-8") as lines:
            for line in lines:
                match = EVENT.match(line.rstrip("\n"))
                if match is None:
                    continue
                fields = parse_fields(match["fields"])
                yield {
                    "id": match["id"],
                    "ts": match["ts"],
                    "user": fields["user"],
                    "action": fields["action"],
                    "amount": fields.get("amount"),
                }


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    raw_dir, output = Path(argv[1]), Path(argv[2])
    count = 0
    with output.open("w", encoding="utf-8") as out:
        for event in extract(raw_dir):
            out.write(json.dumps(event, ensure_ascii=False) + "\n")
            count += 1
    print(f"step1: {count} events -> {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
