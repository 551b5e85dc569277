"""Billable days and amounts per contract, for the monthly invoices.

Usage: python3 billing.py [CONTRACTS_CSV] [HOLIDAYS_TXT]

``contracts.csv`` has the columns contract, start, end, day_rate (dates in ISO
format, the day rate in whole euros). ``holidays.txt`` lists one ISO date per
line; blank lines and ``#`` comments are ignored. A contract bills its day rate
for every working day from its start to its end, both included.
"""

from __future__ import annotations

import csv
import sys
from datetime import date
from pathlib import Path

from workdays import count_workdays


def load_holidays(path: Path) -> set[date]:
    """The holidays listed in ``path``."""
    found = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if text:
            found.add(date.fromisoformat(text))
    return found


def load_contracts(path: Path) -> list[dict[str, str]]:
    """The rows of ``path``, as dictionaries keyed by column name."""
    with path.open(newline="", encoding="utf-8") as rows:
        return list(csv.DictReader(rows))


Line = tuple[str, int, int]  # (contract, billable days, amount in euros)


def invoice_lines(contracts: list[dict[str, str]], holidays: set[date]) -> list[Line]:
    """(contract, billable days, amount in euros) for every contract, in order."""
    lines = []
    for row in contracts:
        start, end = date.fromisoformat(row["start"]), date.fromisoformat(row["end"])
        days = count_workdays(start, end, holidays)
        lines.append((row["contract"], days, days * int(row["day_rate"])))
    return lines


def main(argv: list[str]) -> int:
    contracts = load_contracts(Path(argv[1] if len(argv) > 1 else "contracts.csv"))
    holidays = load_holidays(Path(argv[2] if len(argv) > 2 else "holidays.txt"))
    lines = invoice_lines(contracts, holidays)
    for contract, days, amount in lines:
        print(f"{contract:<10} {days:>4} days {amount:>9} EUR")
    days, amount = sum(line[1] for line in lines), sum(line[2] for line in lines)
    print(f"{'total':<10} {days:>4} days {amount:>9} EUR")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
