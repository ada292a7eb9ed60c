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

from properties.models import Organization, Property, Tenant


class IssueCategory(models.TextChoices):
    PLUMBING = "plumbing", "Plumbing and leaks"
    HEATING = "heating", "Heating and hot water"
    ELECTRICAL = "electrical", "Electrical"
    GAS = "gas", "Gas"
    APPLIANCES = "appliances", "Appliances"
    DAMP_MOULD = "damp_mould", "Damp and mould"
    STRUCTURAL = "structural", "Structural, roof, windows and doors"
    SECURITY = "security", "Locks and security"
    PESTS = "pests", "Pests"
    SAFETY = "safety", "Fire, smoke and CO alarms"
    EXTERIOR = "exterior", "Exterior, garden and bins"
    OTHER = "other", "Other"


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
