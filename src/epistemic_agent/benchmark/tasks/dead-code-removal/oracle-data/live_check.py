"""Exercise the live surface of the package in a copy of the finished workspace.

Usage: python3 -B live_check.py COPY. Prints one line; exit 0 when every live path works.
The test suite does not cover all of it (the restock command, the re-exported format_sku),
so the oracle runs this as well.
"""

import contextlib
import io
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, sys.argv[1])


def check() -> str | None:
    import inventory
    from inventory import commands

    public = ["Item", "format_money", "format_sku", "low_stock", "parse_item", "run", "sell",
              "stock_value"]
    missing = [name for name in public if name not in getattr(inventory, "__all__", [])
               or not hasattr(inventory, name)]
    if missing:
        return f"public API lost: {', '.join(missing)} no longer exported by inventory"
    if inventory.format_sku("BLT042") != "BLT-042" or inventory.format_sku("42") != "42":
        return "inventory.format_sku no longer formats shelf labels"

    stock = {"BLT042": inventory.parse_item("blt042,Bolt M4,3,35")}
    steps = [
        (["restock", "blt042", "4"], "BLT042: 7 in stock"),
        (["sell", "BLT042", "2"], "BLT042: 5 left"),
        (["add", "nut010", "Nut M4", "1", "5"], "added NUT010"),
        (["value"], "net 1.80, with VAT 2.16"),
    ]
    for argv, want in steps:
        try:
            got = inventory.run(stock, argv)
        except Exception as error:  # noqa: BLE001 - any failure is the verdict
            return f"command {' '.join(argv)!r} fails: {type(error).__name__}: {error}"
        if got != want:
            return f"command {' '.join(argv)!r} printed {got!r}, expected {want!r}"
    if "NUT010" not in inventory.run(stock, ["low"]) or "BLT042" not in inventory.run(stock, ["list"]):
        return "the low/list commands no longer list the stock"
    if [item.sku for item in inventory.low_stock(stock, 2)] != ["NUT010"]:
        return "inventory.low_stock is broken"

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "stock.csv"
        path.write_text("BLT042,Bolt M4,3,35\n", encoding="utf-8")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = commands.main([str(path), "restock", "BLT042", "10"])
        if code != 0 or path.read_text(encoding="utf-8") != "BLT042,Bolt M4,13,35\n":
            return "`python3 -m inventory STOCKFILE restock SKU QTY` no longer works"
    return None


try:
    problem = check()
except Exception as error:  # noqa: BLE001 - an import error is a verdict too
    problem = f"the package no longer works: {type(error).__name__}: {error}"
print(problem or "live paths work")
sys.exit(1 if problem else 0)
