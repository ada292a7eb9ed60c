"""When a deadline falls: calendar hours, calendar days or working days, in
the organization's own time zone and with its public holidays.

- ``hours``: the start plus that many hours of the clock, weekends and
  holidays included (Awaab's Law's 24 hours for an emergency hazard).
- ``calendar_days``: the end of the Nth day after the start's own day.
- ``working_days``: the end of the Nth working day after the start's own day.
  A working day is Monday to Friday and not a public holiday of the
  organization's country and region (the ``holidays`` package; a blank
  region in Great Britain means England's). The start's
  own day never counts, whatever the hour: a report on Friday at 09:00 with
  "3 working days" is due at the end of Wednesday.

"The end of a day" is 23:59:59 in the organization's time zone. Pure
functions: no database, no clock of their own.
"""

from __future__ import annotations

import datetime
import functools
import logging
import zoneinfo

import holidays

logger = logging.getLogger(__name__)

HOURS = "hours"
CALENDAR_DAYS = "calendar_days"
WORKING_DAYS = "working_days"
UNITS = (HOURS, CALENDAR_DAYS, WORKING_DAYS)


# A blank region in these countries means this one: Great Britain's nationwide
# list lacks Easter Monday and the August bank holiday that England keeps.
REGION_DEFAULT = {"GB": "ENG"}


@functools.lru_cache(maxsize=64)
def _holidays(country: str, region: str) -> holidays.HolidayBase:
    """The public holidays (years are added as they are looked up). A region
    the package does not know falls back to the country's own list, logged:
    a deadline is never refused for it (the admin validates the field)."""
    try:
        return holidays.country_holidays(country, subdiv=region or REGION_DEFAULT.get(country))
    except NotImplementedError:
        logger.warning("no public holidays for %s region %r: using the country's own", country, region)
        return holidays.country_holidays(country)


def holidays_check(country: str, region: str) -> None:
    """Raise ValueError when the country or region is unknown to ``holidays``."""
    try:
        holidays.country_holidays(country, subdiv=region or REGION_DEFAULT.get(country))
    except NotImplementedError as error:
        raise ValueError(f"No public holidays are known for country {country!r} region {region!r}.") from error


def zone_known(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def zone_get(name: str) -> datetime.tzinfo:
    """The named time zone; UTC for a name the system does not know."""
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return datetime.UTC


def public_holiday(day: datetime.date, *, country: str, region: str) -> bool:
    return day in _holidays(country, region)


def working_day(day: datetime.date, *, country: str, region: str) -> bool:
    return day.weekday() < 5 and not public_holiday(day, country=country, region=region)


def _day_end(day: datetime.date, zone: datetime.tzinfo) -> datetime.datetime:
    return datetime.datetime.combine(day, datetime.time(23, 59, 59), tzinfo=zone)


def deadline_add(
    start: datetime.datetime, *, amount: int, unit: str, zone: datetime.tzinfo, country: str, region: str = ""
) -> datetime.datetime:
    """The moment ``amount`` ``unit``s after ``start`` (an aware datetime)."""
    if amount < 0:
        raise ValueError("a deadline cannot fall before its start")
    if unit == HOURS:
        # In UTC: arithmetic on a zoned datetime is wall-clock time, an hour
        # out across a clock change.
        return start.astimezone(datetime.UTC) + datetime.timedelta(hours=amount)
    day = start.astimezone(zone).date()
    if unit == CALENDAR_DAYS:
        return _day_end(day + datetime.timedelta(days=amount), zone)
    if unit == WORKING_DAYS:
        counted = 0
        while counted < amount:
            day += datetime.timedelta(days=1)
            if working_day(day, country=country, region=region):
                counted += 1
        return _day_end(day, zone)
    raise ValueError(f"unknown unit {unit!r}; one of {', '.join(UNITS)}")
