import unittest

from inventory.models import Item
from inventory.stock import StockError, add_item, find, low_stock, restock, sell


def sample_stock():
    return {
        "BLT042": Item("BLT042", "Bolt M4", 12, 35),
        "NUT010": Item("NUT010", "Nut M4", 3, 5),
        "WSH007": Item("WSH007", "Washer", 0, 2),
    }


class FindTest(unittest.TestCase):
    def test_finds_any_case(self):
        self.assertEqual(find(sample_stock(), "blt042").name, "Bolt M4")

    def test_unknown_sku(self):
        with self.assertRaises(StockError):
            find(sample_stock(), "XXX999")


class ChangeStockTest(unittest.TestCase):
    def test_sell_takes_units_out(self):
        stock = sample_stock()
        self.assertEqual(sell(stock, "BLT042", 5).quantity, 7)

    def test_cannot_sell_more_than_there_is(self):
        stock = sample_stock()
        with self.assertRaises(StockError):
            sell(stock, "NUT010", 4)
        self.assertEqual(stock["NUT010"].quantity, 3)

    def test_quantities_must_be_positive(self):
        with self.assertRaises(StockError):
            sell(sample_stock(), "BLT042", 0)
        with self.assertRaises(StockError):
            restock(sample_stock(), "BLT042", -2)

    def test_restock_puts_units_back(self):
        stock = sample_stock()
        self.assertEqual(restock(stock, "wsh007", 50).quantity, 50)

    def test_add_refuses_a_duplicate_sku(self):
        stock = sample_stock()
        with self.assertRaises(StockError):
            add_item(stock, Item("BLT042", "Other bolt", 1, 1))


class LowStockTest(unittest.TestCase):
    def test_below_threshold_sorted_by_sku(self):
        self.assertEqual([i.sku for i in low_stock(sample_stock())], ["NUT010", "WSH007"])
        self.assertEqual([i.sku for i in low_stock(sample_stock(), 1)], ["WSH007"])


if __name__ == "__main__":
    unittest.main()
