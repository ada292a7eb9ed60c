"""Deadlines across weekends, bank holidays, regions and clock changes."""

import datetime
import zoneinfo

import pytest

from properties.working_time import deadline_add, holidays_check, working_day

LONDON = zoneinfo.ZoneInfo("Europe/London")


def at(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime.datetime:
    return datetime.datetime(year, month, day, hour, minute, second, tzinfo=LONDON)


def add(start, amount, unit, region="", country="GB"):
    return deadline_add(start, amount=amount, unit=unit, zone=LONDON, country=country, region=region)


def test_hours_are_calendar_hours_through_a_weekend():
    assert add(at(2026, 11, 27, 18, 0), 24, "hours") == at(2026, 11, 28, 18, 0)  # Friday -> Saturday


def test_hours_are_real_hours_across_the_autumn_clock_change():
    start = at(2026, 10, 24, 12, 0)  # BST, the day before the clocks go back
    due = add(start, 24, "hours")
    assert due.astimezone(datetime.UTC) - start.astimezone(datetime.UTC) == datetime.timedelta(hours=24)
    assert due.astimezone(LONDON).hour == 11  # GMT by then


def test_working_days_skip_the_weekend_and_the_report_day_never_counts():
    # Reported Friday 09:00: 3 working days are Mon, Tue, Wed.
    assert add(at(2026, 11, 27, 9, 0), 3, "working_days") == at(2026, 12, 2, 23, 59, 59)
    # Reported on a Saturday night: Monday is the first working day.
    assert add(at(2026, 11, 28, 23, 30), 1, "working_days") == at(2026, 11, 30, 23, 59, 59)


def test_working_days_skip_christmas_boxing_day_and_the_substitute_bank_holiday():
    # Monday 21 Dec 2026: Tue 22, Wed 23, Thu 24 count; 25 (Fri), 26-27 (weekend),
    # 28 (Boxing Day observed) do not; Tue 29, Wed 30, Thu 31 count; 1 Jan is a
    # holiday; Mon 4 Jan is the 7th, and so on to the 10th on Thu 7 Jan 2027.
    assert add(at(2026, 12, 21, 10, 0), 10, "working_days") == at(2027, 1, 7, 23, 59, 59)


def test_the_region_decides_whether_easter_monday_is_a_working_day():
    thursday = at(2026, 4, 2, 10, 0)  # Good Friday 3 Apr, Easter Monday 6 Apr 2026
    assert add(thursday, 1, "working_days", region="ENG") == at(2026, 4, 7, 23, 59, 59)
    assert add(thursday, 1, "working_days") == at(2026, 4, 7, 23, 59, 59)  # blank in GB means England's
    assert add(thursday, 1, "working_days", region="SCT") == at(2026, 4, 6, 23, 59, 59)


def test_another_country_has_its_own_holidays():
    # 17 March, St Patrick's Day, is a holiday in Ireland only.
    monday = at(2026, 3, 16, 10, 0)
    assert add(monday, 1, "working_days", country="IE") == at(2026, 3, 18, 23, 59, 59)
    assert add(monday, 1, "working_days", country="GB") == at(2026, 3, 17, 23, 59, 59)
    assert not working_day(datetime.date(2026, 3, 17), country="IE", region="")


def test_calendar_days_end_at_the_end_of_the_last_day_in_local_time():
    assert add(at(2026, 11, 27, 9, 0), 7, "calendar_days") == at(2026, 12, 4, 23, 59, 59)


def test_bad_input_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="unknown unit"):
        add(at(2026, 11, 27, 9, 0), 3, "fortnights")
    with pytest.raises(ValueError, match="before its start"):
        add(at(2026, 11, 27, 9, 0), -1, "hours")
    with pytest.raises(ValueError, match="No public holidays"):
        holidays_check("GB", "XX")
