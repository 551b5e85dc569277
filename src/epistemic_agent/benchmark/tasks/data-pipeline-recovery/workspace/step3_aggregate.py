"""Step 3 of the sales pipeline: clean sales records -> report.json.

Usage: python3 step3_aggregate.py CLEAN OUTPUT

Reads the JSON Lines written by step 2 and writes OUTPUT, a JSON object with:

- ``records``: the number of sales records (purchases and refunds).
- ``purchases`` / ``refunds``: how many records are purchases (cents > 0) and
  refunds (cents < 0).
- ``net_cents``: the sum of ``cents`` over all records.
- ``by_day``: {day: net cents of that day}, days in order.
- ``by_user``: {user: net cents of that user}, users in alphabetical order.
- ``top_user``: the user with the highest net cents (a tie goes to the
  alphabetically first); null when there are no records.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The report described in the module docstring."""
    by_day: defaultdict[str, int] = defaultdict(int)
    by_user: defaultdict[str, int] = defaultdict(int)
    for record in records:
        by_day[record["day"]] += record["cents"]
        by_user[record["user"]] += record["cents"]
    top = min(by_user, key=lambda user: (-by_user[user], user)) if by_user else None
    return {
        "records": len(records),
        "purchases": sum(1 for record in records if record["cents"] > 0),
        "refunds": sum(1 for record in records if record["cents"] < 0),
        "net_cents": sum(record["cents"] for record in records),
        "by_day": dict(sorted(by_day.items())),
        "by_user": dict(sorted(by_user.items())),
        "top_user": top,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    source, output = Path(argv[1]), Path(argv[2])
    with source.open(encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    report = aggregate(records)
    output.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"step3: {len(records)} records -> {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
