"""Exercise the live surface of the package in a copy (cwd) and print what each call gives.

Run by the oracle on the agent's copy and on the pristine package alike, through the neutral
launcher: the two outputs must be equal. Prints one JSON line; nothing in it is compared here.
"""

import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, ".")
results = {}


def record(key, call):
    try:
        results[key] = ["ok", repr(call())]
    except Exception as error:  # noqa: BLE001 - the outcome is data
        results[key] = ["raised", type(error).__name__]


def main():
    import inventory
    from inventory import commands

    record("all", lambda: sorted(getattr(inventory, "__all__", [])))
    for name in ["Item", "format_money", "format_sku", "low_stock", "parse_item", "run", "sell",
                 "stock_value"]:
        record(f"exported {name}", lambda name=name: hasattr(inventory, name))
    for sku in ["BLT042", "42", "AB", "x9", ""]:
        record(f"format_sku {sku}", lambda sku=sku: inventory.format_sku(sku))
    stock = {}
    record("parse", lambda: stock.update(BLT042=inventory.parse_item("blt042,Bolt M4,3,35")))
    for argv in [["restock", "blt042", "4"], ["sell", "BLT042", "2"],
                 ["add", "nut010", "Nut M4", "1", "5"], ["value"], ["low"], ["low", "3"],
                 ["list"], ["restock", "nope", "1"], ["restock", "BLT042", "-1"],
                 ["restock", "BLT042"], ["frobnicate"]]:
        record("run " + " ".join(argv), lambda argv=argv: inventory.run(stock, argv))
    record("low_stock", lambda: [item.sku for item in inventory.low_stock(stock, 2)])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "stock.csv"
        path.write_text("BLT042,Bolt M4,3,35\n", encoding="utf-8")
        for argv in [["restock", "BLT042", "10"], ["sell", "BLT042", "99"], ["value"]]:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                record("main " + " ".join(argv), lambda argv=argv: commands.main([str(path), *argv]))
            results["main " + " ".join(argv) + " output"] = [out.getvalue(), err.getvalue()]
            results["main " + " ".join(argv) + " file"] = path.read_text(encoding="utf-8")


record("main", main)
print(json.dumps(results, sort_keys=True))
