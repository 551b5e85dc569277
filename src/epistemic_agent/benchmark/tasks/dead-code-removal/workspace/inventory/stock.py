"""Operations on a stock: a dict mapping each SKU to its Item, changed in place."""

from __future__ import annotations

from .models import Item, normalise_sku

Stock = dict[str, Item]


class StockError(Exception):
    """An operation the stock cannot honour: an unknown SKU, not enough units."""


def find(stock: Stock, sku: str) -> Item:
    """The item with this SKU (any case); StockError if there is none."""
    try:
        return stock[normalise_sku(sku)]
    except KeyError:
        raise StockError(f"unknown sku {sku!r}") from None


def _positive(quantity: int) -> int:
    if quantity <= 0:
        raise StockError(f"quantity must be positive, got {quantity}")
    return quantity


def add_item(stock: Stock, item: Item) -> None:
    """Add a new item; StockError if its SKU is already in stock."""
    if item.sku in stock:
        raise StockError(f"sku {item.sku} already exists")
    stock[item.sku] = item


def sell(stock: Stock, sku: str, quantity: int) -> Item:
    """Take ``quantity`` units of ``sku`` out of stock and return the item."""
    item = find(stock, sku)
    if _positive(quantity) > item.quantity:
        raise StockError(f"only {item.quantity} of {item.sku} left, cannot sell {quantity}")
    item.quantity -= quantity
    return item


def restock(stock: Stock, sku: str, quantity: int) -> Item:
    """Put ``quantity`` units of ``sku`` back into stock and return the item."""
    item = find(stock, sku)
    item.quantity += _positive(quantity)
    return item


def merge_stocks(first: Stock, second: Stock) -> Stock:
    """A new stock holding both: quantities of shared SKUs are added up."""
    merged = {sku: Item(i.sku, i.name, i.quantity, i.price_cents) for sku, i in first.items()}
    for sku, item in second.items():
        if sku in merged:
            merged[sku].quantity += item.quantity
        else:
            merged[sku] = Item(item.sku, item.name, item.quantity, item.price_cents)
    return merged


def low_stock(stock: Stock, threshold: int = 5) -> list[Item]:
    """Items with fewer than ``threshold`` units, sorted by SKU."""
    return sorted(
        (item for item in stock.values() if item.quantity < threshold),
        key=lambda item: item.sku,
    )
