"""Inventory: a small stock-keeping library and command-line tool.

The names in ``__all__`` are the package's public API. The warehouse and
shop services import them from ``inventory`` directly, so they stay stable
even when nothing in this repository calls them.
"""

from .commands import run
from .formatting import format_money, format_sku
from .models import Item, parse_item
from .pricing import stock_value
from .stock import low_stock, sell

__all__ = [
    "Item",
    "format_money",
    "format_sku",
    "low_stock",
    "parse_item",
    "run",
    "sell",
    "stock_value",
]
