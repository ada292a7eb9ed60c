"""The repair itself: an Issue a tenant reported, its dated history
(IssueUpdate) and the photos that came with the report (IssuePhoto).

The tables keep the names they had when these models lived in ``properties``
(``properties_issue`` and so on): the move changed where the code lives, not
the data.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from properties.models import Contractor, Organization, Property, RepairCategory, Tenant

# The categories moved to properties (a contractor's trades are the same list).
IssueCategory = RepairCategory


class Issue(models.Model):
    Category = IssueCategory

    class Urgency(models.TextChoices):
        EMERGENCY = "emergency", "Emergency"
        URGENT = "urgent", "Urgent"
        ROUTINE = "routine", "Routine"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ACKNOWLEDGED = "acknowledged", "Acknowledged"
        SCHEDULED = "scheduled", "Scheduled"
        RESOLVED = "resolved", "Resolved"
        CLOSED = "closed", "Closed"

    class Photo(models.TextChoices):
        PROVIDED = "provided", "Provided"
        DECLINED = "declined", "Declined"
        NOT_NEEDED = "not_needed", "Not needed"

    OPEN_STATUSES = (Status.OPEN, Status.ACKNOWLEDGED, Status.SCHEDULED)

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="issues")
    property = models.ForeignKey(Property, on_delete=models.PROTECT, related_name="issues")
    tenant = models.ForeignKey(Tenant, on_delete=models.SET_NULL, null=True, blank=True, related_name="issues")
    conversation = models.ForeignKey(
        "conversations.Conversation", on_delete=models.SET_NULL, null=True, blank=True, related_name="issues"
    )
    reference = models.CharField(max_length=32, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField()
    category = models.CharField(max_length=16, choices=Category.choices, default=Category.OTHER)
    urgency = models.CharField(max_length=16, choices=Urgency.choices, default=Urgency.ROUTINE)
    location = models.CharField(max_length=200, blank=True, help_text="Where in the property, e.g. 'bathroom ceiling'.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    photo = models.CharField(max_length=16, choices=Photo.choices, default=Photo.NOT_NEEDED)
    photo_findings = models.TextField(
        blank=True, default="", db_default="", help_text="What the assistant saw in the tenant's photos."
    )
    # The number it came from has no current tenancy at this property: the tenant
    # gave an address, so the landlord checks who they are before sending anyone.
    tenant_unverified = models.BooleanField(
        "unverified tenant",
        default=False,
        db_default=False,
        help_text="Reported from a number with no tenancy at this property; check who the tenant is.",
    )
    scheduled_for = models.DateField(null=True, blank=True)
    # "Is it fixed?" (issues/fix_check.py): asked when resolved, the tenant's
    # answer, a 1-5 rating and an optional comment.
    fix_asked_at = models.DateTimeField(null=True, blank=True)
    fix_answer = models.CharField(
        max_length=8,
        blank=True,
        default="",
        db_default="",
        choices=[("yes", "Fixed"), ("no", "Not fixed"), ("none", "No answer")],
        help_text="The tenant's answer to 'Is it fixed?'.",
    )
    fix_answered_at = models.DateTimeField(null=True, blank=True)
    rating = models.PositiveSmallIntegerField(null=True, blank=True, help_text="The tenant's rating, 1 to 5.")
    rating_comment = models.TextField(blank=True, default="", db_default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(category__in=[c.value for c in IssueCategory]), name="issue_category_valid"
            ),
            models.CheckConstraint(
                condition=Q(urgency__in=["emergency", "urgent", "routine"]), name="issue_urgency_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["open", "acknowledged", "scheduled", "resolved", "closed"]),
                name="issue_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(photo__in=["provided", "declined", "not_needed"]), name="issue_photo_valid"
            ),
            models.CheckConstraint(
                condition=Q(fix_answer__in=["", "yes", "no", "none"]), name="issue_fix_answer_valid"
            ),
            models.CheckConstraint(
                condition=Q(rating__isnull=True) | Q(rating__gte=1, rating__lte=5), name="issue_rating_valid"
            ),
        ]
        indexes = [models.Index(fields=["organization", "status", "-created_at"], name="issue_org_status_created")]
        db_table = "properties_issue"

    def __str__(self) -> str:
        return f"{self.reference}: {self.title}"

    def is_open(self) -> bool:
        return self.status in self.OPEN_STATUSES


class IssueUpdate(models.Model):
    """A dated note on an issue: a tenant's further report (duplicate guard), a
    status change by the landlord, or a system event."""

    class Author(models.TextChoices):
        TENANT = "tenant", "Tenant"
        LANDLORD = "landlord", "Landlord"
        SYSTEM = "system", "System"

    issue = models.ForeignKey(Issue, on_delete=models.CASCADE, related_name="updates")
    author = models.CharField(max_length=16, choices=Author.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    # The conversation a tenant's update came from: a flatmate's report of the
    # same problem is added to the first tenant's issue, and stays theirs (their
    # export, their erasure), not the issue's tenant's.
    conversation = models.ForeignKey(
        "conversations.Conversation", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "properties_issueupdate"
        ordering = ["created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(author__in=["tenant", "landlord", "system"]), name="issueupdate_author_valid"
            )
        ]

    def __str__(self) -> str:
        return f"update {self.pk} on issue {self.issue_id}"


class IssuePhoto(models.Model):
    issue = models.ForeignKey(Issue, on_delete=models.CASCADE, related_name="photos")
    media = models.ForeignKey("conversations.Media", on_delete=models.CASCADE, related_name="issue_photos")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "properties_issuephoto"
        constraints = [models.UniqueConstraint(fields=["issue", "media"], name="issuephoto_unique")]

    def __str__(self) -> str:
        return f"photo {self.media_id} of issue {self.issue_id}"


class Hazard(models.TextChoices):
    """Which of a policy's clocks an issue runs: see ``issues.deadlines.hazard_of``."""

    EMERGENCY = "emergency", "Emergency hazard"
    SIGNIFICANT = "significant", "Significant hazard (damp and mould)"
    URGENT = "urgent", "Urgent repair"
    ROUTINE = "routine", "Routine repair"


class ClockKind(models.TextChoices):
    MADE_SAFE = "made_safe", "Made safe"
    INVESTIGATED = "investigated", "Investigated"
    SUMMARY_SENT = "summary_sent", "Written summary sent"
    WORKS_STARTED = "works_started", "Works started"
    RESOLVED = "resolved", "Resolved"


class DeadlinePolicy(models.Model):
    """An organization's deadlines per hazard. One is active at a time; new
    organizations get an editable agency policy (active) and the statutory
    "England social housing (Awaab's Law)" one (``issues.deadlines``)."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="deadline_policies")
    name = models.CharField(max_length=200)
    active = models.BooleanField(default=False, help_text="The policy new issues' clocks follow (one at a time).")
    warn_before_hours = models.PositiveIntegerField(
        default=4, help_text="How long before a clock runs out the manager is warned."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "deadline policies"
        ordering = ["organization", "-active", "name"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "name"], name="deadlinepolicy_name_unique"),
            models.UniqueConstraint(
                fields=["organization"],
                condition=Q(active=True),
                name="deadlinepolicy_one_active",
                violation_error_message="Another policy is active. Use the action 'Make the active policy' to switch.",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class DeadlineRule(models.Model):
    """One clock of a policy: for issues of ``hazard``, ``clock`` is due
    ``amount`` ``unit``s after ``starts`` (the report, or the investigation)."""

    class Starts(models.TextChoices):
        REPORTED = "reported", "the report"
        INVESTIGATED = "investigated", "the investigation"

    class Unit(models.TextChoices):
        HOURS = "hours", "hours"
        CALENDAR_DAYS = "calendar_days", "calendar days"
        WORKING_DAYS = "working_days", "working days"

    policy = models.ForeignKey(DeadlinePolicy, on_delete=models.CASCADE, related_name="rules")
    hazard = models.CharField(max_length=16, choices=Hazard.choices)
    clock = models.CharField(max_length=16, choices=ClockKind.choices)
    starts = models.CharField(max_length=16, choices=Starts.choices, default=Starts.REPORTED)
    amount = models.PositiveIntegerField()
    unit = models.CharField(max_length=16, choices=Unit.choices)

    class Meta:
        ordering = ["policy", "hazard", "id"]
        constraints = [
            models.UniqueConstraint(fields=["policy", "hazard", "clock"], name="deadlinerule_unique"),
            models.CheckConstraint(condition=Q(hazard__in=[h.value for h in Hazard]), name="deadlinerule_hazard_valid"),
            models.CheckConstraint(
                condition=Q(clock__in=[c.value for c in ClockKind]), name="deadlinerule_clock_valid"
            ),
            models.CheckConstraint(
                condition=Q(unit__in=["hours", "calendar_days", "working_days"]), name="deadlinerule_unit_valid"
            ),
            models.CheckConstraint(
                condition=Q(starts__in=["reported", "investigated"]) & ~Q(starts="investigated", clock="investigated"),
                name="deadlinerule_starts_valid",
                violation_error_message="The investigation cannot start its own clock.",
            ),
        ]

    def __str__(self) -> str:
        return (
            f"{self.get_clock_display()} within {self.amount} {self.get_unit_display()} of {self.get_starts_display()}"
        )


class IssueClock(models.Model):
    """One deadline an issue runs against: when it started, when it is due,
    when it was met, and when the manager was warned (once) and told it was
    missed (once). ``rule`` keeps the words of the rule it came from."""

    issue = models.ForeignKey(Issue, on_delete=models.CASCADE, related_name="clocks")
    kind = models.CharField(max_length=16, choices=ClockKind.choices)
    rule = models.CharField(max_length=200)
    started_at = models.DateTimeField()
    due_at = models.DateTimeField()
    warn_at = models.DateTimeField()
    met_at = models.DateTimeField(null=True, blank=True)
    met_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    warned_at = models.DateTimeField(null=True, blank=True)
    missed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["due_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["issue", "kind"], name="issueclock_unique"),
            models.CheckConstraint(condition=Q(kind__in=[c.value for c in ClockKind]), name="issueclock_kind_valid"),
        ]
        indexes = [
            # The beat's two scans: clocks not met, by when to warn and when due.
            models.Index(
                fields=["warn_at"], condition=Q(met_at__isnull=True, warned_at__isnull=True), name="issueclock_to_warn"
            ),
            models.Index(
                fields=["due_at"], condition=Q(met_at__isnull=True, missed_at__isnull=True), name="issueclock_to_miss"
            ),
            models.Index(fields=["issue", "due_at"], condition=Q(met_at__isnull=True), name="issueclock_running"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of issue {self.issue_id}"


class Job(models.Model):
    """An issue's job offered to a contractor (``issues/dispatch.py``). At most
    one job per issue is live (offered or accepted) at a time."""

    class State(models.TextChoices):
        OFFERED = "offered", "Offered"
        ACCEPTED = "accepted", "Accepted"
        DECLINED = "declined", "Declined"
        EXPIRED = "expired", "No answer"
        CANCELLED = "cancelled", "Cancelled"

    issue = models.ForeignKey(Issue, on_delete=models.CASCADE, related_name="jobs")
    contractor = models.ForeignKey(Contractor, on_delete=models.PROTECT, related_name="jobs")
    state = models.CharField(max_length=16, choices=State.choices, default=State.OFFERED)
    offered_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    offered_at = models.DateTimeField()
    respond_by = models.DateTimeField()
    responded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-offered_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(state__in=["offered", "accepted", "declined", "expired", "cancelled"]),
                name="job_state_valid",
            ),
            models.UniqueConstraint(
                fields=["issue"], condition=Q(state__in=["offered", "accepted"]), name="job_one_live_per_issue"
            ),
        ]
        indexes = [models.Index(fields=["respond_by"], condition=Q(state="offered"), name="job_offered_due")]

    def __str__(self) -> str:
        return f"job {self.pk}: issue {self.issue_id} to {self.contractor_id} ({self.state})"


class Appointment(models.Model):
    """A visit time for a job (``issues/appointments.py``): proposed by the
    contractor, offered to the tenant, booked when the tenant picks it. At
    most one appointment per job is booked at a time."""

    class State(models.TextChoices):
        PROPOSED = "proposed", "Proposed by the contractor"
        OFFERED = "offered", "Offered to the tenant"
        BOOKED = "booked", "Booked"
        NOT_CHOSEN = "not_chosen", "Not chosen"
        VISITED = "visited", "Visited"
        MISSED = "missed", "Missed"
        CANCELLED = "cancelled", "Cancelled"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="appointments")
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.PROPOSED)
    created_at = models.DateTimeField(auto_now_add=True)
    booked_at = models.DateTimeField(null=True, blank=True)
    reminded_at = models.DateTimeField(null=True, blank=True)
    asked_at = models.DateTimeField(null=True, blank=True, help_text="When both were asked whether the visit happened.")
    unanswered_told_at = models.DateTimeField(
        null=True, blank=True, help_text="When the landlord was told nobody had said whether the visit happened."
    )
    missed_by = models.CharField(max_length=16, blank=True, default="", help_text="Who reported the missed visit.")
    outcome = models.CharField(
        max_length=16,
        blank=True,
        default="",
        help_text="The contractor's answer after the visit (fixed, again, missed).",
    )

    class Meta:
        ordering = ["starts_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(ends_at__gt=models.F("starts_at")), name="appointment_ends_after_start"),
            models.CheckConstraint(
                condition=Q(
                    state__in=["proposed", "offered", "booked", "not_chosen", "visited", "missed", "cancelled"]
                ),
                name="appointment_state_valid",
            ),
            models.UniqueConstraint(fields=["job"], condition=Q(state="booked"), name="appointment_one_booked_per_job"),
        ]
        indexes = [models.Index(fields=["starts_at"], condition=Q(state="booked"), name="appointment_booked_starts")]

    def __str__(self) -> str:
        return f"appointment {self.pk} of job {self.job_id} ({self.state})"
