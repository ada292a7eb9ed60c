"""Reading the visit times a contractor types: what counts as a time, which
day it goes with, and what is left out."""

from __future__ import annotations

import datetime

import pytest

from issues.visit_times import times_read
from properties.working_time import zone_get

LONDON = zone_get("Europe/London")
WEDNESDAY = datetime.datetime(2026, 11, 25, 10, 0, tzinfo=LONDON)


def read(text: str, country: str = "GB", now: datetime.datetime = WEDNESDAY) -> list[str]:
    return [f"{t:%a %d %b %H:%M}" for t in times_read(text, now=now, country=country)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Thursday 9am", ["Thu 26 Nov 09:00"]),
        ("thursday at 9", ["Thu 26 Nov 09:00"]),  # a bare hour after a day, in working hours
        ("thursday at 3", ["Thu 26 Nov 15:00"]),
        ("friday 10 or 2", ["Fri 27 Nov 10:00", "Fri 27 Nov 14:00"]),  # "or" after a time: another time
        ("friday between 10 and 12", ["Fri 27 Nov 10:00"]),  # a range is its start
        ("14:00 on the 3rd of december", ["Thu 03 Dec 14:00"]),  # a time before its day
        ("wednesday", []),  # a day alone is not a visit time
    ],
)
def test_times_go_with_their_day(text, expected):
    assert read(text) == expected


def test_numbers_that_are_not_times_are_left_out():
    assert read("thursday 9am at 22 station road, its a 2 man job, ref LA-4417") == ["Thu 26 Nov 09:00"]
    assert read("busy till 3 on friday") == []  # "till 3" is an end, and Friday has no time


def test_a_weekday_is_the_next_one_and_today_is_today():
    assert read("wednesday 9am") == ["Wed 02 Dec 09:00"]  # not today, a Wednesday
    assert read("today 4pm") == ["Wed 25 Nov 16:00"]
    assert read("today 8am") == []  # already past


def test_dates_are_day_first_outside_the_us():
    assert read("3/12 at 11") == ["Thu 03 Dec 11:00"]
    new_york = datetime.datetime(2026, 11, 25, 10, 0, tzinfo=zone_get("America/New_York"))
    assert read("12/3 at 11", country="US", now=new_york) == ["Thu 03 Dec 11:00"]


def test_at_most_the_limit_in_the_order_written():
    many = "mon 9am tue 9am wed 9am thu 9am"
    assert read(many) == ["Mon 30 Nov 09:00", "Tue 01 Dec 09:00", "Wed 02 Dec 09:00"]
