"""The dashboard's figures: how the agency is doing, computed in PostgreSQL.

Every figure is the organization's own (``organization_ids``; None for a
superuser: every organization) and, unless it says otherwise, covers the last
``WEEKS`` weeks: the current week (Monday 00:00 in ``zone``) and the
``WEEKS - 1`` before it. An event counts in the week it happened, so a week's
figure never changes once the week is over:

- **Time to first response**: from the report (``created_at``) to the first
  thing a person at the agency did about it. The code has two records of that:
  ``acknowledged_at``, set by a person's first status change (any move off
  open, so resolving or closing straight away counts, and the tenant is told),
  and the issue's history, where a person's own entries are written with
  author ``landlord`` (a note, a job offered to a contractor, a deadline's step
  recorded, the tenant's number linked) often before any status change. The
  truest measure is the earlier of the two, so that is the one used; an issue
  counts in the week of that first response.
- **Time to make safe**: the made-safe clock's ``met_at - started_at`` (only
  the policies with that clock have it: emergencies), in the week it was met.
- **Time to resolve**: ``resolved_at - created_at``, in the week it was
  resolved (reopening clears ``resolved_at``, so a reopened issue counts when
  it is resolved again).
- **Inside the deadline**: a clock is decided when it is met or its due time
  passes, at ``LEAST(met_at, due_at)``; it is inside its deadline when
  ``met_at <= due_at``. A clock that is not met counts against the deadline
  once its due time has passed, unless its issue was closed before then (the
  clock stopped: ``missed_at`` stays empty because beat only marks running
  clocks).
- **Tenant ratings** are those of issues resolved in the window.

Medians and 90th percentiles are ``percentile_cont`` over intervals in
PostgreSQL; no rows are loaded into Python to compute them.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import (
    Aggregate,
    Avg,
    Case,
    Count,
    DurationField,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
    Window,
)
from django.db.models.functions import Least
from django.utils import timezone

from issues.models import ClockKind, Issue, IssueClock, IssueUpdate, Job
from properties.models import RepairCategory
from properties.scoping import queryset_for_organizations_or_all

WEEKS = 12  # the weekly charts, and the window of every "last N weeks" figure
TOP_ROWS = 15  # rows shown per property and per contractor (most issues first)

# Open issues' age buckets: (upper bound, label); the last has no bound.
AGE_BUCKETS: list[tuple[datetime.timedelta | None, str]] = [
    (datetime.timedelta(days=1), "under 1 day"),
    (datetime.timedelta(days=3), "1-3 days"),
    (datetime.timedelta(days=7), "3-7 days"),
    (datetime.timedelta(days=28), "1-4 weeks"),
    (None, "over 4 weeks"),
]
URGENCIES = [(str(u.value), str(u.label)) for u in Issue.Urgency]  # emergency first, as the model lists them


class Percentile(Aggregate):
    """``percentile_cont(fraction) WITHIN GROUP (ORDER BY expression)``: the
    interpolated percentile, here of intervals (a timedelta, None with no rows)."""

    function = "percentile_cont"
    name = "Percentile"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"

    def __init__(self, expression: Any, fraction: float, **extra: Any) -> None:
        fraction = float(fraction)
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"a percentile's fraction is between 0 and 1, not {fraction}")
        extra.setdefault("output_field", DurationField())
        super().__init__(expression, fraction=repr(fraction), **extra)


def _elapsed(end: str, start: str) -> Any:
    return F(end) - F(start)


def _dicts(queryset: Any) -> list[dict[str, Any]]:
    """A ``values()`` queryset's rows (typed loosely: the aggregates are named by the caller)."""
    return list(queryset)


def percent(part: int, whole: int) -> float | None:
    """``part`` of ``whole`` in percent; None when there is nothing to divide."""
    return 100.0 * part / whole if whole else None


# --- the shapes the page draws ---


@dataclass
class OpenByAge:
    """Open issues now, counted per age bucket and urgency."""

    buckets: list[str]
    urgencies: list[tuple[str, str]]
    counts: dict[tuple[str, str], int]  # (bucket label, urgency value) -> issues

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def series(self) -> list[tuple[str, str, list[int]]]:
        """(urgency value, label, one count per bucket) per urgency."""
        return [
            (value, label, [self.counts.get((b, value), 0) for b in self.buckets]) for value, label in self.urgencies
        ]

    def rows(self) -> list[tuple[str, list[int], int]]:
        """(bucket, one count per urgency, total) per bucket: the table under the chart."""
        rows = []
        for bucket in self.buckets:
            counts = [self.counts.get((bucket, value), 0) for value, _ in self.urgencies]
            rows.append((bucket, counts, sum(counts)))
        return rows


@dataclass
class Week:
    start: datetime.date  # the Monday
    count: int = 0
    median: datetime.timedelta | None = None
    p90: datetime.timedelta | None = None


@dataclass
class WeeklyDurations:
    """One duration's median and 90th percentile per week (a week with no
    event has a count of 0 and no percentiles)."""

    key: str
    title: str
    measure: str  # what is measured, for the chart's description
    weeks: list[Week]

    @property
    def count(self) -> int:
        return sum(w.count for w in self.weeks)


@dataclass
class DeadlineRow:
    label: str
    decided: int
    inside: int

    @property
    def percent(self) -> float | None:
        return percent(self.inside, self.decided)


@dataclass
class Deadlines:
    """Clocks decided in the window, per kind (the kinds that have any) and overall."""

    kinds: list[DeadlineRow]

    @property
    def overall(self) -> DeadlineRow:
        return DeadlineRow("All deadlines", sum(k.decided for k in self.kinds), sum(k.inside for k in self.kinds))


@dataclass
class BreakdownRow:
    label: str
    reported: int = 0  # issues reported in the window
    open: int = 0  # open now, whenever reported
    resolved: int = 0  # resolved in the window
    median_resolve: datetime.timedelta | None = None
    clocks_decided: int = 0
    clocks_inside: int = 0
    rating_average: float | None = None
    ratings: int = 0

    @property
    def inside_percent(self) -> float | None:
        return percent(self.clocks_inside, self.clocks_decided)


@dataclass
class Breakdown:
    """Figures per property, per category or per contractor; ``more`` rows
    were left out (``TOP_ROWS`` are kept, the busiest first)."""

    title: str
    rows: list[BreakdownRow]
    more: int = 0


@dataclass
class ContractorRow(BreakdownRow):
    offered: int = 0  # jobs offered in the window
    accepted: int = 0
    declined: int = 0
    lapsed: int = 0
    median_answer: datetime.timedelta | None = None


@dataclass
class Ratings:
    counts: dict[int, int]  # 1..5 -> issues

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def average(self) -> float | None:
        total = self.total
        return sum(k * n for k, n in self.counts.items()) / total if total else None


@dataclass
class Dashboard:
    now: datetime.datetime
    zone: datetime.tzinfo
    weeks: int
    since: datetime.datetime
    open_by_age: OpenByAge
    durations: list[WeeklyDurations]
    deadlines: Deadlines
    by_property: Breakdown
    by_category: Breakdown
    by_contractor: Breakdown
    ratings: Ratings

    @property
    def first_week(self) -> datetime.date:
        """The Monday the window starts on, in ``zone``."""
        return self.since.date()


# --- the queries ---


def week_starts(*, now: datetime.datetime, zone: datetime.tzinfo, weeks: int) -> list[datetime.date]:
    """The Mondays of the last ``weeks`` weeks in ``zone``, oldest first, this week last."""
    today = now.astimezone(zone).date()
    monday = today - datetime.timedelta(days=today.weekday())
    return [monday - datetime.timedelta(weeks=weeks - 1 - n) for n in range(weeks)]


def _start_of(day: datetime.date, zone: datetime.tzinfo) -> datetime.datetime:
    return datetime.datetime.combine(day, datetime.time.min, tzinfo=zone)


def dashboard_figures(
    *,
    organization_ids: Collection[int] | None,
    now: datetime.datetime | None = None,
    zone: datetime.tzinfo | None = None,
    weeks: int = WEEKS,
) -> Dashboard:
    """Every figure of the dashboard for ``organization_ids`` (None: all), as
    of ``now``, with weeks in ``zone`` (default: the project's time zone)."""
    if weeks < 1:
        raise ValueError("the dashboard needs at least one week")
    now = now or timezone.now()
    zone = zone or timezone.get_default_timezone()
    mondays = week_starts(now=now, zone=zone, weeks=weeks)
    since = _start_of(mondays[0], zone)
    scope = _Scope(organization_ids=organization_ids, now=now, zone=zone, since=since, mondays=mondays)
    return Dashboard(
        now=now,
        zone=zone,
        weeks=weeks,
        since=since,
        open_by_age=open_issues_by_age(scope),
        durations=[first_response_weekly(scope), make_safe_weekly(scope), resolve_weekly(scope)],
        deadlines=deadlines_inside(scope),
        by_property=breakdown_by_property(scope),
        by_category=breakdown_by_category(scope),
        by_contractor=breakdown_by_contractor(scope),
        ratings=ratings(scope),
    )


@dataclass(frozen=True)
class _Scope:
    organization_ids: Collection[int] | None
    now: datetime.datetime
    zone: datetime.tzinfo
    since: datetime.datetime
    mondays: list[datetime.date]

    def issues(self) -> QuerySet[Issue]:
        return queryset_for_organizations_or_all(Issue.objects.order_by(), self.organization_ids)

    def clocks(self) -> QuerySet[IssueClock]:
        return queryset_for_organizations_or_all(IssueClock.objects.order_by(), self.organization_ids)

    def jobs(self) -> QuerySet[Job]:
        return queryset_for_organizations_or_all(Job.objects.order_by(), self.organization_ids)

    def window(self, field: str) -> Q:
        return Q(**{f"{field}__gte": self.since, f"{field}__lte": self.now})


def open_issues_by_age(scope: _Scope) -> OpenByAge:
    """Issues open now (open, acknowledged or scheduled), by how long ago they
    were reported and by urgency."""
    whens = [When(created_at__gt=scope.now - bound, then=Value(n)) for n, (bound, _) in enumerate(AGE_BUCKETS) if bound]
    rows = (
        scope.issues()
        .filter(status__in=Issue.OPEN_STATUSES)
        .annotate(bucket=Case(*whens, default=Value(len(AGE_BUCKETS) - 1), output_field=IntegerField()))
        .values("bucket", "urgency")
        .annotate(n=Count("pk"))
    )
    labels = [label for _, label in AGE_BUCKETS]
    counts = {(labels[r["bucket"]], r["urgency"]): r["n"] for r in rows}
    return OpenByAge(buckets=labels, urgencies=URGENCIES, counts=counts)


def first_response() -> Least:
    """When a person at the agency first acted on the issue: the earlier of
    ``acknowledged_at`` and the first history entry by the landlord
    (PostgreSQL's LEAST ignores a NULL; both NULL: no response yet)."""
    first_entry = (
        IssueUpdate.objects.filter(issue=OuterRef("pk"), author=IssueUpdate.Author.LANDLORD)
        .order_by("created_at")
        .values("created_at")[:1]
    )
    return Least("acknowledged_at", Subquery(first_entry))


def _weekly(scope: _Scope, events: QuerySet[Any], *, key: str, title: str, measure: str) -> WeeklyDurations:
    """The median and 90th percentile of ``ended - began`` per week of ``ended``.

    ``events`` is a scoped queryset annotated with ``began`` and ``ended``.
    It is the inner query of one statement, kept whole by ``OFFSET 0`` so that
    PostgreSQL computes ``ended`` once per row: inlined, an expression with a
    subquery (the first response) was evaluated again in the filter, the week
    and each percentile, about 90 ms over 20 000 issues instead of about 25.
    Weeks are numbered by ``width_bucket`` against the Mondays' midnights in
    the scope's zone, computed here, so no time zone name goes to SQL."""
    weeks = [Week(monday) for monday in scope.mondays]
    try:
        inner, params = events.values("began", "ended").query.sql_with_params()
    except EmptyResultSet:  # no organization: nothing to count
        return WeeklyDurations(key=key, title=title, measure=measure, weeks=weeks)
    # ``inner`` is Django's own compiled query; every value is a bound parameter.
    sql = (
        "SELECT width_bucket(ended, %s::timestamptz[]) AS week, COUNT(*), "  # noqa: S608
        "percentile_cont(0.5) WITHIN GROUP (ORDER BY ended - began), "
        "percentile_cont(0.9) WITHIN GROUP (ORDER BY ended - began) "
        f"FROM ({inner} OFFSET 0) AS events "
        "WHERE ended >= %s AND ended <= %s GROUP BY 1"
    )
    midnights = [_start_of(monday, scope.zone) for monday in scope.mondays]
    with connection.cursor() as cursor:
        cursor.execute(sql, [midnights, *params, scope.since, scope.now])
        for number, count, median, p90 in cursor.fetchall():
            weeks[number - 1] = Week(scope.mondays[number - 1], count, median, p90)
    return WeeklyDurations(key=key, title=title, measure=measure, weeks=weeks)


def first_response_weekly(scope: _Scope) -> WeeklyDurations:
    # The first response is never later than acknowledged_at: an issue
    # acknowledged before the window cannot count. One no person acknowledged
    # (the system's own moves leave it empty) can count only by a person's
    # history entry in the window, so the history is read only for those.
    recent_entry = IssueUpdate.objects.filter(
        issue=OuterRef("pk"), author=IssueUpdate.Author.LANDLORD, created_at__gte=scope.since
    )
    candidates = scope.issues().filter(
        Q(acknowledged_at__gte=scope.since) | (Q(acknowledged_at__isnull=True) & Exists(recent_entry))
    )
    return _weekly(
        scope,
        candidates.annotate(began=F("created_at"), ended=first_response()),
        key="first-response",
        title="Time to first response",
        measure="from the report to the agency's first status change or history entry",
    )


def make_safe_weekly(scope: _Scope) -> WeeklyDurations:
    return _weekly(
        scope,
        scope.clocks()
        .filter(scope.window("met_at"), kind=ClockKind.MADE_SAFE)
        .annotate(began=F("started_at"), ended=F("met_at")),
        key="make-safe",
        title="Time to make safe",
        measure="from the made-safe clock's start to when it was met",
    )


def resolve_weekly(scope: _Scope) -> WeeklyDurations:
    return _weekly(
        scope,
        scope.issues().filter(scope.window("resolved_at")).annotate(began=F("created_at"), ended=F("resolved_at")),
        key="resolve",
        title="Time to resolve",
        measure="from the report to the issue's resolution",
    )


def _decided_clocks(scope: _Scope) -> QuerySet[IssueClock]:
    """Clocks decided in the window: met, or due and not stopped by closing.

    ``LEAST(met_at, due_at)`` between the window's ends, written on the
    columns themselves: PostgreSQL has statistics for those and none for the
    expression, and guessing 250 of 15 000 rows it chose a nested loop into
    the issues (twice the time over 20 000 issues)."""
    decided_in_window = (
        Q(due_at__gte=scope.since)
        & (Q(met_at__isnull=True) | Q(met_at__gte=scope.since))
        & (Q(due_at__lte=scope.now) | Q(met_at__lte=scope.now))
    )
    return scope.clocks().filter(
        decided_in_window,
        Q(met_at__isnull=False) | Q(missed_at__isnull=False) | ~Q(issue__status=Issue.Status.CLOSED),
    )


def _inside_counts() -> dict[str, Any]:
    return {"decided": Count("pk"), "inside": Count("pk", filter=Q(met_at__lte=F("due_at")))}


def deadlines_inside(scope: _Scope) -> Deadlines:
    rows = {r["kind"]: r for r in _dicts(_decided_clocks(scope).values("kind").annotate(**_inside_counts()))}
    return Deadlines(
        kinds=[
            DeadlineRow(kind.label, rows[kind]["decided"], rows[kind]["inside"]) for kind in ClockKind if kind in rows
        ]
    )


def _issue_figures(scope: _Scope, prefix: str = "") -> dict[str, Any]:
    """Aggregates over issues (reached through ``prefix``, e.g. "issue__")."""
    resolved = scope.window(f"{prefix}resolved_at")
    return {
        "resolved": Count(f"{prefix}pk", filter=resolved, distinct=True),
        "median_resolve": Percentile(_elapsed(f"{prefix}resolved_at", f"{prefix}created_at"), 0.5, filter=resolved),
        "rating_average": Avg(f"{prefix}rating", filter=resolved),
        "ratings": Count(f"{prefix}rating", filter=resolved),
    }


def _issue_breakdown(scope: _Scope, group: Sequence[str], *, limit: int | None) -> tuple[list[dict[str, Any]], int]:
    reported = scope.window("created_at")
    opened = Q(status__in=Issue.OPEN_STATUSES)
    rows = (
        scope.issues()
        .filter(reported | opened | scope.window("resolved_at"))
        .values(*group)
        .annotate(
            reported=Count("pk", filter=reported),
            open=Count("pk", filter=opened),
            **_issue_figures(scope),
        )
        .order_by("-reported", "-open", "-resolved", *group)
    )
    return _busiest(rows, limit)


def _busiest(rows: QuerySet[Any], limit: int | None) -> tuple[list[dict[str, Any]], int]:
    """The first ``limit`` grouped rows and how many more there are, in one
    query (``COUNT(1) OVER ()`` counts the groups before the LIMIT)."""
    if limit is None:
        return _dicts(rows), 0
    found = _dicts(rows.annotate(groups=Window(Count(Value(1))))[:limit])
    return found, (found[0]["groups"] - len(found) if found else 0)


def _breakdown_rows(
    rows: Iterable[dict[str, Any]], key: str, labels: dict[Any, str], clocks: dict[Any, Any]
) -> list[BreakdownRow]:
    result = []
    for r in rows:
        decided = clocks.get(r[key], {})
        result.append(
            BreakdownRow(
                label=labels[r[key]],
                reported=r["reported"],
                open=r["open"],
                resolved=r["resolved"],
                median_resolve=r["median_resolve"],
                clocks_decided=decided.get("decided", 0),
                clocks_inside=decided.get("inside", 0),
                rating_average=float(r["rating_average"]) if r["rating_average"] is not None else None,
                ratings=r["ratings"],
            )
        )
    return result


def breakdown_by_property(scope: _Scope) -> Breakdown:
    rows, more = _issue_breakdown(scope, ["property_id", "property__code", "property__address"], limit=TOP_ROWS)
    ids = [r["property_id"] for r in rows]
    clocks = {
        r["issue__property_id"]: r
        for r in _decided_clocks(scope)
        .filter(issue__property_id__in=ids)
        .values("issue__property_id")
        .annotate(**_inside_counts())
    }
    labels = {r["property_id"]: f"{r['property__code']} · {r['property__address']}" for r in rows}
    return Breakdown("Per property", _breakdown_rows(rows, "property_id", labels, clocks), more)


def breakdown_by_category(scope: _Scope) -> Breakdown:
    rows, _ = _issue_breakdown(scope, ["category"], limit=None)
    clocks = {
        r["issue__category"]: r for r in _decided_clocks(scope).values("issue__category").annotate(**_inside_counts())
    }
    known = dict(RepairCategory.choices)
    labels = {r["category"]: known.get(r["category"], r["category"]) for r in rows}
    return Breakdown("Per category", _breakdown_rows(rows, "category", labels, clocks))


def took_the_job(prefix: str = "") -> Q:
    """A job the contractor took: accepted, or cancelled after its answer was due.

    Closing an issue keeps an accepted job accepted; until 2026-11-25 it
    cancelled it, and reopening a closed issue cancels it now
    (``issues/status.py``). An offer still unanswered after ``respond_by``
    lapses (beat, or the closing, marks it expired), so a job cancelled later
    than ``respond_by`` had been accepted; one cancelled inside its answer time
    cannot be told apart and is left out. ``prefix`` reaches the job from
    another model ("issue__jobs__")."""
    return Q(**{f"{prefix}state": Job.State.ACCEPTED}) | Q(
        **{f"{prefix}state": Job.State.CANCELLED, f"{prefix}responded_at__gt": F(f"{prefix}respond_by")}
    )


def breakdown_by_contractor(scope: _Scope) -> Breakdown:
    """Per contractor: the jobs offered in the window and their answers (time
    to answer: accepted or declined jobs, ``responded_at - offered_at``), and
    the issues they took (``took_the_job``) with the issues' own figures."""
    offered = scope.window("offered_at")
    answered = Q(state__in=[Job.State.ACCEPTED, Job.State.DECLINED], responded_at__isnull=False)
    took = took_the_job()
    rows: QuerySet[Any] = (
        scope.jobs()
        .filter(offered | (took & scope.window("issue__resolved_at")))
        .values("contractor_id", "contractor__name")
        .annotate(
            offered=Count("pk", filter=offered),
            accepted=Count("pk", filter=offered & took),
            declined=Count("pk", filter=offered & Q(state=Job.State.DECLINED)),
            lapsed=Count("pk", filter=offered & Q(state=Job.State.EXPIRED)),
            median_answer=Percentile(_elapsed("responded_at", "offered_at"), 0.5, filter=offered & answered),
        )
        .order_by("-offered", "contractor__name", "contractor_id")
    )
    found, more = _busiest(rows, TOP_ROWS)
    ids = [r["contractor_id"] for r in found]
    # One job per issue and contractor, the last they took: an issue reopened and
    # taken again by the same contractor counts once in its figures and clocks.
    taken_again = Job.objects.filter(
        took, issue_id=OuterRef("issue_id"), contractor_id=OuterRef("contractor_id"), pk__gt=OuterRef("pk")
    )
    taken = scope.jobs().filter(took, contractor_id__in=ids).exclude(Exists(taken_again))
    issues = {
        r["contractor_id"]: r
        for r in _dicts(
            taken.filter(scope.window("issue__resolved_at"))
            .values("contractor_id")
            .annotate(**_issue_figures(scope, "issue__"))
        )
    }
    # The clocks of the issues they took (the job's row is the one the filter joined).
    clocks = {
        r["issue__jobs__contractor_id"]: r
        for r in _dicts(
            _decided_clocks(scope)
            .filter(issue__jobs__in=taken)
            .values("issue__jobs__contractor_id")
            .annotate(**_inside_counts())
        )
    }
    result: list[BreakdownRow] = []
    for r in found:
        done = issues.get(r["contractor_id"], {})
        decided = clocks.get(r["contractor_id"], {})
        average = done.get("rating_average")
        result.append(
            ContractorRow(
                label=r["contractor__name"],
                reported=r["offered"],
                offered=r["offered"],
                accepted=r["accepted"],
                declined=r["declined"],
                lapsed=r["lapsed"],
                median_answer=r["median_answer"],
                resolved=done.get("resolved", 0),
                median_resolve=done.get("median_resolve"),
                rating_average=float(average) if average is not None else None,
                ratings=done.get("ratings", 0),
                clocks_decided=decided.get("decided", 0),
                clocks_inside=decided.get("inside", 0),
            )
        )
    return Breakdown("Per contractor", result, more)


def ratings(scope: _Scope) -> Ratings:
    rows = (
        scope.issues()
        .filter(scope.window("resolved_at"), rating__isnull=False)
        .values("rating")
        .annotate(n=Count("pk"))
    )
    counts = dict.fromkeys(range(1, 6), 0)
    counts.update({r["rating"]: r["n"] for r in _dicts(rows)})
    return Ratings(counts)
