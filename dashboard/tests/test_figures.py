"""The dashboard's figures, from issues, clocks and jobs with known
timestamps: medians and 90th percentiles per week, deadlines met in time,
the breakdowns and the ratings, only ever of the organization asked for."""

from __future__ import annotations

import datetime
import zoneinfo

import pytest

from dashboard.figures import dashboard_figures, week_starts
from dashboard.tests.builders import DAY, HOUR, aware, clock_at, issue_at, job_at, note_at, now_fixed, percentile_cont
from issues.models import ClockKind, IssueUpdate, Job
from properties.models import Contractor
from properties.tests.factories import OrganizationFactory, PropertyFactory

pytestmark = pytest.mark.django_db

NOW = now_fixed()  # Wednesday 18 November 2026, 12:00 UTC
WEEKS = 4  # Mondays 26 Oct, 2 Nov, 9 Nov, 16 Nov
MONDAYS = [
    datetime.date(2026, 10, 26),
    datetime.date(2026, 11, 2),
    datetime.date(2026, 11, 9),
    datetime.date(2026, 11, 16),
]
SINCE = aware(2026, 10, 26)


def figures(organization, **kwargs):
    return dashboard_figures(organization_ids=[organization.pk], now=NOW, zone=datetime.UTC, weeks=WEEKS, **kwargs)


def durations(organization):
    return {d.key: d for d in figures(organization).durations}


def week(figure, monday):
    [found] = [w for w in figure.weeks if w.start == monday]
    return found


@pytest.fixture
def orgs():
    return OrganizationFactory.create(name="Alpha"), OrganizationFactory.create(name="Beta")


def test_the_window_is_the_last_weeks_from_monday_in_the_zone():
    assert week_starts(now=NOW, zone=datetime.UTC, weeks=WEEKS) == MONDAYS
    # Monday 00:30 in Auckland is still Sunday in UTC: the zone decides the week.
    early_monday = aware(2026, 11, 22, 11, 30)
    auckland = zoneinfo.ZoneInfo("Pacific/Auckland")
    assert week_starts(now=early_monday, zone=auckland, weeks=1) == [datetime.date(2026, 11, 23)]
    assert week_starts(now=early_monday, zone=datetime.UTC, weeks=1) == [datetime.date(2026, 11, 16)]


def test_time_to_resolve_is_the_median_and_p90_of_each_week_resolved(orgs):
    alpha, beta = orgs
    hours = [1, 2, 3, 4, 10]
    resolved_at = aware(2026, 11, 11, 9)  # the week of 9 November
    for h in hours:
        issue_at(alpha, created=resolved_at - h * HOUR, status="resolved", resolved=resolved_at)
    late_week = [30, 50]  # this week, in days' terms
    for h in late_week:
        issue_at(alpha, created=NOW - h * HOUR, status="closed", resolved=NOW - HOUR)
    # Not counted: resolved before the window, after "now", still open, or another organization's.
    issue_at(alpha, created=SINCE - 3 * DAY, status="resolved", resolved=SINCE - HOUR)
    issue_at(alpha, created=NOW - DAY, status="resolved", resolved=NOW + HOUR)
    issue_at(alpha, created=NOW - 2 * DAY)
    issue_at(beta, created=resolved_at - 100 * HOUR, status="resolved", resolved=resolved_at)

    resolve = durations(alpha)["resolve"]
    assert [w.start for w in resolve.weeks] == MONDAYS
    nine = week(resolve, MONDAYS[2])
    assert nine.count == len(hours)
    assert nine.median == percentile_cont([h * HOUR for h in hours], 0.5) == 3 * HOUR
    assert nine.p90 == percentile_cont([h * HOUR for h in hours], 0.9)
    sixteen = week(resolve, MONDAYS[3])
    assert sixteen.count == 2
    assert sixteen.median == percentile_cont([(h - 1) * HOUR for h in late_week], 0.5)
    assert sixteen.p90 == percentile_cont([(h - 1) * HOUR for h in late_week], 0.9)
    assert [(w.count, w.median, w.p90) for w in resolve.weeks[:2]] == [(0, None, None), (0, None, None)]
    assert resolve.count == len(hours) + len(late_week)

    assert week(durations(beta)["resolve"], MONDAYS[2]).median == 100 * HOUR


def test_first_response_is_the_earlier_of_acknowledging_and_the_landlords_own_history(orgs):
    alpha, _ = orgs
    created = aware(2026, 11, 3, 8)  # the week of 2 November
    # A note by the landlord an hour in, acknowledged five hours in: one hour.
    noted = issue_at(alpha, created=created, status="acknowledged", acknowledged=created + 5 * HOUR)
    note_at(noted, created + HOUR)
    # The system's and the tenant's entries are not a response: acknowledged two hours in.
    acknowledged = issue_at(alpha, created=created, status="acknowledged", acknowledged=created + 2 * HOUR)
    note_at(acknowledged, created + 30 * 60 * datetime.timedelta(seconds=1), author=IssueUpdate.Author.SYSTEM)
    note_at(acknowledged, created + 10 * 60 * datetime.timedelta(seconds=1), author=IssueUpdate.Author.TENANT)
    # Never acknowledged, but a job offered by the landlord (their history entry) three hours in.
    offered = issue_at(alpha, created=created, status="open")
    note_at(offered, created + 3 * HOUR)
    # No response yet: not counted.
    issue_at(alpha, created=created, status="open")
    # Acknowledged before the window: not counted, whatever its history says later.
    old = issue_at(alpha, created=SINCE - 2 * DAY, status="acknowledged", acknowledged=SINCE - DAY)
    note_at(old, created)

    first = durations(alpha)["first-response"]
    two = week(first, MONDAYS[1])
    responses = [1 * HOUR, 2 * HOUR, 3 * HOUR]
    assert two.count == len(responses)
    assert two.median == percentile_cont(responses, 0.5)
    assert two.p90 == percentile_cont(responses, 0.9)
    assert first.count == len(responses)


def test_first_response_counts_in_the_week_it_happened(orgs):
    alpha, _ = orgs
    sunday_night = aware(2026, 11, 8, 23)
    issue_at(alpha, created=sunday_night, status="acknowledged", acknowledged=sunday_night + 2 * HOUR)
    first = durations(alpha)["first-response"]
    assert week(first, MONDAYS[1]).count == 0
    assert week(first, MONDAYS[2]).count == 1 and week(first, MONDAYS[2]).median == 2 * HOUR


def test_time_to_make_safe_reads_the_made_safe_clocks(orgs):
    alpha, beta = orgs
    started = aware(2026, 10, 27, 6)  # the week of 26 October
    made_safe = [2 * HOUR, 5 * HOUR, 20 * HOUR, 30 * HOUR]
    for elapsed in made_safe:
        issue = issue_at(alpha, created=started, urgency="emergency", status="resolved", resolved=started + DAY * 2)
        clock_at(issue, ClockKind.MADE_SAFE, started=started, due=started + DAY, met=started + elapsed)
        clock_at(issue, ClockKind.RESOLVED, started=started, due=started + 7 * DAY, met=started + 2 * DAY)
    running = issue_at(alpha, created=started, urgency="emergency")
    clock_at(running, ClockKind.MADE_SAFE, started=started, due=started + DAY)
    other = issue_at(beta, created=started, urgency="emergency")
    clock_at(other, ClockKind.MADE_SAFE, started=started, due=started + DAY, met=started + 90 * HOUR)

    safe = durations(alpha)["make-safe"]
    first = week(safe, MONDAYS[0])
    assert first.count == len(made_safe)
    assert first.median == percentile_cont(made_safe, 0.5)
    assert first.p90 == percentile_cont(made_safe, 0.9)
    assert safe.count == len(made_safe)


def test_deadlines_count_clocks_met_or_past_due_and_which_were_in_time(orgs):
    alpha, beta = orgs
    start = aware(2026, 11, 2, 9)
    open_issue = issue_at(alpha, created=start)
    second = issue_at(alpha, created=start, status="acknowledged", acknowledged=start + HOUR)
    closed = issue_at(alpha, created=start, status="closed", acknowledged=start + HOUR)
    closed_missed = issue_at(alpha, created=start, status="closed", acknowledged=start + HOUR)
    # Resolved clocks: met in time, met late, overdue (not met, past due), met early though not yet due.
    clock_at(open_issue, started=start, due=start + 2 * DAY, met=start + DAY)
    clock_at(second, started=start, due=start + DAY, met=start + 3 * DAY)
    clock_at(closed_missed, started=start, due=start + DAY, missed=start + DAY)  # missed, then closed
    early = issue_at(alpha, created=start)
    clock_at(early, started=start, due=NOW + 10 * DAY, met=NOW - HOUR)
    # Made safe: overdue on an open issue; stopped by closing before it ran out (not counted).
    clock_at(open_issue, ClockKind.MADE_SAFE, started=start, due=start + DAY)
    clock_at(closed, ClockKind.MADE_SAFE, started=start, due=start + DAY)
    # Not decided yet: running, not due.
    clock_at(second, ClockKind.MADE_SAFE, started=start, due=NOW + DAY)
    # Decided before the window: met before it (though due inside it), or late inside it but due before it.
    clock_at(closed, started=SINCE - 5 * DAY, due=SINCE - DAY, met=SINCE - 2 * DAY)
    clock_at(second, ClockKind.INVESTIGATED, started=SINCE - 3 * DAY, due=SINCE + DAY, met=SINCE - HOUR)
    clock_at(open_issue, ClockKind.WORKS_STARTED, started=SINCE - 5 * DAY, due=SINCE - DAY, met=SINCE + DAY)
    # Another organization's, all missed.
    for _ in range(3):
        clock_at(issue_at(beta, created=start), started=start, due=start + DAY)

    deadlines = figures(alpha).deadlines
    by_kind = {row.label: (row.inside, row.decided) for row in deadlines.kinds}
    assert by_kind == {"Resolved": (2, 4), "Made safe": (0, 1)}
    assert (deadlines.overall.inside, deadlines.overall.decided) == (2, 5)
    assert deadlines.overall.percent == pytest.approx(100 * 2 / 5)
    assert [row.label for row in deadlines.kinds] == ["Made safe", "Resolved"]  # in the clocks' own order
    beta_deadlines = figures(beta).deadlines
    assert (beta_deadlines.overall.inside, beta_deadlines.overall.decided) == (0, 3)
    assert beta_deadlines.overall.percent == 0


def test_open_issues_by_age_and_urgency(orgs):
    alpha, beta = orgs
    ages = {
        ("under 1 day", "emergency"): [2 * HOUR],
        ("1-3 days", "urgent"): [2 * DAY, 2 * DAY + HOUR],
        ("3-7 days", "routine"): [5 * DAY],
        ("1-4 weeks", "routine"): [10 * DAY],
        ("over 4 weeks", "urgent"): [40 * DAY],
    }
    statuses = ["open", "acknowledged", "scheduled"]
    for (_, urgency), each in ages.items():
        for n, age in enumerate(each):
            issue_at(alpha, created=NOW - age, urgency=urgency, status=statuses[n % 3])
    issue_at(alpha, created=NOW - HOUR, urgency="emergency", status="resolved", resolved=NOW)
    issue_at(alpha, created=NOW - HOUR, urgency="emergency", status="closed")
    issue_at(beta, created=NOW - HOUR, urgency="emergency")

    found = figures(alpha).open_by_age
    assert found.counts == {key: len(each) for key, each in ages.items()}
    assert found.total == sum(len(each) for each in ages.values())
    series = {value: counts for value, _, counts in found.series()}
    assert series["urgent"] == [0, 2, 0, 0, 1]
    assert [total for _, _, total in found.rows()] == [1, 2, 1, 1, 1]


def test_breakdowns_per_property_and_category(orgs):
    alpha, beta = orgs
    flat = PropertyFactory.create(organization=alpha, code="FLAT-1")
    house = PropertyFactory.create(organization=alpha, code="HOUSE-2")
    when = aware(2026, 11, 10, 9)
    # The flat: three reports, two resolved (4 h and 10 h) and rated 5 and 2; one still open.
    for h, rating in [(4, 5), (10, 2)]:
        issue = issue_at(
            alpha,
            property=flat,
            created=when,
            category="plumbing",
            status="closed",
            resolved=when + h * HOUR,
            rating=rating,
        )
        clock_at(issue, started=when, due=when + 6 * HOUR, met=when + h * HOUR)
    issue_at(alpha, property=flat, created=when, category="heating")
    # The house: one report, open, reported before the window (still counted as open).
    issue_at(alpha, property=house, created=SINCE - 10 * DAY, category="heating")
    issue_at(beta, created=when, category="plumbing", status="resolved", resolved=when + HOUR, rating=1)

    found = figures(alpha)
    rows = {row.label.split(" · ")[0]: row for row in found.by_property.rows}
    assert list(rows) == ["FLAT-1", "HOUSE-2"]  # the busiest first
    flat_row = rows["FLAT-1"]
    assert (flat_row.reported, flat_row.open, flat_row.resolved) == (3, 1, 2)
    assert flat_row.median_resolve == percentile_cont([4 * HOUR, 10 * HOUR], 0.5)
    assert (flat_row.clocks_inside, flat_row.clocks_decided) == (1, 2)
    assert flat_row.inside_percent == 50
    assert flat_row.rating_average == pytest.approx((5 + 2) / 2)
    assert flat_row.ratings == 2
    house_row = rows["HOUSE-2"]
    assert (house_row.reported, house_row.open, house_row.resolved, house_row.rating_average) == (0, 1, 0, None)
    assert house_row.inside_percent is None

    categories = {row.label: row for row in found.by_category.rows}
    assert set(categories) == {"Plumbing and leaks", "Heating and hot water"}
    assert (categories["Plumbing and leaks"].reported, categories["Plumbing and leaks"].resolved) == (2, 2)
    assert (categories["Heating and hot water"].reported, categories["Heating and hot water"].open) == (1, 2)
    assert found.by_category.more == 0


def test_per_property_keeps_the_busiest_and_counts_the_rest(orgs, monkeypatch):
    alpha, _ = orgs
    monkeypatch.setattr("dashboard.figures.TOP_ROWS", 2)
    for n, reports in enumerate([1, 3, 2, 1]):
        home = PropertyFactory.create(organization=alpha, code=f"HOME-{n}")
        for _ in range(reports):
            issue_at(alpha, property=home, created=NOW - DAY)
    by_property = figures(alpha).by_property
    assert [row.label.split(" · ")[0] for row in by_property.rows] == ["HOME-1", "HOME-2"]
    assert by_property.more == 2


def test_per_contractor_offers_answers_and_the_issues_they_took(orgs):
    alpha, beta = orgs
    sparks = Contractor.objects.create(organization=alpha, name="Sparks Ltd")
    drips = Contractor.objects.create(organization=alpha, name="Drips & Co")
    offered = aware(2026, 11, 4, 9)
    # Sparks accepts two in 1 h and 3 h; one resolved in 20 h (closing cancelled the job days
    # after its answer was due), rated 4; one still open and accepted.
    took_closed = issue_at(alpha, created=offered, status="closed", resolved=offered + 20 * HOUR, rating=4)
    job_at(took_closed, sparks, offered=offered, state=Job.State.CANCELLED, responded=offered + 3 * DAY)
    clock_at(took_closed, started=offered, due=offered + DAY, met=offered + 20 * HOUR)
    # It had been taken by Sparks once before, then reopened (which cancels the job): one issue.
    job_at(took_closed, sparks, offered=offered - 2 * DAY, state=Job.State.CANCELLED, responded=offered - DAY)
    still_open = issue_at(alpha, created=offered, status="scheduled", acknowledged=offered + HOUR)
    job_at(still_open, sparks, offered=offered, state=Job.State.ACCEPTED, responded=offered + HOUR)
    clock_at(still_open, started=offered, due=offered + DAY)  # overdue: against Sparks
    # Sparks declines one after 2 h and lets one lapse.
    declined = issue_at(alpha, created=offered)
    job_at(declined, sparks, offered=offered, state=Job.State.DECLINED, responded=offered + 2 * HOUR)
    clock_at(declined, started=offered, due=offered + DAY)  # overdue, but not Sparks' job
    lapsed = issue_at(alpha, created=offered)
    job_at(lapsed, sparks, offered=offered, state=Job.State.EXPIRED, responded=offered + 4 * HOUR)
    # Drips' offer was cancelled while it could still be answered: not taken.
    quick = issue_at(alpha, created=offered, status="closed", resolved=offered + HOUR, rating=1)
    job_at(quick, drips, offered=offered, state=Job.State.CANCELLED, responded=offered + HOUR)
    # Bob's contractor is never shown.
    other = Contractor.objects.create(organization=beta, name="Elsewhere")
    job_at(issue_at(beta, created=offered), other, offered=offered, state=Job.State.ACCEPTED, responded=offered)

    rows = {row.label: row for row in figures(alpha).by_contractor.rows}
    assert list(rows) == ["Sparks Ltd", "Drips & Co"]  # most offers first
    sparks_row = rows["Sparks Ltd"]
    assert (sparks_row.offered, sparks_row.accepted, sparks_row.declined, sparks_row.lapsed) == (5, 3, 1, 1)
    assert sparks_row.ratings == 1
    # Answered: accepted in 1 h, declined in 2 h (the cancelled job's time is the closing's, not an answer).
    assert sparks_row.median_answer == percentile_cont([HOUR, 2 * HOUR], 0.5)
    assert (sparks_row.resolved, sparks_row.median_resolve, sparks_row.rating_average) == (1, 20 * HOUR, 4.0)
    assert (sparks_row.clocks_inside, sparks_row.clocks_decided) == (1, 2)
    drips_row = rows["Drips & Co"]
    assert (drips_row.offered, drips_row.accepted, drips_row.resolved, drips_row.rating_average) == (1, 0, 0, None)
    assert drips_row.clocks_decided == 0


def test_ratings_distribution_and_average(orgs):
    alpha, beta = orgs
    given = [5, 5, 4, 1, 3, 5]
    for n, rating in enumerate(given):
        issue_at(alpha, created=NOW - 3 * DAY, status="closed", resolved=NOW - DAY - n * HOUR, rating=rating)
    issue_at(alpha, created=NOW - 3 * DAY, status="closed", resolved=NOW - DAY)  # no rating
    issue_at(alpha, created=SINCE - 9 * DAY, status="closed", resolved=SINCE - DAY, rating=1)  # before
    issue_at(beta, created=NOW - 3 * DAY, status="closed", resolved=NOW - DAY, rating=1)

    found = figures(alpha).ratings
    assert found.counts == {k: given.count(k) for k in range(1, 6)}
    assert found.total == len(given)
    assert found.average == pytest.approx(sum(given) / len(given))


def test_an_empty_organization_has_empty_figures_and_no_division_by_zero(orgs):
    alpha, beta = orgs
    issue = issue_at(beta, created=NOW - DAY, status="closed", resolved=NOW - HOUR, rating=2)
    clock_at(issue, started=NOW - DAY, due=NOW - 2 * HOUR, met=NOW - HOUR)
    for scope in ([alpha.pk], []):  # an organization with nothing; a user with no organization
        found = dashboard_figures(organization_ids=scope, now=NOW, zone=datetime.UTC, weeks=WEEKS)
        assert found.open_by_age.total == 0
        assert all(d.count == 0 and all(w.median is None for w in d.weeks) for d in found.durations)
        assert found.deadlines.kinds == [] and found.deadlines.overall.percent is None
        assert found.by_property.rows == found.by_category.rows == found.by_contractor.rows == []
        assert found.ratings.total == 0 and found.ratings.average is None
    everyone = dashboard_figures(organization_ids=None, now=NOW, zone=datetime.UTC, weeks=WEEKS)
    assert everyone.ratings.total == 1  # a superuser's view: every organization


def test_weeks_must_be_positive():
    with pytest.raises(ValueError):
        dashboard_figures(organization_ids=[], now=NOW, weeks=0)
