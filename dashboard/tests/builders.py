"""Issues, clocks and jobs with the timestamps a test chooses, for the
dashboard's tests. ``created_at`` and an update's ``created_at`` are set by
the database on insert, so they are moved afterwards with an UPDATE."""

from __future__ import annotations

import datetime
import math
from collections.abc import Sequence

from issues.models import ClockKind, Issue, IssueClock, IssueUpdate, Job
from properties.models import Contractor, Organization, Property
from properties.tests.factories import IssueFactory

MINUTE = datetime.timedelta(minutes=1)
HOUR = datetime.timedelta(hours=1)
DAY = datetime.timedelta(days=1)


def issue_at(
    organization: Organization,
    *,
    created: datetime.datetime,
    property: Property | None = None,
    urgency: str = "routine",
    category: str = "plumbing",
    status: str = "open",
    acknowledged: datetime.datetime | None = None,
    resolved: datetime.datetime | None = None,
    rating: int | None = None,
) -> Issue:
    extra = {"property": property} if property is not None else {}
    issue = IssueFactory.create(
        organization=organization, urgency=urgency, category=category, status=status, rating=rating, **extra
    )
    Issue.objects.filter(pk=issue.pk).update(created_at=created, acknowledged_at=acknowledged, resolved_at=resolved)
    issue.refresh_from_db()
    return issue


def note_at(issue: Issue, at: datetime.datetime, author: str = IssueUpdate.Author.LANDLORD) -> IssueUpdate:
    update = IssueUpdate.objects.create(issue=issue, author=author, body="A note.")
    IssueUpdate.objects.filter(pk=update.pk).update(created_at=at)
    return update


def clock_at(
    issue: Issue,
    kind: str = ClockKind.RESOLVED,
    *,
    started: datetime.datetime,
    due: datetime.datetime,
    met: datetime.datetime | None = None,
    missed: datetime.datetime | None = None,
) -> IssueClock:
    return IssueClock.objects.create(
        issue=issue,
        kind=kind,
        rule="test",
        started_at=started,
        due_at=due,
        warn_at=due - HOUR,
        met_at=met,
        missed_at=missed,
    )


def job_at(
    issue: Issue,
    contractor: Contractor,
    *,
    offered: datetime.datetime,
    state: str,
    responded: datetime.datetime | None = None,
    answer_hours: float = 4,
) -> Job:
    return Job.objects.create(
        issue=issue,
        contractor=contractor,
        state=state,
        offered_at=offered,
        respond_by=offered + answer_hours * HOUR,
        responded_at=responded,
    )


def percentile_cont(values: Sequence[datetime.timedelta], fraction: float) -> datetime.timedelta:
    """PostgreSQL's percentile_cont, by its definition (linear interpolation
    between the two nearest ranks), to check the database's answer against."""
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def now_fixed() -> datetime.datetime:
    """A Wednesday noon (UTC): the window's weeks start on Mondays before it."""
    return datetime.datetime(2026, 11, 18, 12, 0, tzinfo=datetime.UTC)


def aware(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime.datetime:
    return datetime.datetime(year, month, day, hour, minute, tzinfo=datetime.UTC)
