"""The command-line tool: ``python3 -m inventory STOCKFILE COMMAND [ARGS...]``.

Commands:
  list                    every item, with its quantity and unit price
  add SKU NAME QTY PRICE  add a new item (PRICE in cents)
  sell SKU QTY            take QTY units out of stock
  restock SKU QTY         put QTY units back into stock
  low [THRESHOLD]         items with fewer than THRESHOLD units (default 5)
  value                   what the stock is worth, before and after VAT

The stock file is read, the command runs on it, and the file is saved again.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .formatting import format_money, format_table
from .models import Item, dump_items, load_items, normalise_sku
from .pricing import stock_value, with_vat
from .stock import Stock, StockError, add_item, low_stock, restock, sell


class UsageError(Exception):
    """A command line that does not name a known command with the right arguments."""


def _expect(args: list[str], count: int, usage: str) -> None:
    if len(args) != count:
        raise UsageError(f"usage: {usage}")


def _item_rows(items: list[Item]) -> list[list[str]]:
    return [[i.sku, i.name, str(i.quantity), format_money(i.price_cents)] for i in items]


def cmd_list(stock: Stock, args: list[str]) -> str:
    _expect(args, 0, "list")
    items = [stock[sku] for sku in sorted(stock)]
    return format_table(["SKU", "NAME", "QTY", "PRICE"], _item_rows(items))


def cmd_add(stock: Stock, args: list[str]) -> str:
    _expect(args, 4, "add SKU NAME QTY PRICE")
    sku, name, quantity, price = args
    add_item(stock, Item(normalise_sku(sku), name, int(quantity), int(price)))
    return f"added {normalise_sku(sku)}"


def cmd_sell(stock: Stock, args: list[str]) -> str:
    _expect(args, 2, "sell SKU QTY")
    item = sell(stock, args[0], int(args[1]))
    return f"{item.sku}: {item.quantity} left"


def cmd_restock(stock: Stock, args: list[str]) -> str:
    _expect(args, 2, "restock SKU QTY")
    item = restock(stock, args[0], int(args[1]))
    return f"{item.sku}: {item.quantity} in stock"


def cmd_low(stock: Stock, args: list[str]) -> str:
    if len(args) > 1:
        raise UsageError("usage: low [THRESHOLD]")
    threshold = int(args[0]) if args else 5
    return format_table(["SKU", "NAME", "QTY", "PRICE"], _item_rows(low_stock(stock, threshold)))


def cmd_value(stock: Stock, args: list[str]) -> str:
    _expect(args, 0, "value")
    net = stock_value(stock)
    return f"net {format_money(net)}, with VAT {format_money(with_vat(net))}"


def run(stock: Stock, argv: list[str]) -> str:
    """Run one command line on ``stock`` (changed in place) and return its output."""
    if not argv:
        raise UsageError("no command given")
    name, args = argv[0], argv[1:]
    handler = getattr(sys.modules[__name__], f"cmd_{name}", None)
    if handler is None:
        raise UsageError(f"unknown command {name!r}")
    return handler(stock, args)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(argv[0])
    stock = load_items(path.read_text(encoding="utf-8"))
    try:
        output = run(stock, argv[1:])
    except (UsageError, StockError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    path.write_text(dump_items(stock), encoding="utf-8")
    print(output)
    return 0
