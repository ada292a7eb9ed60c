"""WhatsApp conversations: who the tenant is, how far their report has got, and
every message and photo that went in or out."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import F, Q


class IdentityStatus(models.TextChoices):
    """Who the tenant is.

    * ``unidentified``: the phone number matches no current tenancy and no
      property has been named yet.
    * ``identified``: we have a candidate property (several tenancies for this
      number, or an address given by an unknown number) that the tenant has not
      confirmed yet.
    * ``confirmed``: tenant and property are known (one matching tenancy, or
      the tenant confirmed the candidate). Issues may now be created.
    * ``active``: a confirmed tenant who has already reported through us.
    """

    UNIDENTIFIED = "unidentified", "Unidentified"
    IDENTIFIED = "identified", "Identified (awaiting confirmation)"
    CONFIRMED = "confirmed", "Confirmed"
    ACTIVE = "active", "Active"


class GatheringState(models.TextChoices):
    """How far the current repair report has got."""

    IDLE = "idle", "Idle"
    GATHERING_DETAILS = "gathering_details", "Gathering details"
    AWAITING_PHOTO = "awaiting_photo", "Awaiting photo"
    ISSUE_CREATED = "issue_created", "Issue created"


class Conversation(models.Model):
    organization = models.ForeignKey("properties.Organization", on_delete=models.CASCADE, related_name="conversations")
    whatsapp_id = models.CharField(max_length=64, help_text="The raw From value, e.g. whatsapp:+447700900123.")
    phone = models.CharField(max_length=32, help_text="E.164 without the whatsapp: prefix.")
    tenant = models.ForeignKey(
        "properties.Tenant", on_delete=models.SET_NULL, null=True, blank=True, related_name="conversations"
    )
    property = models.ForeignKey(
        "properties.Property", on_delete=models.SET_NULL, null=True, blank=True, related_name="conversations"
    )
    candidate_property = models.ForeignKey(
        "properties.Property",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The property we think the tenant means, until they confirm it.",
    )
    identity_status = models.CharField(
        max_length=16, choices=IdentityStatus.choices, default=IdentityStatus.UNIDENTIFIED, db_default="unidentified"
    )
    gathering_state = models.CharField(
        max_length=24, choices=GatheringState.choices, default=GatheringState.IDLE, db_default="idle"
    )
    gathering_started_at = models.DateTimeField(null=True, blank=True)
    # Set by the emergency keyword path; the turn engine treats the report as an emergency.
    emergency_category = models.CharField(max_length=32, blank=True)
    emergency_alerted_at = models.DateTimeField(
        null=True, blank=True, help_text="When the conversation's latest emergency alert was raised; empty when never."
    )
    # ISO 639-1 code guessed from the tenant's own words; the texts the product
    # writes itself (not the model) use it.
    language = models.CharField(max_length=8, blank=True, default="", db_default="")
    last_inbound_at = models.DateTimeField(null=True, blank=True)
    last_turn_at = models.DateTimeField(null=True, blank=True)
    bot_paused = models.BooleanField(default=False, help_text="A person has taken over; the assistant stays silent.")
    escalated_at = models.DateTimeField(null=True, blank=True)
    escalation_reason = models.TextField(blank=True)
    # What WhatsApp tells us about the sender (Twilio's ProfileName and WaId),
    # refreshed from every inbound message. The name is the one they chose in
    # WhatsApp: used to greet them, never as proof of who they are.
    profile_name = models.CharField(max_length=200, blank=True, default="", db_default="")
    wa_id = models.CharField(max_length=32, blank=True, default="", db_default="")
    # When the tenant sent STOP (``conversations.opt_out``); null while messages are on.
    opted_out_at = models.DateTimeField(
        null=True, blank=True, help_text="When the tenant opted out of WhatsApp messages (STOP); empty when on."
    )
    # When the number stopped being its tenant's (``conversations.number_change``: their number was
    # changed or they were deleted). The history stays theirs; the next message from the number starts
    # a new conversation, and nothing proactive is sent here any more.
    retired_at = models.DateTimeField(
        null=True, blank=True, help_text="When this number stopped being the tenant's; empty while it is."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = [F("last_inbound_at").desc(nulls_last=True)]
        constraints = [
            # One live conversation per number; retired ones keep their history beside it.
            models.UniqueConstraint(
                fields=["organization", "phone"],
                condition=Q(retired_at__isnull=True),
                name="conversation_unique_live_phone_per_org",
            ),
            models.CheckConstraint(
                condition=Q(identity_status__in=["unidentified", "identified", "confirmed", "active"]),
                name="conversation_identity_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(gathering_state__in=["idle", "gathering_details", "awaiting_photo", "issue_created"]),
                name="conversation_gathering_state_valid",
            ),
        ]
        # Latest first, conversations nobody wrote in last (PostgreSQL's DESC puts NULLs first).
        indexes = [
            models.Index(F("organization"), F("last_inbound_at").desc(nulls_last=True), name="conversation_org_recent")
        ]

    def __str__(self) -> str:
        return f"{self.phone} ({self.organization})"


class Message(models.Model):
    class Direction(models.TextChoices):
        INBOUND = "inbound", "Inbound"
        OUTBOUND = "outbound", "Outbound"

    class Status(models.TextChoices):
        # Inbound
        RECEIVED = "received", "Received"
        PROCESSED = "processed", "Processed"
        # Outbound, in the order Twilio reports them
        PENDING = "pending", "Pending"
        QUEUED = "queued", "Queued"
        SENDING = "sending", "Sending"
        SENT = "sent", "Sent"
        DELIVERED = "delivered", "Delivered"
        READ = "read", "Read"
        FAILED = "failed", "Failed"
        UNDELIVERED = "undelivered", "Undelivered"

    class Author(models.TextChoices):
        TENANT = "tenant", "Tenant"
        ASSISTANT = "assistant", "Assistant"
        LANDLORD = "landlord", "Landlord"
        SYSTEM = "system", "System"

    # Both empty for an unrouted message (a number no organization owns).
    organization = models.ForeignKey(
        "properties.Organization", on_delete=models.CASCADE, null=True, blank=True, related_name="messages"
    )
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, null=True, blank=True, related_name="messages"
    )
    direction = models.CharField(max_length=8, choices=Direction.choices)
    author = models.CharField(max_length=16, choices=Author.choices)
    body = models.TextField(blank=True)
    # Inbound: what kind of WhatsApp message it is (``conversations.message_kinds``),
    # from the fields Twilio posted; outbound: "text".
    kind = models.CharField(max_length=16, blank=True, default="", db_default="")
    # A location pin (Latitude, Longitude, Address, Label).
    latitude = models.DecimalField(max_digits=9, decimal_places=6, null=True, blank=True)
    longitude = models.DecimalField(max_digits=9, decimal_places=6, null=True, blank=True)
    location_name = models.CharField(max_length=300, blank=True, default="", db_default="")
    # A tapped quick-reply button (ButtonPayload, ButtonText): a structured answer.
    button_payload = models.CharField(max_length=256, blank=True, default="", db_default="")
    button_text = models.CharField(max_length=256, blank=True, default="", db_default="")
    # Twilio's MessageSid (SM.../MM...). UNIQUE: a repeated delivery cannot be stored twice.
    provider_sid = models.CharField(max_length=64, unique=True, null=True, blank=True)
    from_address = models.CharField(max_length=64, blank=True)
    to_address = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices)
    error_code = models.CharField(max_length=16, blank=True)
    error_message = models.TextField(blank=True)
    # Problems found in the payload (unrouted, body_truncated, nul_bytes, ...): stored and flagged, never dropped.
    flags = ArrayField(models.CharField(max_length=32), default=list, blank=True)
    raw_payload = models.JSONField(default=dict, blank=True)
    # Outbound: a template sent outside the 24-hour window.
    template_sid = models.CharField(max_length=64, blank=True)
    template_variables = models.JSONField(default=dict, blank=True)
    send_attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    # Inbound: when the emergency screening of this message finished (the
    # emergencies app decides; null while it is still to run).
    screened_at = models.DateTimeField(null=True, blank=True)
    # Inbound: the safety text the webhook's own answer (TwiML) carried, so that
    # Twilio's repeat of the delivery gets the same answer; blank when the text
    # went as a WhatsApp message, or there was none.
    twiml_reply = models.TextField(blank=True, default="", db_default="")  # processes older than it still insert
    sent_at = models.DateTimeField(null=True, blank=True)
    status_updated_at = models.DateTimeField(null=True, blank=True)
    # The lease on queued work (inbound processing, outbound sending): when a
    # task was last queued for this message, and how often the sweeper queued
    # it again. The sweeper leaves it alone for SWEEP_LEASE_SECONDS and gives
    # up after SWEEP_MAX_REQUEUES.
    queued_at = models.DateTimeField(null=True, blank=True)
    requeues = models.PositiveSmallIntegerField(default=0, db_default=0)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(direction__in=["inbound", "outbound"]), name="message_direction_valid"),
            models.CheckConstraint(
                condition=Q(
                    status__in=[
                        "received",
                        "processed",
                        "pending",
                        "queued",
                        "sending",
                        "sent",
                        "delivered",
                        "read",
                        "failed",
                        "undelivered",
                    ]
                ),
                name="message_status_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["conversation", "created_at"], name="message_conversation_created"),
            # The sweeper's scans: inbound not yet processed, outbound not yet sent.
            models.Index(
                fields=["created_at"],
                name="message_inbound_unprocessed",
                condition=Q(direction="inbound", processed_at__isnull=True),
            ),
            models.Index(fields=["created_at"], name="message_outbound_pending", condition=Q(status="pending")),
            # The emergency sweeper's scan: inbound messages nobody screened yet.
            models.Index(
                fields=["created_at"],
                name="message_inbound_unscreened",
                condition=Q(direction="inbound", screened_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.direction} {self.provider_sid or self.pk}"


def message_text(message: Message) -> str:
    """What the sender wrote or said: the body, then the transcript of each
    voice note (prefetch ``media`` when reading many messages)."""
    said = [m.transcript for m in message.media.all() if m.transcription_state == "done" and m.transcript]
    return "\n".join(part for part in [message.body, *said] if part)


class TranscriptionState(models.TextChoices):
    PENDING = "pending", "Waiting for the transcriber"
    DONE = "done", "Transcribed"
    FAILED = "failed", "Could not be transcribed"
    OFF = "off", "Transcription is off"


class Media(models.Model):
    class DownloadState(models.TextChoices):
        PENDING = "pending", "Pending"
        DOWNLOADED = "downloaded", "Downloaded"
        FAILED = "failed", "Failed"
        REJECTED = "rejected", "Rejected"

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="media")
    index = models.PositiveSmallIntegerField(help_text="Position in the Twilio payload (MediaUrl0, MediaUrl1, ...).")
    provider_url = models.URLField(max_length=500)
    content_type = models.CharField(max_length=100, blank=True)
    size = models.PositiveIntegerField(null=True, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    file = models.FileField(upload_to="whatsapp/%Y/%m/", blank=True)
    download_state = models.CharField(max_length=16, choices=DownloadState.choices, default=DownloadState.PENDING)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    downloaded_at = models.DateTimeField(null=True, blank=True)
    # Voice notes: their length and what the transcriber heard. The state is
    # "" for media that are not audio.
    duration_seconds = models.FloatField(null=True, blank=True)
    transcription_state = models.CharField(
        max_length=16, choices=TranscriptionState.choices, blank=True, default="", db_default=""
    )
    transcript = models.TextField(blank=True, default="", db_default="")
    transcript_language = models.CharField(max_length=8, blank=True, default="", db_default="")
    transcription_error = models.TextField(blank=True, default="", db_default="")
    transcribed_at = models.DateTimeField(null=True, blank=True)
    # The lease on the download task, as on Message.
    queued_at = models.DateTimeField(null=True, blank=True)
    requeues = models.PositiveSmallIntegerField(default=0, db_default=0)

    class Meta:
        verbose_name_plural = "media"
        ordering = ["message", "index"]
        constraints = [
            models.UniqueConstraint(fields=["message", "index"], name="media_unique_index_per_message"),
            models.CheckConstraint(
                condition=Q(download_state__in=["pending", "downloaded", "failed", "rejected"]),
                name="media_download_state_valid",
            ),
            models.CheckConstraint(
                condition=Q(transcription_state__in=["", "pending", "done", "failed", "off"]),
                name="media_transcription_state_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"media {self.index} of message {self.message_id}"
