"""How the landlord's busiest pages behave as an agency grows: the admin's
home page (the agency's day), the admin issue, conversation and message
lists, the API's issue list and its CSV export, and the dashboard, at a small
and a large data size, on a throwaway embedded PostgreSQL. Each open issue
runs a deadline clock, some overdue.

The dashboard is measured last, after ``seed_history`` has given the issues
six months of history (reported over 26 weeks, acknowledged, resolved and
rated, made-safe and resolved clocks met in time or late, landlord notes,
jobs with 20 contractors): its figures are of that history, and the pages
before it are measured on the same data as before it was added.

Prints, per page and size, the median response time over a few requests, the
number of SQL queries, and the large/small time ratio measured in the same run.
Query counts should not grow with the data (no N+1); times grow only with what
PostgreSQL must sort and count for one organization.

    .venv/bin/python benchmarks/workplace_lists.py [--small 200] [--large 20000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import atexit
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def configure() -> Path:
    data_dir = Path(tempfile.mkdtemp(prefix="repairs-workplace-bench-"))
    # Registered before the embedded server starts, so it runs after the
    # server's own exit hook has stopped it (atexit runs hooks in reverse).
    atexit.register(shutil.rmtree, data_dir, True)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATA_DIR": str(data_dir),
            "CELERY_KEY_PREFIX": f"bench-{uuid.uuid4().hex[:8]}:",
            "LOG_LEVEL": "WARNING",
            "DJANGO_DEBUG": "false",
            "ALLOWED_HOSTS": "testserver",
        }
    )
    os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(ROOT))
    import warnings

    warnings.filterwarnings("ignore", message="No directory at")
    import django

    django.setup()
    return data_dir


def seed(*, organization, property_count: int, issues: int, conversations: int, messages_per: int) -> None:
    """Bulk rows for one agency (plus a second agency of the same size that
    the scoping must filter out)."""
    from datetime import timedelta

    from django.utils import timezone

    from conversations.models import Conversation, Message
    from issues.models import Issue, IssueClock
    from properties.models import Property, Tenant

    now = timezone.now()
    properties = Property.objects.bulk_create(
        Property(organization=organization, code=f"P{i}", address=f"{i} Bench Street") for i in range(property_count)
    )
    tenants = Tenant.objects.bulk_create(
        Tenant(organization=organization, name=f"Tenant {i}", phone=f"+44{organization.pk}7{i:08d}")
        for i in range(property_count)
    )
    convs = Conversation.objects.bulk_create(
        Conversation(
            organization=organization,
            phone=f"+44{organization.pk}8{i:08d}",
            whatsapp_id=f"whatsapp:+44{organization.pk}8{i:08d}",
            tenant=tenants[i % len(tenants)],
            property=properties[i % len(properties)],
            last_inbound_at=now,
        )
        for i in range(conversations)
    )
    Message.objects.bulk_create(
        Message(
            organization=organization,
            conversation=c,
            direction="inbound",
            author="tenant",
            status="processed",
            body=f"message {n}",
        )
        for c in convs
        for n in range(messages_per)
    )
    urgencies = ["routine", "routine", "urgent", "emergency"]
    statuses = ["open", "acknowledged", "scheduled", "resolved", "closed"]
    created = Issue.objects.bulk_create(
        Issue(
            organization=organization,
            property=properties[i % len(properties)],
            tenant=tenants[i % len(tenants)],
            conversation=convs[i % len(convs)],
            reference=f"B{organization.pk}-{i:07d}",
            title=f"Issue {i}",
            description="Something broke.",
            urgency=urgencies[i % 4],
            status=statuses[i % 5],
        )
        for i in range(issues)
    )
    # One clock per open issue, due from two days ago to two weeks ahead.
    IssueClock.objects.bulk_create(
        IssueClock(
            issue=issue,
            kind="resolved",
            rule="bench",
            started_at=now,
            due_at=now + timedelta(hours=(i % 384) - 48),
            warn_at=now + timedelta(hours=(i % 384) - 52),
        )
        for i, issue in enumerate(created)
        if issue.status in ("open", "acknowledged", "scheduled")
    )


def seed_history(*, organization, now) -> None:
    """Six months of one agency's repairs on the issues ``seed`` made: what the
    dashboard reads. Deterministic (from each issue's position)."""
    from datetime import timedelta

    from issues.models import Issue, IssueClock, IssueUpdate, Job
    from properties.models import Contractor

    hour = timedelta(hours=1)
    span = 26 * 7 * 24  # hours in 26 weeks
    contractors = Contractor.objects.bulk_create(
        Contractor(organization=organization, name=f"Contractor {n}", trades=["plumbing"]) for n in range(20)
    )
    issues = list(Issue.objects.filter(organization=organization).order_by("pk"))
    clocks, notes, jobs = [], [], []
    for i, issue in enumerate(issues):
        issue.created_at = now - ((i * 7919) % span + 1) * hour
        done = issue.status in ("resolved", "closed")
        if issue.status != "open":
            issue.acknowledged_at = min(issue.created_at + (1 + i % 48) * hour, now)
        if done:
            issue.resolved_at = min(issue.created_at + (2 + (i * 31) % 400) * hour, now)
            issue.rating = 1 + i % 5 if issue.status == "closed" and i % 3 else None
            clocks.append(
                IssueClock(
                    issue=issue,
                    kind="resolved",
                    rule="bench",
                    started_at=issue.created_at,
                    due_at=issue.created_at + 120 * hour,
                    warn_at=issue.created_at + 116 * hour,
                    met_at=issue.resolved_at,
                )
            )
        if issue.urgency == "emergency":
            clocks.append(
                IssueClock(
                    issue=issue,
                    kind="made_safe",
                    rule="bench",
                    started_at=issue.created_at,
                    due_at=issue.created_at + 24 * hour,
                    warn_at=issue.created_at + 20 * hour,
                    met_at=min(issue.created_at + (1 + i % 36) * hour, now) if issue.status != "open" else None,
                )
            )
        if i % 4 == 0:
            notes.append(IssueUpdate(issue=issue, author="landlord", body="Called the tenant."))
        if i % 3 == 0:
            offered = issue.created_at + hour
            answered = offered + (1 + i % 3) * hour
            if issue.status == "closed":
                state, responded = "cancelled", issue.resolved_at
            elif issue.status in ("acknowledged", "scheduled", "resolved"):
                state, responded = "accepted", answered
            else:
                state, responded = ("declined", answered) if i % 2 else ("expired", offered + 4 * hour)
            jobs.append(
                Job(
                    issue=issue,
                    contractor=contractors[i % len(contractors)],
                    state=state,
                    offered_at=offered,
                    respond_by=offered + 4 * hour,
                    responded_at=responded,
                )
            )
    Issue.objects.bulk_update(issues, ["created_at", "acknowledged_at", "resolved_at", "rating"], batch_size=2000)
    IssueClock.objects.bulk_create(clocks, batch_size=2000)
    Job.objects.bulk_create(jobs, batch_size=2000)
    created = IssueUpdate.objects.bulk_create(notes, batch_size=2000)
    # A note is written a few minutes to two days after the report.
    for n, note in enumerate(created):
        note.created_at = note.issue.created_at + (5 + (n * 37) % 2880) * timedelta(minutes=1)
    IssueUpdate.objects.bulk_update(created, ["created_at"], batch_size=2000)


def measure(client, url: str, repeat: int, **headers) -> tuple[float, int, str]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(url, **headers)  # warm caches
    times = []
    queries = 0
    slowest = ""
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as captured:
            start = time.perf_counter()
            response = client.get(url, **headers)
            if response.streaming:  # the CSV export: the time is the whole file's
                b"".join(response.streaming_content)
            times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
        queries = len(captured)
        top = max(captured.captured_queries, key=lambda q: float(q["time"]))
        slowest = f"{float(top['time']) * 1000:.1f} ms: {top['sql'][:90]}"
    return statistics.median(times), queries, slowest


def run(args) -> None:
    from django.core.management import call_command
    from django.test import Client
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from properties.models import Membership, Organization
    from properties.tests.factories import UserFactory

    call_command("migrate", interactive=False, verbosity=0)
    pages = [
        ("admin home", "/admin/", {}),
        ("admin issues", "/admin/issues/issue/", {}),
        ("admin conversations", "/admin/conversations/conversation/", {}),
        ("admin messages", "/admin/conversations/message/", {}),
        ("API issues", "/api/v1/issues/", "token"),
        ("API issues CSV", "/api/v1/issues/export.csv", "token"),
    ]
    after_history = [("admin dashboard", "/admin/dashboard/")]
    results: dict[str, dict[int, tuple[float, int, str]]] = {
        name: {} for name in [name for name, _, _ in pages] + [name for name, _ in after_history]
    }
    for size in (args.small, args.large):
        call_command("flush", interactive=False, verbosity=0)
        landlord = UserFactory.create(username="bench")
        orgs = [Organization.objects.create(name=f"Bench {n}", slug=f"bench-{n}") for n in range(2)]
        Membership.objects.create(user=landlord, organization=orgs[0])
        started = time.perf_counter()
        for org in orgs:
            seed(
                organization=org,
                property_count=max(10, size // 20),
                issues=size,
                conversations=max(10, size // 4),
                messages_per=8,
            )
        _analyze()
        print(
            f"seeded {size} issues, {max(10, size // 4)} conversations with 8 messages each, per agency (x2), "
            f"in {time.perf_counter() - started:.1f}s"
        )
        client = Client()
        client.force_login(landlord)
        token = Token.objects.create(user=landlord)
        for name, url, auth in pages:
            headers = {"HTTP_AUTHORIZATION": f"Token {token.key}"} if auth == "token" else {}
            results[name][size] = measure(client, url, args.repeat, **headers)

        started = time.perf_counter()
        for org in orgs:
            seed_history(organization=org, now=timezone.now())
        _analyze()
        print(f"added six months of history per agency in {time.perf_counter() - started:.1f}s")
        for name, url in after_history:
            results[name][size] = measure(client, url, args.repeat)

    print(f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"{'page':22} {'rows/agency':>12} {'median ms':>10} {'queries':>8}")
    for name, by_size in results.items():
        for size, (ms, queries, _) in by_size.items():
            print(f"{name:22} {size:>12} {ms:>10.1f} {queries:>8}")
        small, large = by_size[args.small], by_size[args.large]
        print(f"{'':22} {'ratio':>12} {large[0] / small[0]:>10.2f}x {large[1] - small[1]:>+8} queries")
        print(f"{'':22} slowest query at {args.large}: {large[2]}")


def _analyze() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--large", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    configure()
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
