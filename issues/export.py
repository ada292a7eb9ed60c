"""Issues as CSV rows, with their clocks and the tenant's verdict: the admin's
"Export as CSV" action and the API's streamed ``issues/export.csv`` share it.
Rows are written as they are read (``iterator``), so a large export never
sits in memory."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator

from django.db.models import Prefetch, QuerySet

from issues.models import ClockKind, Issue, IssueClock, Job

CLOCK_KINDS = [c.value for c in ClockKind]
HEADER = [
    "reference",
    "organization",
    "property",
    "postcode",
    "title",
    "category",
    "urgency",
    "status",
    "created_at",
    "acknowledged_at",
    "resolved_at",
    *[f"{kind}_{part}" for kind in CLOCK_KINDS for part in ("due", "met")],
    "contractor",
    "is_it_fixed",
    "rating",
]
CHUNK = 500


class _Echo:
    """A file-like object whose write returns the line, for streaming."""

    def write(self, value: str) -> str:
        return value


def _iso(value) -> str:
    return value.isoformat() if value else ""


def issue_rows(queryset: QuerySet[Issue]) -> Iterator[list[str]]:
    issues = (
        queryset.select_related("organization", "property")
        .prefetch_related(None)  # the caller's prefetches are not the export's
        .prefetch_related(
            Prefetch("clocks", queryset=IssueClock.objects.all()),
            Prefetch(
                "jobs",
                queryset=Job.objects.filter(state=Job.State.ACCEPTED).select_related("contractor"),
                to_attr="accepted_jobs",
            ),
        )
        .order_by("created_at", "pk")
    )
    for issue in issues.iterator(chunk_size=CHUNK):
        clocks = {c.kind: c for c in issue.clocks.all()}
        times = []
        for kind in CLOCK_KINDS:
            clock = clocks.get(kind)
            times += [_iso(clock.due_at), _iso(clock.met_at)] if clock else ["", ""]
        contractor = issue.accepted_jobs[0].contractor.name if issue.accepted_jobs else ""
        yield [
            issue.reference,
            issue.organization.name,
            issue.property.code,
            issue.property.postcode,
            issue.title,
            issue.category,
            issue.urgency,
            issue.status,
            _iso(issue.created_at),
            _iso(issue.acknowledged_at),
            _iso(issue.resolved_at),
            *times,
            contractor,
            issue.fix_answer,
            str(issue.rating or ""),
        ]


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: str) -> str:
    """A tenant's words that a spreadsheet would run as a formula ("=HYPERLINK(...)")
    are kept as text with a leading apostrophe."""
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


def csv_lines(rows: Iterable[list[str]]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(HEADER)
    for row in rows:
        yield writer.writerow([_cell(value) for value in row])
