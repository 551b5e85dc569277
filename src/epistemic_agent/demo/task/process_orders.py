"""Summarise the shop's orders for the weekly report.

Run it as ``python3 process_orders.py`` from this directory: it reads
``orders.json`` (a JSON list of orders) and writes ``summary.json``.

An order looks like::

    {"id": "A-1001", "customer": "alice", "status": "completed",
     "date": "2024-05-01", "discount": 10,
     "items": [{"product": "notebook", "quantity": 2, "unit_price": 4.5}]}

``status`` is one of "completed", "pending" or "cancelled". ``discount`` is
optional (default 0) and is a PERCENTAGE of the order's subtotal: 10 means the
customer pays 90% of the subtotal. The subtotal is the sum of
quantity * unit_price over the order's items.

The summary has exactly these fields:

- ``total_revenue``: the sum of order totals (after discount) over completed
  orders only, rounded to 2 decimals.
- ``completed_orders``: the number of completed orders.
- ``cancelled_orders``: the number of cancelled orders.
- ``unique_customers``: the number of distinct customers across ALL orders,
  whatever their status (a customer whose only order is pending still counts).
- ``average_order_value``: total revenue divided by the number of completed
  orders, rounded to 2 decimals (0.0 when there are no completed orders).
- ``top_product``: the product with the most units sold (the sum of item
  quantities) over completed orders; a tie goes to the alphabetically first
  name; null when nothing was sold.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

Order = dict[str, Any]


def order_total(order: Order) -> float:
    """Return what the customer pays for one order: its subtotal less the discount."""
    subtotal = sum(item["quantity"] * item["unit_price"] for item in order["items"])
    discount = order.get("discount", 0)
    return float(subtotal - discount)


def top_product(orders: list[Order]) -> str | None:
    """Return the product with the most units sold in ``orders`` (ties: alphabetical)."""
    units: Counter[str] = Counter()
    for order in orders:
        for item in order["items"]:
            units[item["product"]] += 1
    if not units:
        return None
    return min(units, key=lambda name: (-units[name], name))


def summarise(orders: list[Order]) -> dict[str, Any]:
    """Build the summary described in the module docstring."""
    completed = [order for order in orders if order["status"] == "completed"]
    cancelled = [order for order in orders if order["status"] == "cancelled"]
    revenue = 0.0
    customers: set[str] = set()
    for order in completed:
        revenue += order_total(order)
        customers.add(order["customer"])
    average = revenue / len(orders) if orders else 0.0
    return {
        "total_revenue": round(revenue, 2),
        "completed_orders": len(completed),
        "cancelled_orders": len(cancelled),
        "unique_customers": len(customers),
        "average_order_value": round(average, 2),
        "top_product": top_product(completed),
    }


def main() -> None:
    orders = json.loads(Path("orders.json").read_text(encoding="utf-8"))
    summary = summarise(orders)
    Path("summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"Wrote summary.json ({len(orders)} orders read).")


if __name__ == "__main__":
    main()
