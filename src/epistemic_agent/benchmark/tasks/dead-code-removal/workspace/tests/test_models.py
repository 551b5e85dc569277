import unittest

from inventory.models import Item, dump_items, load_items, parse_item, parse_legacy_row


class ParseItemTest(unittest.TestCase):
    def test_parses_fields_and_normalises_the_sku(self):
        self.assertEqual(parse_item(" blt 042 , Bolt M4 , 12 , 35"), Item("BLT042", "Bolt M4", 12, 35))

    def test_rejects_a_wrong_number_of_fields(self):
        with self.assertRaises(ValueError):
            parse_item("BLT042,Bolt M4,12")

    def test_rejects_negative_quantities(self):
        with self.assertRaises(ValueError):
            parse_item("BLT042,Bolt M4,-1,35")

    def test_rejects_an_empty_sku(self):
        with self.assertRaises(ValueError):
            parse_item(",Bolt M4,1,35")


class StockFileTest(unittest.TestCase):
    TEXT = "# sku,name,quantity,price_cents\nNUT010,Nut M4,200,5\n\nBLT042,Bolt M4,12,35\n"

    def test_load_skips_comments_and_blank_lines(self):
        self.assertEqual(sorted(load_items(self.TEXT)), ["BLT042", "NUT010"])

    def test_dump_sorts_by_sku_and_round_trips(self):
        items = load_items(self.TEXT)
        text = dump_items(items)
        self.assertEqual(text, "BLT042,Bolt M4,12,35\nNUT010,Nut M4,200,5\n")
        self.assertEqual(load_items(text), items)


class LegacyRowTest(unittest.TestCase):
    def test_parses_a_row_with_a_good_checksum(self):
        self.assertEqual(parse_legacy_row("blt042|12|Bolt M4|84"), Item("BLT042", "Bolt M4", 12, 0))

    def test_rejects_a_bad_checksum(self):
        with self.assertRaises(ValueError):
            parse_legacy_row("blt042|12|Bolt M4|00")


if __name__ == "__main__":
    unittest.main()
