"""Step 2 of the sales pipeline: events -> clean sales records.

Usage: python3 step2_clean.py EVENTS OUTPUT

Reads the JSON Lines written by step 1 and keeps the sales: purchases and
refunds (views and other actions are dropped) by real customers (test
accounts, whose user name starts with ``test_``, are dropped). Writes OUTPUT as
JSON Lines (UTF-8), one record per sale, in input order::

    {"id": "4a11", "day": "2024-06-03", "user": "bob", "cents": 725}

``user`` is lower-cased (the apps log "Bob", "BOB" and "bob" for the same
customer). ``cents`` is the amount in cents: positive for a purchase, negative
for a refund.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

SALES = {"purchase": 1, "refund": -1}


def to_cents(amount: str) -> int:
    """The amount "12.50" as 1250 cents, exactly (no binary floating point)."""
    return int(Decimal(amount) * 100)


def clean(events: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The sales records among ``events``."""
    for event in events:
        sign = SALES.get(event["action"])
        if sign is None or event["user"].startswith("test_"):
            continue
        yield {
            "id": event["id"],
            "day": event["ts"][:10],
            "user": event["user"].lower(),
            "cents": sign * to_cents(event["amount"]),
        }


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    source, output = Path(argv[1]), Path(argv[2])
    with source.open(encoding="utf-8") as lines:
        events = [json.loads(line) for line in lines]
    count = 0
    with output.open("w", encoding="utf-8") as out:
        for record in clean(events):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    print(f"step2: {count} sales of {len(events)} events -> {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
