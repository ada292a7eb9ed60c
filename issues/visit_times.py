"""Visit times read from a contractor's typed WhatsApp reply: "tues 9 or
weds 2pm", "2moro between 1 and 3", "12/3 at 3:30pm", "first thing thurs".

A small grammar, scripted and deterministic (no model, no network). The
reply is cut into words; each is a *day* (a weekday, today, tomorrow, a date
written 3/12, "the 3rd", "3 Dec"), a *time* ("9am", "7.30", "half 2",
"2ish", "noon", "dinner time", "first thing", "morning", "pm") or neither.
A time goes with the day before it, or with the next day when none came
before ("half 9 tomorrow"). A bare number is a time only where a time is
expected: straight after a day, after "at", "from", "after", "between",
"around", "half", or after "or"/"and" that follow a time; so a house number,
"a 2 man job" or "LA-2231" is not. A bare hour is read in a tradesperson's
day: 7-11 in the morning, 1-6 in the afternoon; a bare 13 or more is not
an hour (14:00 is). "Between 1 and 3" is its
start; "till 3" is an end, not a time. A day with no time ("Monday",
"sometime next week") is not a visit time. Weekday names mean the next such
day after today; dates are day/month, month/day in the US. Measured on
blind replies by ``evals/contractor_times`` (docs/repair-loop.md).
"""

from __future__ import annotations

import datetime
import re

WEEKDAYS = {
    "mon": 0, "monday": 0,
    "tue": 1, "tues": 1, "tuesday": 1,
    "wed": 2, "weds": 2, "wednesday": 2,
    "thu": 3, "thur": 3, "thurs": 3, "thursday": 3,
    "fri": 4, "friday": 4,
    "sat": 5, "saturday": 5,
    "sun": 6, "sunday": 6,
}  # fmt: skip
TODAY = {"today", "tday", "2day"}
TOMORROW = {"tomorrow", "tmrw", "tmw", "tmro", "tmoz", "tomoz", "2moro", "2morrow", "tomorow", "tommorow"}
MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
            ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
            ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"), ("dec", "december"),
        ],
        1,
    )
    for name in names
}  # fmt: skip
NAMED_TIMES = {
    "noon": datetime.time(12),
    "midday": datetime.time(12),
    "lunchtime": datetime.time(12),
    "lunch": datetime.time(12),
    "dinnertime": datetime.time(12),  # a tradesperson's dinner is at midday
    "morning": datetime.time(9),
    "am": datetime.time(9),
    "afternoon": datetime.time(13),
    "pm": datetime.time(13),
}
TIME_CUES = {"at", "from", "after", "between", "around", "about", "approx", "by", "half", "@"}
JOINERS = {"or", "and", "/", "&", ","}  # a comma or sentence end is a word of its own
ENDS = {"till", "til", "until", "to", "-"}
CORRECTIONS = {"sorry", "wait", "make", "scratch", "actually"}  # "between 1 and 3", "10 till 12": the second is an end
WORD = re.compile(r"[a-z0-9@&/:.'-]+|[,;!?]|\.(?=\s|$)")
CLOCK = re.compile(r"(\d{1,2})(?:[:.](\d{2}))?(am|pm|a\.m\.?|p\.m\.?)?(ish)?")
CLOCK_24 = re.compile(r"([01]\d|2[0-3])(00|15|30|45)(?:hrs|h)?")  # 1400, 0930 (not 2027: a year)
RANGE = re.compile(r"\b(\d{1,2}(?:[:.]\d\d)?(?:am|pm)?)\s*-\s*(\d{1,2}(?:[:.]\d\d)?(?:am|pm)?)\b")
SLASH_DATE = re.compile(r"(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?")
ORDINAL = re.compile(r"(\d{1,2})(st|nd|rd|th)")


def _hour(hour: int, minute: int, meridiem: str) -> datetime.time | None:
    if meridiem.startswith("p") and hour < 12:
        hour += 12
    elif meridiem.startswith("a") and hour == 12:
        hour = 0
    elif not meridiem and 1 <= hour <= 6:
        hour += 12  # a bare "2" is two in the afternoon
    if not 0 <= hour <= 23 or not 0 <= minute <= 59:
        return None
    return datetime.time(hour, minute)


def _clock(word: str, meridiem: str = "") -> tuple[datetime.time, bool] | None:
    """The time a word says, and whether it says so by itself (am/pm,
    minutes or "ish") rather than being a bare number."""
    if (match_24 := CLOCK_24.fullmatch(word)) is not None:
        return datetime.time(int(match_24.group(1)), int(match_24.group(2))), False
    match = CLOCK.fullmatch(word)
    if match is None:
        return None
    said = match.group(3) or meridiem
    if not (said or match.group(2)) and not 1 <= int(match.group(1)) <= 12:
        return None  # a bare 22 is a house number, not ten at night
    time = _hour(int(match.group(1)), int(match.group(2) or 0), (said or "").replace(".", ""))
    if time is None:
        return None
    return time, bool(said or match.group(2) or match.group(4))


def _month_day(today: datetime.date, day: int, month: int | None) -> datetime.date | None:
    """The next date with that day (of ``month``, or of this or next month)."""
    candidates = []
    for offset in range(0, 13):
        year, month_of = divmod(today.month - 1 + offset, 12)
        if month is not None and month_of + 1 != month:
            continue
        try:
            candidates.append(datetime.date(today.year + year, month_of + 1, day))
        except ValueError:
            continue
    return next((c for c in candidates if c >= today), None)


def _day(words: list[str], i: int, today: datetime.date, country: str) -> tuple[datetime.date, int] | None:
    """The day starting at ``words[i]``, and how many words it takes."""
    word = words[i]
    if word in TODAY:
        return today, 1
    if word in TOMORROW:
        return today + datetime.timedelta(days=1), 1
    if word in WEEKDAYS:
        ahead = (WEEKDAYS[word] - today.weekday() - 1) % 7 + 1
        return today + datetime.timedelta(days=ahead), 1
    if match := SLASH_DATE.fullmatch(word):
        first, second = int(match.group(1)), int(match.group(2))
        day, month = (second, first) if country == "US" else (first, second)
        if 1 <= month <= 12 and (date := _month_day(today, day, month)) is not None:
            return date, 1
        return None
    number = ORDINAL.fullmatch(word)
    after = words[i + 1] if i + 1 < len(words) else ""
    if number is None and word.isdigit() and after in MONTHS:
        number = re.fullmatch(r"(\d{1,2})", word)
    if number is not None:
        month_word = after if after in MONTHS else (words[i + 2] if after == "of" and i + 2 < len(words) else "")
        date = _month_day(today, int(number.group(1)), MONTHS.get(month_word))
        if date is None:
            return None
        return date, 1 + (month_word != "") + (after == "of" and month_word != "")
    if word in MONTHS and i + 1 < len(words):
        number = ORDINAL.fullmatch(after) or re.fullmatch(r"(\d{1,2})", after)
        if number and (date := _month_day(today, int(number.group(1)), MONTHS[word])) is not None:
            return date, 2
    return None


def _words(text: str) -> list[str]:
    text = RANGE.sub(r"\1 till \2", text.lower().replace("dinner time", "dinnertime"))  # "12-2": from 12
    words = ["," if w in ",;!?." else w.strip(".'-") or w for w in WORD.findall(text)]
    merged: list[str] = []
    for word in words:  # "9 am" -> "9am"; "first thing" -> one word
        if merged and word in ("am", "pm") and CLOCK.fullmatch(merged[-1]) and not merged[-1].endswith(("am", "pm")):
            merged[-1] += word
        elif merged and merged[-1] == "first" and word == "thing":
            merged[-1] = "firstthing"
        else:
            merged.append(word)
    return merged


def _is_day(words: list[str], i: int, today: datetime.date, country: str) -> bool:
    return i < len(words) and _day(words, i, today, country) is not None


def _correction(words: list[str], i: int) -> bool:
    """'actually no', 'no sorry', 'no make it': the time before is taken back."""
    if words[i] != "no":
        return False
    before = words[i - 1] if i else ""
    after = words[i + 1] if i + 1 < len(words) else ""
    return before == "actually" or after in CORRECTIONS


def times_read(text: str, *, now: datetime.datetime, country: str = "GB", limit: int = 3) -> list[datetime.datetime]:
    """The visit start times in ``text``, in the order written, as aware
    datetimes in ``now``'s zone (``now``: aware, the organization's local
    time). Times already past are left out."""
    words = _words(text)
    today = now.date()
    found: list[tuple[datetime.date, datetime.time, bool]] = []  # (day, time, vague)
    day: datetime.date | None = None
    waiting: list[tuple[datetime.time, bool]] = []  # times before any day: "half 9 tomorrow"
    previous = ""  # what the last word was: "day", "time", "cue", "joiner", "end" or ""
    after_time = False  # whether a time came just before this joiner ("10 or 2")
    i = 0
    while i < len(words):
        word = words[i]
        time: datetime.time | None = None
        vague = before_day = False
        if (read := _day(words, i, today, country)) is not None:
            day, taken = read
            if i + taken < len(words) and words[i + taken] == "week" and words[i] in WEEKDAYS:
                day, taken = day + datetime.timedelta(days=7), taken + 1  # "wednesday week"
            found += [(day, t, v) for t, v in waiting]
            waiting = []
            previous, i = "day", i + taken
            continue
        if _correction(words, i):
            if found or waiting:
                (waiting or found).pop()
            previous, i = "cue", i + 1
            continue
        if word == "half" and i + 1 < len(words) and (clock := _clock(words[i + 1])) is not None:
            time = clock[0].replace(minute=30)
            i += 1
        elif word == "firstthing":
            time = datetime.time(8)
        elif word in NAMED_TIMES and previous != "greeting":
            time, vague = NAMED_TIMES[word], word not in ("noon", "midday")
        elif (clock := _clock(word)) is not None:
            # "9 tmrw", "or 10 sat": that day's; but "weds 10 thurs 10": the day just before's
            before_day = previous != "day" and _is_day(words, i + 1, today, country)
            if clock[1] or before_day or previous in ("day", "cue") or (previous == "joiner" and after_time):
                time = clock[0]
        if time is not None:
            if day is not None and not before_day:
                found.append((day, time, vague))
            else:
                waiting.append((time, vague))
            after_time, previous = True, "time"
            if i + 2 < len(words) and words[i + 1] in ENDS | {"and"} and _clock(words[i + 2]) is not None:
                i += 2  # "between 1 and 3", "10 till 12": the end is not another visit
            i += 1
            continue
        if word in ENDS and i + 1 < len(words) and _clock(words[i + 1]) is not None:
            previous, i = "end", i + 2  # "till 3": an end, not a visit
            continue
        after_time = previous == "time" or (previous == "joiner" and after_time)
        if word == "it" and previous == "make":
            previous = "cue"  # "make it 11"
        elif word in ("good", "morning") and previous == "" and not found and not waiting and day is None:
            previous = "greeting" if word == "good" else ""
        else:
            previous = "cue" if word in TIME_CUES else "joiner" if word in JOINERS else word if word == "make" else ""
        i += 1
    precise = {d for d, _, v in found if not v}
    unique: list[datetime.datetime] = []
    for d, t, v in found:
        moment = datetime.datetime.combine(d, t, tzinfo=now.tzinfo)
        if v and d in precise:
            continue  # "tomorrow morning around 10": the 10
        if moment > now and moment not in unique:
            unique.append(moment)
    return unique[:limit]
