"""The cost benchmark's workspace: a small Python package with a bug (`inventory`: its
store's total value sums quantities instead of price times quantity), its tests, README and
changelog, a stock file and a log. bench/cost_session.py holds the model's steps that fix it.

Not a benchmark itself: bench_cost.py imports it (a script's own folder is first on its path).
"""

from __future__ import annotations

from pathlib import Path

MODELS = '''"""The records the inventory works with."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Item:
    """One stock-keeping unit: its code, name, unit price in cents and quantity on hand."""

    sku: str
    name: str
    price_cents: int
    quantity: int
    tags: tuple[str, ...] = field(default=())

    def value_cents(self) -> int:
        """What the units on hand are worth, in cents."""
        return self.price_cents * self.quantity

    def is_low(self, threshold: int = 5) -> bool:
        """Whether the item should be reordered."""
        return self.quantity < threshold


@dataclass
class Movement:
    """A change of stock: a delivery (positive) or a sale (negative)."""

    sku: str
    delta: int
    note: str = ""


def parse_row(row: dict[str, str]) -> Item:
    """An Item from one CSV row (sku, name, price, quantity, tags separated by `;`)."""
    tags = tuple(t for t in row.get("tags", "").split(";") if t)
    price = round(float(row["price"]) * 100)
    return Item(row["sku"], row["name"].strip(), price, int(row["quantity"]), tags)
'''

STORE = '''"""The store: items by SKU, movements applied in order, totals."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

from .models import Item, Movement, parse_row


class UnknownItem(KeyError):
    """A movement names a SKU the store does not hold."""


class Store:
    def __init__(self, items: Iterable[Item] = ()) -> None:
        self.items: dict[str, Item] = {item.sku: item for item in items}
        self.history: list[Movement] = []

    @classmethod
    def from_csv(cls, path: Path) -> "Store":
        with path.open(newline="", encoding="utf-8") as handle:
            return cls(parse_row(row) for row in csv.DictReader(handle))

    def apply(self, movement: Movement) -> Item:
        """Apply one movement; the quantity never goes below zero."""
        try:
            item = self.items[movement.sku]
        except KeyError:
            raise UnknownItem(movement.sku) from None
        quantity = max(item.quantity + movement.delta, 0)
        updated = Item(item.sku, item.name, item.price_cents, quantity, item.tags)
        self.items[item.sku] = updated
        self.history.append(movement)
        return updated

    def total_value(self) -> int:
        """What all the stock is worth, in cents."""
        return sum(item.quantity for item in self.items.values())

    def low_stock(self, threshold: int = 5) -> list[Item]:
        """Items to reorder, lowest quantity first."""
        low = [item for item in self.items.values() if item.is_low(threshold)]
        return sorted(low, key=lambda item: (item.quantity, item.sku))

    def tagged(self, tag: str) -> list[Item]:
        return [item for item in self.items.values() if tag in item.tags]
'''

REPORT = '''"""The weekly report, as text."""

from __future__ import annotations

from .store import Store


def money(cents: int) -> str:
    """12345 -> '123.45'."""
    return f"{cents // 100}.{cents % 100:02d}"


def lines(store: Store, threshold: int = 5) -> list[str]:
    out = [f"items: {len(store.items)}", f"total value: {money(store.total_value())}"]
    low = store.low_stock(threshold)
    out.append(f"low stock: {len(low)}")
    for item in low:
        out.append(f"  {item.sku:<8} {item.name:<24} {item.quantity:>4}")
    by_tag: dict[str, int] = {}
    for item in store.items.values():
        for tag in item.tags:
            by_tag[tag] = by_tag.get(tag, 0) + item.value_cents()
    for tag in sorted(by_tag):
        out.append(f"tag {tag}: {money(by_tag[tag])}")
    return out


def render(store: Store, threshold: int = 5) -> str:
    return "\\n".join(lines(store, threshold)) + "\\n"
'''

CLI = '''"""`python -m inventory.cli report FILE`: print the weekly report of a stock file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .report import render
from .store import Store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="inventory")
    sub = parser.add_subparsers(dest="command", required=True)
    report = sub.add_parser("report", help="print the weekly report")
    report.add_argument("file", type=Path)
    report.add_argument("--threshold", type=int, default=5)
    args = parser.parse_args(argv)
    store = Store.from_csv(args.file)
    sys.stdout.write(render(store, args.threshold))
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

TEST_STORE = """import unittest

from inventory.models import Item, Movement
from inventory.store import Store, UnknownItem


def sample() -> Store:
    return Store(
        [
            Item("A-100", "Blue pen", 150, 40, ("office",)),
            Item("A-200", "Notebook", 420, 3, ("office", "paper")),
            Item("B-300", "Desk lamp", 2599, 2, ("furniture",)),
        ]
    )


class StoreTest(unittest.TestCase):
    def test_total_value_is_price_times_quantity(self) -> None:
        self.assertEqual(sample().total_value(), 150 * 40 + 420 * 3 + 2599 * 2)

    def test_a_sale_lowers_the_quantity_but_never_below_zero(self) -> None:
        store = sample()
        self.assertEqual(store.apply(Movement("B-300", -5)).quantity, 0)

    def test_unknown_items_are_refused(self) -> None:
        with self.assertRaises(UnknownItem):
            sample().apply(Movement("Z-999", 1))

    def test_low_stock_is_sorted_by_quantity(self) -> None:
        self.assertEqual([i.sku for i in sample().low_stock()], ["B-300", "A-200"])


if __name__ == "__main__":
    unittest.main()
"""

TEST_REPORT = """import unittest

from inventory.models import Item
from inventory.report import money, render
from inventory.store import Store


class ReportTest(unittest.TestCase):
    def test_money(self) -> None:
        self.assertEqual(money(12345), "123.45")
        self.assertEqual(money(5), "0.05")

    def test_report_shows_the_total_value(self) -> None:
        store = Store([Item("A-1", "Pen", 150, 10), Item("A-2", "Pad", 99, 1)])
        self.assertIn("total value: 15.99", render(store))

    def test_report_lists_low_stock(self) -> None:
        store = Store([Item("A-1", "Pen", 150, 10), Item("A-2", "Pad", 99, 1)])
        self.assertIn("A-2", render(store).split("low stock")[1])


if __name__ == "__main__":
    unittest.main()
"""

README = """# inventory

A small stock keeper for the shop: it reads `data/stock.csv` (one row per SKU: code, name,
unit price, quantity on hand, tags), applies deliveries and sales, and prints the weekly
report with the total value of the stock, the items to reorder and the value per tag.

    python -m inventory.cli report data/stock.csv

Run the tests with `python -m unittest discover -s tests -v`. Prices are kept in cents to
avoid rounding errors; `money()` formats them for the report. The low-stock threshold is 5
units unless `--threshold` says otherwise. The report feeds the Monday purchasing meeting,
so a wrong total value means wrong orders: keep the tests green.
"""

CHANGELOG = """# Changelog

## 0.4.0
- Movements: deliveries and sales are applied in order; a sale never takes stock below 0.
- Tags: the report shows the stock value per tag.

## 0.3.0
- Prices are stored in cents (they were floats, and totals drifted by a cent or two).
- `Store.total_value()` returns cents; `money()` formats them.

## 0.2.0
- Low-stock list, sorted by quantity, with a configurable threshold.

## 0.1.0
- First version: read the CSV, print the number of items and their total value.
"""

NAMES = [
    "Blue pen",
    "Red pen",
    "Notebook A5",
    "Notebook A4",
    "Stapler",
    "Staples 1000",
    "Desk lamp",
    "Paper clips",
    "Envelope C5",
    "Marker set",
    "Ruler 30cm",
    "Glue stick",
    "Scissors",
    "Tape",
    "Folder",
    "Binder",
    "Sticky notes",
    "Highlighter",
    "Eraser",
    "Pencil HB",
]


def stock_csv() -> str:
    rows = ["sku,name,price,quantity,tags"]
    for n in range(60):
        name = NAMES[n % len(NAMES)]
        tags = ["office", "paper", "furniture", "writing"][n % 4]
        rows.append(
            f"S-{100 + n},{name} {n // len(NAMES) + 1},{1 + (n * 37) % 40}.{n % 100:02d},"
            f"{(n * 7) % 23},{tags}"
        )
    return "\n".join(rows) + "\n"


def app_log() -> str:
    levels = ["INFO", "INFO", "WARN", "INFO", "ERROR"]
    lines = []
    for n in range(120):
        level = levels[n % len(levels)]
        lines.append(
            f"2026-11-{1 + n // 10:02d}T08:{n % 60:02d}:00Z {level} report: sku S-{100 + n % 60} "
            f"quantity {(n * 7) % 23} value {(n * 131) % 9000} cents"
        )
    return "\n".join(lines) + "\n"


def write_project(root: Path) -> None:
    files = {
        "README.md": README,
        "CHANGELOG.md": CHANGELOG,
        "inventory/__init__.py": '"""Stock keeping for the shop."""\n\n__version__ = "0.4.0"\n',
        "inventory/models.py": MODELS,
        "inventory/store.py": STORE,
        "inventory/report.py": REPORT,
        "inventory/cli.py": CLI,
        "tests/test_store.py": TEST_STORE,
        "tests/test_report.py": TEST_REPORT,
        "data/stock.csv": stock_csv(),
        "logs/app.log": app_log(),
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
