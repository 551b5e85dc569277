import unittest

from inventory.formatting import format_money, format_table
from inventory.models import Item
from inventory.pricing import line_value, stock_value, with_vat


class PricingTest(unittest.TestCase):
    def test_stock_value_sums_every_line(self):
        stock = {"A1": Item("A1", "a", 3, 250), "B2": Item("B2", "b", 0, 999), "C3": Item("C3", "c", 2, 5)}
        self.assertEqual(line_value(stock["A1"]), 750)
        self.assertEqual(stock_value(stock), 760)

    def test_vat_rounds_half_up(self):
        self.assertEqual(with_vat(1000), 1200)
        self.assertEqual(with_vat(5), 6)  # 6.0 exactly
        self.assertEqual(with_vat(3), 4)  # 3.6 rounds up
        self.assertEqual(with_vat(1), 1)  # 1.2 rounds down


class FormattingTest(unittest.TestCase):
    def test_money(self):
        self.assertEqual(format_money(1999), "19.99")
        self.assertEqual(format_money(5), "0.05")
        self.assertEqual(format_money(-250), "-2.50")

    def test_table_pads_columns(self):
        table = format_table(["SKU", "QTY"], [["BLT042", "12"], ["N1", "200"]])
        self.assertEqual(table, "SKU     QTY\n------  ---\nBLT042  12\nN1      200")


if __name__ == "__main__":
    unittest.main()
