"""Turning numbers and rows into text for people."""

from __future__ import annotations


def format_money(cents: int) -> str:
    """``1999`` becomes ``"19.99"``; negative amounts keep their sign."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"


def format_percent(fraction: float) -> str:
    """``0.125`` becomes ``"12.5%"``."""
    return f"{fraction * 100:.1f}%"


def format_sku(sku: str) -> str:
    """A SKU as printed on shelf labels: ``"BLT042"`` becomes ``"BLT-042"``."""
    letters = sku.rstrip("0123456789")
    digits = sku[len(letters):]
    if not letters or not digits:
        return sku
    return f"{letters}-{digits}"


def format_table(headers: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns separated by two spaces, under a header line."""
    widths = [len(header) for header in headers]
    for row in rows:
        widths = [max(width, len(cell)) for width, cell in zip(widths, row)]
    lines = [headers, ["-" * width for width in widths], *rows]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip()
        for line in lines
    )
