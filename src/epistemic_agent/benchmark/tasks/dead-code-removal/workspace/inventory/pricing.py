"""Money. Every amount is an integer number of cents."""

from __future__ import annotations

from .models import Item

VAT_RATE_PERCENT = 20


def line_value(item: Item) -> int:
    """What the units of one item are worth, before VAT."""
    return item.quantity * item.price_cents


def stock_value(stock: dict[str, Item]) -> int:
    """What everything in stock is worth, before VAT."""
    return sum(line_value(item) for item in stock.values())


def with_vat(cents: int) -> int:
    """``cents`` plus VAT, rounded half up to a whole cent.

    This replaces legacy_price(), which rounded down and was a cent short
    on about half of all prices.
    """
    return (cents * (100 + VAT_RATE_PERCENT) + 50) // 100


def legacy_price(cents: int) -> int:
    return cents * (100 + VAT_RATE_PERCENT) // 100
