"""Working-day arithmetic for the invoices.

A working day is a Monday to Friday that is not a public holiday.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date


def count_workdays(start: date, end: date, holidays: Iterable[date] = ()) -> int:
    """The number of working days from ``start`` to ``end``, both included.

    A day in ``holidays`` is not a working day; a holiday that falls on a
    weekend or outside the range changes nothing. Returns 0 when ``end`` is
    before ``start``.

    Runs in constant time whatever the length of the range (plus one pass over
    the holidays), so multi-year contracts cost no more than a single month.
    """
    if end < start:
        return 0
    weeks, extra = divmod((end - start).days + 1, 7)
    count = weeks * 5
    # The days left over after the whole weeks start on start's weekday:
    # count the ones that fall before Saturday.
    first = start.weekday()
    if first < 5:
        count += min(extra, 5 - first)
    # Holidays only matter inside the range.
    count -= sum(1 for day in set(holidays) if start <= day <= end)
    return count
