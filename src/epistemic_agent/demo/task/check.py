"""Check summary.json against a summary recomputed independently from orders.json.

Run it as ``python3 check.py`` after ``python3 process_orders.py``. It prints one
``expected X, got Y`` line per wrong field and exits 1, or prints
``All checks passed.`` and exits 0. It does not import process_orders.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

MONEY_FIELDS = ("total_revenue", "average_order_value")
MONEY_TOLERANCE = 0.01


def expected_summary(orders: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary the spec in process_orders.py's docstring asks for."""
    paid: list[float] = []
    units: dict[str, int] = {}
    cancelled = 0
    for order in orders:
        if order["status"] == "cancelled":
            cancelled += 1
        if order["status"] != "completed":
            continue
        subtotal = 0.0
        for item in order["items"]:
            subtotal += item["quantity"] * item["unit_price"]
            units[item["product"]] = units.get(item["product"], 0) + item["quantity"]
        paid.append(subtotal * (100 - order.get("discount", 0)) / 100)
    revenue = sum(paid)
    best = max(units.values(), default=0)
    top = sorted(name for name, count in units.items() if count == best)
    return {
        "total_revenue": round(revenue, 2),
        "completed_orders": len(paid),
        "cancelled_orders": cancelled,
        "unique_customers": len({order["customer"] for order in orders}),
        "average_order_value": round(revenue / len(paid), 2) if paid else 0.0,
        "top_product": top[0] if top else None,
    }


def same(field: str, want: Any, got: Any) -> bool:
    """Exact match, except money, which may differ by a cent of rounding."""
    if field in MONEY_FIELDS and isinstance(got, (int, float)) and not isinstance(got, bool):
        return bool(abs(float(got) - float(want)) <= MONEY_TOLERANCE + 1e-9)
    return bool(want == got and type(want) is type(got))


def main() -> int:
    orders = json.loads(Path("orders.json").read_text(encoding="utf-8"))
    summary_path = Path("summary.json")
    if not summary_path.is_file():
        print("summary.json not found: run `python3 process_orders.py` first.")
        return 1
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        print(f"summary.json is not valid JSON: {error}")
        return 1
    if not isinstance(summary, dict):
        print(f"summary.json must hold a JSON object, got {type(summary).__name__}.")
        return 1

    failures = 0
    for field, want in expected_summary(orders).items():
        got = summary.get(field, "<missing>")
        if not same(field, want, got):
            failures += 1
            print(f"{field}: expected {json.dumps(want)}, got {json.dumps(got)}")
    if failures:
        print(f"{failures} field(s) wrong.")
        return 1
    print("All checks passed.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
