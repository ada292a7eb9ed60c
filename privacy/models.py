"""Tenants' data rights: the requests a landlord decides (DataRequest), what an
erasure removed (ErasureRecord), each organization's retention policy and what
each retention run did, and the audit log of who looked at or acted on a
tenant's records (AuditEvent; model changes are django-auditlog's LogEntry).

This app sits above orchestration (it reads and redacts every app's tenant
content) and below api (docs/architecture.md)."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models import Q

# A century: any longer would reach before year 1 of the calendar, and keeps nothing less.
MAX_MONTHS = 1200


class RetentionPolicy(models.Model):
    """How long one organization keeps its tenants' words and files.

    No row: nothing is deleted (docs/data-protection.md says why). A
    conversation's clock starts at its last activity (newest message) or, if
    later, when its last issue was resolved; a conversation with an issue still
    open is never touched."""

    organization = models.OneToOneField(
        "properties.Organization", on_delete=models.CASCADE, related_name="retention_policy"
    )
    message_content_months = models.PositiveSmallIntegerField(
        default=24,
        validators=[MaxValueValidator(MAX_MONTHS)],
        help_text="Message text, transcripts, turn traces and alert texts are removed this many months after "
        "the conversation's last activity or its last issue's resolution, whichever is later.",
    )
    media_months = models.PositiveSmallIntegerField(
        default=12,
        validators=[MaxValueValidator(MAX_MONTHS)],
        help_text="Photo and voice-note files are deleted after this many months (same clock).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "retention policies"
        constraints = [
            models.CheckConstraint(condition=Q(message_content_months__gte=1), name="retention_message_months_min"),
            models.CheckConstraint(condition=Q(media_months__gte=1), name="retention_media_months_min"),
        ]

    def __str__(self) -> str:
        return f"{self.organization}: messages {self.message_content_months} months, media {self.media_months}"


class RetentionRun(models.Model):
    """What one retention run did (or would do, dry) for one organization."""

    organization = models.ForeignKey("properties.Organization", on_delete=models.CASCADE, related_name="+")
    dry_run = models.BooleanField(default=False)
    ran_at = models.DateTimeField()
    # {"conversations": n, "messages": n, "media_files": n, "transcripts": n, "turns": n, "alerts": n}
    counts = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-ran_at"]

    def __str__(self) -> str:
        return f"retention {self.ran_at:%Y-%m-%d} {self.organization}"


class DataRequest(models.Model):
    """A tenant's request about their data. It is never answered by the product
    on its own: a landlord approves (the export is built then) or rejects it."""

    class Kind(models.TextChoices):
        EXPORT = "export", "Copy of their data (subject access)"
        ERASURE = "erasure", "Erasure"

    class Source(models.TextChoices):
        WHATSAPP = "whatsapp", "Asked over WhatsApp"
        ADMIN = "admin", "Entered in the admin"
        API = "api", "Through the API"

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for the landlord"
        DONE = "done", "Done"
        REJECTED = "rejected", "Rejected"

    organization = models.ForeignKey("properties.Organization", on_delete=models.CASCADE, related_name="+")
    tenant = models.ForeignKey(
        "properties.Tenant", on_delete=models.SET_NULL, null=True, blank=True, related_name="data_requests"
    )
    conversation = models.ForeignKey(
        "conversations.Conversation", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The WhatsApp message that asked: one request of each kind per message, so a
    # repeated delivery records one, and "delete my data" recorded as an export by
    # the phrases still takes the model's erasure.
    message = models.ForeignKey(
        "conversations.Message", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.EXPORT)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.ADMIN)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=["export", "erasure"]), name="datarequest_kind_valid"),
            models.CheckConstraint(
                condition=Q(source__in=["whatsapp", "admin", "api"]), name="datarequest_source_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "done", "rejected"]), name="datarequest_status_valid"
            ),
            models.UniqueConstraint(fields=["message", "kind"], name="datarequest_one_per_message_and_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} request {self.pk}"


class ErasureRecord(models.Model):
    """What an erasure removed, when and by whom. Holds counts and ids, never
    the erased words."""

    organization = models.ForeignKey("properties.Organization", on_delete=models.CASCADE, related_name="+")
    tenant = models.ForeignKey(
        "properties.Tenant", on_delete=models.SET_NULL, null=True, blank=True, related_name="erasures"
    )
    phone_masked = models.CharField(max_length=32, blank=True, help_text="The tenant's number, masked.")
    erased_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    via = models.CharField(max_length=16, blank=True, help_text="admin, api or command")
    erased_at = models.DateTimeField(auto_now_add=True)
    # {"conversations.Message.body": 12, ...}: how many rows each field was cleared in.
    counts = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-erased_at"]

    def __str__(self) -> str:
        return f"erasure {self.pk} ({self.phone_masked})"


class AuditEvent(models.Model):
    """One thing a person (or token) did to tenants' records: viewed, exported,
    erased, took over, changed. Append-only: the admin offers no change or
    delete, and a database trigger refuses UPDATE and DELETE (migration 0002).

    The organization is a plain column, not a foreign key: the log outlives an
    organization deleted by the operator. The label is never the tenant's words
    (a reference, an id, a masked number)."""

    class Action(models.TextChoices):
        VIEW = "view", "Viewed"
        EXPORT = "export", "Exported"
        ERASE = "erase", "Erased"
        TAKEOVER = "takeover", "Took over"
        HANDBACK = "handback", "Handed back"
        CHANGE = "change", "Changed"
        REQUEST = "request", "Data request"
        RETENTION = "retention", "Retention applied"

    class Via(models.TextChoices):
        ADMIN = "admin", "Admin"
        API = "api", "API token"
        WHATSAPP = "whatsapp", "WhatsApp"
        SYSTEM = "system", "System"

    organization_id = models.BigIntegerField(db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        null=True,
        blank=True,
        related_name="+",
    )
    actor_name = models.CharField(max_length=150, blank=True, help_text="The username when it happened.")
    via = models.CharField(max_length=16, choices=Via.choices)
    action = models.CharField(max_length=16, choices=Action.choices)
    # "conversations.conversation", "properties.tenant", ...
    target_type = models.CharField(max_length=64)
    target_id = models.BigIntegerField(null=True, blank=True)
    label = models.CharField(max_length=200, blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["organization_id", "-at"], name="auditevent_org_recent")]

    def __str__(self) -> str:
        return f"{self.actor_name or 'system'} {self.action} {self.target_type} {self.target_id}"
