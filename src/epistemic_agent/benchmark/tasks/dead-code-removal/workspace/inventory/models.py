"""Stock items and how they are stored in the stock file.

The stock file is plain text, one item per line: ``sku,name,quantity,price_cents``.
Blank lines and lines starting with ``#`` are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Item:
    sku: str
    name: str
    quantity: int
    price_cents: int


def normalise_sku(sku: str) -> str:
    """SKUs are case-insensitive: store them upper-case, without spaces."""
    return sku.replace(" ", "").upper()


def _non_negative(text: str, field: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(f"{field} must not be negative, got {value}")
    return value


def parse_item(line: str) -> Item:
    """Parse one ``sku,name,quantity,price_cents`` line into an Item."""
    parts = [part.strip() for part in line.split(",")]
    if len(parts) != 4:
        raise ValueError(f"expected 4 fields, got {len(parts)}: {line!r}")
    sku, name, quantity, price = parts
    if not sku:
        raise ValueError(f"empty sku in {line!r}")
    return Item(
        normalise_sku(sku),
        name,
        _non_negative(quantity, "quantity"),
        _non_negative(price, "price"),
    )


def item_to_line(item: Item) -> str:
    """The line that stores ``item``: the inverse of parse_item."""
    return f"{item.sku},{item.name},{item.quantity},{item.price_cents}"


def item_to_legacy_tuple(item: Item) -> tuple[str, int]:
    """The (sku, quantity) pair the old warehouse export expected."""
    return (item.sku, item.quantity)


def load_items(text: str) -> dict[str, Item]:
    """Every item in the text of a stock file, keyed by SKU."""
    items: dict[str, Item] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = parse_item(line)
        items[item.sku] = item
    return items


def dump_items(items: dict[str, Item]) -> str:
    """The text of a stock file holding ``items``, sorted by SKU."""
    return "".join(item_to_line(items[sku]) + "\n" for sku in sorted(items))


def _legacy_checksum(sku: str) -> str:
    return format(sum(map(ord, sku)) % 97, "02d")


def parse_legacy_row(line: str) -> Item:
    """Parse a row of the pre-2022 export: ``SKU|quantity|name|checksum``."""
    sku, quantity, name, checksum = (part.strip() for part in line.split("|"))
    if _legacy_checksum(sku) != checksum:
        raise ValueError(f"bad checksum in legacy row {line!r}")
    return Item(normalise_sku(sku), name, _non_negative(quantity, "quantity"), 0)
