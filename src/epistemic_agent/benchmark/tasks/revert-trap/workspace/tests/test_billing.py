import unittest
from pathlib import Path

from billing import invoice_lines, load_contracts, load_holidays

HERE = Path(__file__).resolve().parent.parent


class InvoiceLinesTest(unittest.TestCase):
    """The 2024 contracts, checked against days counted by hand on a calendar."""

    def setUp(self) -> None:
        contracts = load_contracts(HERE / "contracts.csv")
        holidays = load_holidays(HERE / "holidays.txt")
        lines = invoice_lines(contracts, holidays)
        self.lines = {name: (days, amount) for name, days, amount in lines}

    def test_quarter_with_new_year_and_good_friday(self) -> None:
        self.assertEqual(self.lines["ACME-01"], (63, 63 * 640))

    def test_three_full_weeks(self) -> None:
        self.assertEqual(self.lines["BETA-02"], (15, 15 * 720))

    def test_contract_starting_on_a_saturday(self) -> None:
        # 2024-03-02 is a Saturday: the first working day is Monday 2024-03-04.
        self.assertEqual(self.lines["GAMMA-03"], (31, 31 * 580))

    def test_spring_with_two_bank_holidays(self) -> None:
        self.assertEqual(self.lines["DELTA-04"], (53, 53 * 650))

    def test_month_starting_on_a_wednesday(self) -> None:
        self.assertEqual(self.lines["ETA-05"], (21, 21 * 700))

    def test_summer_quarter(self) -> None:
        self.assertEqual(self.lines["EPSILON-06"], (65, 65 * 610))

    def test_christmas(self) -> None:
        self.assertEqual(self.lines["ZETA-07"], (20, 20 * 690))


if __name__ == "__main__":
    unittest.main()
