import contextlib
import io
import tempfile
import unittest
from pathlib import Path

from inventory.commands import UsageError, main, run
from inventory.models import Item


def sample_stock():
    return {"BLT042": Item("BLT042", "Bolt M4", 12, 35), "NUT010": Item("NUT010", "Nut M4", 3, 5)}


class RunTest(unittest.TestCase):
    def test_list(self):
        self.assertEqual(
            run(sample_stock(), ["list"]),
            "SKU     NAME     QTY  PRICE\n------  -------  ---  -----\n"
            "BLT042  Bolt M4  12   0.35\nNUT010  Nut M4   3    0.05",
        )

    def test_add_then_sell(self):
        stock = sample_stock()
        self.assertEqual(run(stock, ["add", "scr001", "Screw", "40", "12"]), "added SCR001")
        self.assertEqual(run(stock, ["sell", "SCR001", "15"]), "SCR001: 25 left")

    def test_low_with_threshold(self):
        self.assertIn("NUT010", run(sample_stock(), ["low"]))
        self.assertNotIn("NUT010", run(sample_stock(), ["low", "2"]))

    def test_value(self):
        self.assertEqual(run(sample_stock(), ["value"]), "net 4.35, with VAT 5.22")

    def test_unknown_command_and_bad_arguments(self):
        with self.assertRaises(UsageError):
            run(sample_stock(), ["destroy"])
        with self.assertRaises(UsageError):
            run(sample_stock(), ["sell", "BLT042"])
        with self.assertRaises(UsageError):
            run(sample_stock(), [])


class MainTest(unittest.TestCase):
    def test_main_saves_the_stock_file(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "stock.csv"
            path.write_text("BLT042,Bolt M4,12,35\n", encoding="utf-8")
            with contextlib.redirect_stdout(io.StringIO()) as out:
                code = main([str(path), "sell", "blt042", "2"])
            self.assertEqual(code, 0)
            self.assertEqual(out.getvalue(), "BLT042: 10 left\n")
            self.assertEqual(path.read_text(encoding="utf-8"), "BLT042,Bolt M4,10,35\n")

    def test_main_reports_errors_without_saving(self):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "stock.csv"
            path.write_text("BLT042,Bolt M4,12,35\n", encoding="utf-8")
            with contextlib.redirect_stderr(io.StringIO()) as err:
                code = main([str(path), "sell", "BLT042", "99"])
            self.assertEqual(code, 1)
            self.assertIn("only 12 of BLT042 left", err.getvalue())
            self.assertEqual(path.read_text(encoding="utf-8"), "BLT042,Bolt M4,12,35\n")


if __name__ == "__main__":
    unittest.main()
