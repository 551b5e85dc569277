"""The cost benchmark's session: a small Python project with a bug, and the 40 scripted model
steps that investigate and fix it (39 tool calls, then the final answer). The commands really
run, through `epistemic run`, so their outputs are what a model would read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TASK = (
    "The inventory report shows a wrong total value and the test suite fails. Find out why, "
    "fix it without changing the public functions, and make sure all tests pass."
)

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


def _bash(command: str, act: str, reason: str) -> tuple[str, dict[str, Any]]:
    return "bash", {"command": command, "type": act, "reason": reason}


TESTS = "python3 -m unittest discover -s tests -v 2>&1 | tail -40"
FIX_OLD = "        return sum(item.quantity for item in self.items.values())"
FIX_NEW = "        return sum(item.value_cents() for item in self.items.values())"

STEPS: list[tuple[str, tuple[str, dict[str, Any]]]] = [
    (
        "I will start by seeing what the project holds.",
        _bash(
            "ls -la",
            "collect-info",
            "Nothing is known about this workspace yet: list it before choosing where to look.",
        ),
    ),
    (
        "The README should say what the report is for.",
        _bash(
            "cat README.md",
            "collect-info",
            "Read the README to learn what the report computes and how it is run.",
        ),
    ),
    (
        "Now the source files.",
        _bash(
            "find . -name '*.py' -not -path './.epistemic/*' | sort",
            "collect-info",
            "List every Python file to see how the package and its tests are laid out.",
        ),
    ),
    (
        "The data model first.",
        (
            "read_file",
            {
                "path": "inventory/models.py",
                "reason": "See how an item's value is defined before judging any total.",
            },
        ),
    ),
    (
        "Then the store, where the total is computed.",
        (
            "read_file",
            {
                "path": "inventory/store.py",
                "reason": "The total value comes from the store; read how it is summed.",
            },
        ),
    ),
    (
        "Let me run the tests to see the failure itself.",
        _bash(
            TESTS,
            "test-hypothesis",
            "I believe test_total_value fails because total_value sums "
            "quantities; a pass, or another failing test, refutes it.",
        ),
    ),
    (
        "The failing test states the expectation.",
        (
            "read_file",
            {
                "path": "tests/test_store.py",
                "reason": (
                    "Read the expectation of the failing test: price times quantity, in cents."
                ),
            },
        ),
    ),
    (
        "Where else is value computed?",
        _bash(
            'grep -n "def " inventory/*.py',
            "collect-info",
            "List the functions of the package to find every place a value is computed.",
        ),
    ),
    (
        "The report uses the total too.",
        _bash(
            "sed -n 1,80p inventory/report.py",
            "collect-info",
            "Read the report to see how it formats and uses the total value.",
        ),
    ),
    (
        "What does the real data look like?",
        _bash(
            "head -30 data/stock.csv",
            "collect-info",
            "Look at the stock file's rows to see the prices and quantities the total must add up.",
        ),
    ),
    (
        "The changelog may explain the cents change.",
        _bash(
            "cat CHANGELOG.md",
            "collect-info",
            "Check whether the move to cents in 0.3.0 could have introduced the wrong sum.",
        ),
    ),
    (
        "The log shows what the report printed lately.",
        _bash(
            "tail -40 logs/app.log",
            "collect-info",
            "See the recent report runs in the log for the values that were actually printed.",
        ),
    ),
    (
        "Every use of total_value.",
        _bash(
            'grep -rn "total_value" inventory tests',
            "collect-info",
            "Find every caller of total_value so that a fix breaks none of them.",
        ),
    ),
    (
        "A quick check of the sum on the sample data.",
        _bash(
            'python3 -c "from inventory.models import Item; from inventory.store import '
            "Store; s = Store([Item('A', 'a', 150, 40)]); print(s.total_value())\"",
            "test-hypothesis",
            "I suspect total_value sums quantities, so 40 items at 1.50 "
            "print 40; printing 6000 would refute it.",
        ),
    ),
    (
        "The command line, for completeness.",
        (
            "read_file",
            {
                "path": "inventory/cli.py",
                "reason": "Read the command line to know how the report is produced end to end.",
            },
        ),
    ),
    (
        "How large is each module?",
        _bash(
            "wc -l inventory/*.py tests/*.py",
            "collect-info",
            "Size the modules to judge how much code the fix can touch.",
        ),
    ),
    (
        "Only the store tests, verbosely.",
        _bash(
            "python3 -m unittest tests.test_store -v 2>&1 | tail -30",
            "test-hypothesis",
            "I expect only the total value test to fail in test_store; "
            "a second failure refutes a single cause.",
        ),
    ),
    (
        "The fix: sum each item's value, not its quantity.",
        (
            "str_replace_edit",
            {
                "path": "inventory/store.py",
                "old": FIX_OLD,
                "new": FIX_NEW,
                "reason": (
                    "total_value must add price times quantity; "
                    "Item.value_cents already computes it."
                ),
            },
        ),
    ),
    (
        "The whole suite again.",
        _bash(
            TESTS,
            "verify",
            "Confirm the store fix: every test should now pass, the report's included.",
        ),
    ),
    (
        "The report test, to be sure of its expectation.",
        (
            "read_file",
            {
                "path": "tests/test_report.py",
                "reason": "Read the report's tests to check their expected total against the fix.",
            },
        ),
    ),
    (
        "How money is rounded.",
        _bash(
            'grep -n "money\\|round" inventory/*.py',
            "collect-info",
            "Check every rounding step between the CSV price and the printed money.",
        ),
    ),
    (
        "A check of money() on edge values.",
        _bash(
            'python3 -c "from inventory.report import money; '
            'print(money(5), money(12345), money(100))"',
            "test-hypothesis",
            "I believe money pads cents to two digits; an output like 0.5 would refute it.",
        ),
    ),
    (
        "The report's header line, to mention the unit.",
        (
            "str_replace_edit",
            {
                "path": "inventory/report.py",
                "old": 'f"total value: {money(store.total_value())}"',
                "new": 'f"total value: {money(store.total_value())}"  # in the shop currency',
                "reason": (
                    "Note the unit next to the total so the next reader "
                    "does not mistake cents for units."
                ),
            },
        ),
    ),
    (
        "All tests once more.",
        _bash(
            TESTS, "verify", "Confirm the whole suite still passes after the comment in the report."
        ),
    ),
    (
        "The store as it is now.",
        _bash(
            "cat inventory/store.py",
            "collect-info",
            "Re-read the store after the fix to check nothing else sums quantities.",
        ),
    ),
    (
        "Byte-compile to catch syntax errors early.",
        _bash(
            "python3 -m compileall -q inventory",
            "setup",
            "Compile the package: a means to catch syntax errors in the edited files quickly.",
        ),
    ),
    (
        "The command line's help.",
        _bash(
            "python3 -m inventory.cli --help",
            "collect-info",
            "See the command line's options before running the real report.",
        ),
    ),
    (
        "The real report.",
        _bash(
            "python3 -m inventory.cli report data/stock.csv | head -40",
            "collect-info",
            "Run the report on the real stock file to see the corrected total value.",
        ),
    ),
    (
        "The start of the log, for the old totals.",
        _bash(
            "sed -n 1,60p logs/app.log",
            "collect-info",
            "Read the older report runs to compare their totals with the corrected one.",
        ),
    ),
    (
        "How many warnings were logged?",
        _bash(
            "grep -c WARN logs/app.log",
            "collect-info",
            "Count the warnings to decide whether they deserve a look of their own.",
        ),
    ),
    (
        "Record the fix in the changelog.",
        (
            "str_replace_edit",
            {
                "path": "CHANGELOG.md",
                "old": "# Changelog\n",
                "new": (
                    "# Changelog\n\n## 0.4.1\n- `Store.total_value()` adds "
                    "price times quantity (it added quantities).\n"
                ),
                "reason": (
                    "The fix changes a printed total: the changelog "
                    "must say so for the purchasing team."
                ),
            },
        ),
    ),
    (
        "The quiet run of the suite.",
        _bash(
            "python3 -m unittest discover -s tests -q 2>&1 | tail -5",
            "verify",
            "Confirm the suite passes after the changelog entry, with the short summary.",
        ),
    ),
    (
        "The package's version.",
        _bash(
            "cat inventory/__init__.py",
            "collect-info",
            "Check the version string to see whether it needs a bump with the changelog.",
        ),
    ),
    (
        "Any open TODOs?",
        _bash(
            'grep -rn "TODO" inventory || echo none',
            "collect-info",
            "Look for TODO notes that the fix might have resolved or made stale.",
        ),
    ),
    (
        "The data and log folders.",
        _bash(
            "ls -la data logs",
            "collect-info",
            "See the input files' sizes and dates before the final check.",
        ),
    ),
    (
        "Remove the compiled files I made.",
        _bash(
            "rm -rf inventory/__pycache__ tests/__pycache__",
            "cleanup",
            "Remove the bytecode my compile step left, so the workspace holds only sources.",
        ),
    ),
    (
        "The report's tail, once more.",
        _bash(
            "python3 -m inventory.cli report data/stock.csv | tail -5",
            "verify",
            "Confirm the report still runs after the cleanup and shows the per-tag values.",
        ),
    ),
    (
        "The changelog as it reads now.",
        _bash(
            "cat CHANGELOG.md",
            "collect-info",
            "Re-read the changelog entry as the purchasing team will see it.",
        ),
    ),
    (
        "The final full run.",
        _bash(
            TESTS,
            "verify",
            "Confirm the finished work: the full suite passes, verbosely, one last time.",
        ),
    ),
]
FINAL = (
    "Fixed: `Store.total_value()` summed quantities instead of price times quantity (cents), "
    "so the report's total value was wrong. It now adds `Item.value_cents()`; all tests pass, "
    "the report shows the corrected total, and the changelog records the fix."
)


def script(steps: int = 40) -> list[tuple[str, list[Any]]]:
    """The first `steps - 1` tool-call turns, then the final answer."""
    turns: list[tuple[str, list[Any]]] = []
    for number, (text, (tool, args)) in enumerate(STEPS[: steps - 1], start=1):
        turns.append((text, [(f"toolu_{number:03d}", tool, args)]))
    turns.append((FINAL, []))
    return turns


assert len(STEPS) == 39, len(STEPS)
