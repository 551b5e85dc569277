import unittest
from datetime import date

from workdays import count_workdays


class CountWorkdaysTest(unittest.TestCase):
    def test_one_working_week(self) -> None:
        self.assertEqual(count_workdays(date(2024, 3, 4), date(2024, 3, 8)), 5)

    def test_weekend_adds_nothing(self) -> None:
        self.assertEqual(count_workdays(date(2024, 3, 4), date(2024, 3, 10)), 5)

    def test_single_days(self) -> None:
        self.assertEqual(count_workdays(date(2024, 3, 6), date(2024, 3, 6)), 1)
        self.assertEqual(count_workdays(date(2024, 3, 9), date(2024, 3, 9)), 0)

    def test_whole_months(self) -> None:
        self.assertEqual(count_workdays(date(2024, 3, 1), date(2024, 3, 31)), 21)
        self.assertEqual(count_workdays(date(2024, 4, 1), date(2024, 4, 30)), 22)

    def test_end_before_start(self) -> None:
        self.assertEqual(count_workdays(date(2024, 3, 8), date(2024, 3, 4)), 0)

    def test_holiday_on_a_working_day(self) -> None:
        easter_monday = date(2024, 4, 1)
        self.assertEqual(count_workdays(date(2024, 4, 1), date(2024, 4, 5), [easter_monday]), 4)

    def test_holiday_outside_the_range(self) -> None:
        good_friday = date(2024, 3, 29)
        self.assertEqual(count_workdays(date(2024, 4, 1), date(2024, 4, 5), [good_friday]), 5)


if __name__ == "__main__":
    unittest.main()
