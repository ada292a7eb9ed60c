"""Apply the retention policies now; ``--dry-run`` says what would go and changes nothing."""

from __future__ import annotations

import datetime

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from privacy.media_orphans import media_orphans_delete
from privacy.retention import retention_apply, unrouted_messages_delete
from properties.models import Organization


class Command(BaseCommand):
    help = (
        "Apply every organization's retention policy, delete old unrouted messages and the media files "
        "no row names: the daily task, by hand (docs/data-protection.md)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="Count what would be removed; change nothing.")
        parser.add_argument(
            "--now", help="ISO date-time to apply the policy as of, e.g. 2027-01-31T09:00 (default: now; zone: UTC)."
        )

    def handle(self, *args, **options) -> None:
        now = _moment(options["now"]) if options["now"] else None
        report = retention_apply(now=now, dry_run=options["dry_run"])
        names = dict(Organization.objects.filter(pk__in=report.organizations).values_list("pk", "name"))
        verb = "would remove" if report.dry_run else "removed"
        if not report.organizations and not report.failed:
            self.stdout.write("No organization has a retention policy: nothing to do.")
        for organization_id, counts in report.organizations.items():
            summary = ", ".join(f"{key} {value}" for key, value in sorted(counts.items())) or "nothing"
            self.stdout.write(f"{names.get(organization_id, organization_id)}: {verb} {summary}")
        unrouted = unrouted_messages_delete(now=now, dry_run=report.dry_run)
        self.stdout.write(f"Unrouted messages: {verb} {unrouted}")
        orphans = media_orphans_delete(dry_run=report.dry_run)  # by the real clock: a download may be writing one
        self.stdout.write(f"Media files no row names: {verb} {len(orphans)}")
        if report.failed:
            raise CommandError(f"retention failed for organization(s) {report.failed}; see the error log")


def _moment(value: str) -> datetime.datetime:
    """``--now`` as an aware date-time (UTC when it names no zone)."""
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--now must be an ISO date-time such as 2027-01-31T09:00, not {value!r}") from None
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=datetime.UTC)
