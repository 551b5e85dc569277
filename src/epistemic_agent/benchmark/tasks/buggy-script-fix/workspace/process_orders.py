"""Weekly order summary for the tea shop.

Run it from this folder as ``python3 process_orders.py``: it reads
``orders.json`` (a JSON list of the week's orders) and writes ``summary.json``.

An order looks like::

    {"id": "W-2001", "customer": "ana", "status": "completed",
     "placed": "2024-06-03", "discount": 10,
     "items": [{"product": "green-tea", "quantity": 3, "unit_price": 6.5}]}

``status`` is "completed", "pending" or "cancelled". ``discount`` is optional
(0 when absent) and is a percentage taken off the order's subtotal, where the
subtotal is the sum of ``quantity * unit_price`` over the order's items: an
order with a subtotal of 50.0 and a discount of 10 pays 45.0.

``summary.json`` holds one JSON object with exactly these fields:

``total_revenue``
    What the customers paid for completed orders (each order's subtotal less
    its discount, summed), rounded to 2 decimals. Pending and cancelled
    orders bring in nothing.
``completed_orders``
    How many orders have the status "completed".
``cancelled_orders``
    How many orders have the status "cancelled". Pending orders are neither
    completed nor cancelled.
``unique_customers``
    How many distinct customers placed at least one order this week, whatever
    the status of their orders: a customer whose only order is pending or
    cancelled is still a customer of the week.
``average_order_value``
    ``total_revenue`` divided by ``completed_orders``, rounded to 2 decimals;
    0.0 when nothing was completed.
``top_product``
    The product with the most units sold (the sum of its quantities over
    completed orders). When several products share the highest count, the
    one whose name comes first alphabetically wins. null when nothing was
    sold.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

Order = dict[str, Any]

ORDERS_FILE = Path("orders.json")
SUMMARY_FILE = Path("summary.json")


def load_orders(path: Path) -> list[Order]:
    """The orders stored in ``path``."""
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def order_total(order: Order) -> float:
    """What the customer pays for ``order``: its subtotal less the percentage discount."""
    subtotal = 0.0
    for item in order["items"]:
        subtotal += item["unit_price"]
    discount = order.get("discount", 0)
    return subtotal * (100 - discount) / 100


def units_sold(orders: list[Order]) -> Counter[str]:
    """Units sold per product over ``orders``."""
    units: Counter[str] = Counter()
    for order in orders:
        for item in order["items"]:
            units[item["product"]] += item["quantity"]
    return units


def best_seller(units: Counter[str]) -> str | None:
    """The product with the most units; ties go to the alphabetically first name."""
    if not units:
        return None
    return max(units, key=units.get)


def summarise(orders: list[Order]) -> dict[str, Any]:
    """The weekly summary described in the module docstring."""
    completed: list[Order] = []
    cancelled = 0
    customers: set[str] = set()
    for order in orders:
        if order["status"] == "completed":
            completed.append(order)
            customers.add(order["customer"])
        else:
            cancelled += 1

    revenue = sum(order_total(order) for order in completed)
    average = revenue / len(completed) if completed else 0.0
    return {
        "total_revenue": round(revenue, 2),
        "completed_orders": len(completed),
        "cancelled_orders": cancelled,
        "unique_customers": len(customers),
        "average_order_value": round(average, 2),
        "top_product": best_seller(units_sold(completed)),
    }


def main() -> None:
    orders = load_orders(ORDERS_FILE)
    summary = summarise(orders)
    SUMMARY_FILE.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"Read {len(orders)} orders, wrote {SUMMARY_FILE}.")


if __name__ == "__main__":
    main()
