"""Erasure: a tenant's words, voice and photos removed wherever the product
stores them, keeping the facts the landlord must keep (which property, what
kind of repair, when, its status) and recording what was erased, when and by
whom (``ErasureRecord``, and an ``AuditEvent``).

``ERASURE_MAP`` names every model field that holds tenant content and how it
is erased; ``NOT_TENANT_CONTENT`` names, with a reason, every other text, JSON
or file field of every model. ``privacy/tests/test_erasure_coverage.py`` fails
when a new field is in neither, so a new store of tenant content cannot be
added without deciding how it is erased.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.apps import apps
from django.contrib.admin.models import LogEntry as AdminLogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.db.models import Q, QuerySet, Value
from django.db.models.functions import Replace
from django.utils import timezone

from conversations.models import Conversation, Media, Message, TranscriptionState
from emergencies.models import EmergencyAlert
from issues.models import Issue
from orchestration.models import Turn
from privacy.audit import audit_record, mask_phone
from privacy.models import AuditEvent, ErasureRecord
from privacy.selectors import TenantRecords, tenant_records
from properties.models import Property, Tenancy, Tenant

logger = logging.getLogger(__name__)

ERASED = "[erased]"

# "app_label.Model.field" -> how erasure treats it.
ERASURE_MAP: dict[str, str] = {
    "conversations.Message.body": f"replaced by {ERASED!r} (the tenant's and our messages to them)",
    "conversations.Message.raw_payload": "emptied ({}): Twilio's whole payload repeats the body",
    "conversations.Message.location_name": "emptied (a pin's address or label); latitude and longitude cleared",
    "conversations.Message.button_text": "emptied",
    "conversations.Message.button_payload": "emptied",
    "conversations.Message.template_variables": "emptied (template values name the issue)",
    "conversations.Media.file": "the file deleted from storage, the field emptied",
    "conversations.Media.transcript": "emptied",
    "conversations.Media.transcription_error": "emptied (may quote the transcriber's answer)",
    "conversations.Conversation.escalation_reason": f"replaced by {ERASED!r}",
    "conversations.Conversation.profile_name": "emptied",
    "properties.Tenant.name": "replaced by 'Erased tenant <id>'",
    "properties.Tenant.email": "emptied",
    "properties.Tenant.whatsapp_profile_name": "emptied",
    "issues.Issue.title": f"replaced by {ERASED!r}",
    "issues.Issue.description": f"replaced by {ERASED!r}",
    "issues.Issue.photo_findings": "emptied",
    "issues.Issue.rating_comment": "emptied (the rating stays)",
    "issues.IssueUpdate.body": f"replaced by {ERASED!r} (the row, its author and date stay)",
    "emergencies.EmergencyAlert.validation_reasoning": f"replaced by {ERASED!r}",
    "orchestration.Turn.tool_calls": "each call keeps its tool name and error flag; inputs and results removed",
    "orchestration.Turn.retrieval_hits": "emptied (what the tenant's question found)",
    "orchestration.Turn.error": "emptied (a model error may quote the prompt)",
    "evals.JudgeVerdict.reasoning": f"replaced by {ERASED!r} (reached by name: evals is above privacy)",
    "admin.LogEntry.object_repr": f"replaced by {ERASED!r} for the tenant's rows (an issue's title, a tenancy)",
    "admin.LogEntry.change_message": (
        f"which fields a staff user changed (names, not values), but an inline names the rows it added and "
        f"linking a number names the tenancy: its name on the tenant's, the property's and their issues' pages "
        f"replaced by {ERASED!r}"
    ),
}

# Text, JSON and file fields that do not hold a tenant's content, and why.
NOT_TENANT_CONTENT: dict[str, str] = {
    # Kept on purpose: the number is the key of the tenancy and of the conversation (routing, the
    # UNIQUE per organization); erasure keeps it so the landlord still knows whose tenancy it is.
    "properties.Tenant.phone": "the tenancy's contact number, kept (docs/data-protection.md)",
    "properties.Tenant.wa_id": "WhatsApp's id for the same number, kept with it",
    "conversations.Conversation.whatsapp_id": "the number with its whatsapp: prefix, kept with it",
    "conversations.Conversation.phone": "the number, kept with it",
    "conversations.Conversation.wa_id": "the number, kept with it",
    "conversations.Message.from_address": "a number (ours or the tenant's), kept with it",
    "conversations.Message.to_address": "a number, kept with it",
    # States, codes and ids chosen by the product or Twilio.
    "conversations.Conversation.identity_status": "state",
    "conversations.Conversation.gathering_state": "state",
    "conversations.Conversation.emergency_category": "category code",
    "conversations.Conversation.language": "language code",
    "conversations.Message.direction": "code",
    "conversations.Message.author": "code",
    "conversations.Message.kind": "code (text, audio, location, ...)",
    "conversations.Message.provider_sid": "Twilio's id",
    "conversations.Message.status": "delivery state",
    "conversations.Message.error_code": "Twilio's error code",
    "conversations.Message.error_message": "Twilio's error text",
    "conversations.Message.template_sid": "template id",
    "conversations.Message.twiml_reply": "our safety text from the organization's settings, not the tenant's words",
    "conversations.Media.provider_url": "Twilio's URL of the media (Twilio's own copy: docs/data-protection.md)",
    "conversations.Media.content_type": "MIME type",
    "conversations.Media.sha256": "checksum of the file",
    "conversations.Media.download_state": "state",
    "conversations.Media.error": "download error (size, type, HTTP status)",
    "conversations.Media.transcription_state": "state",
    "conversations.Media.transcript_language": "language code",
    "issues.Issue.reference": "the issue's reference (a fact the landlord keeps)",
    "issues.Issue.category": "a fact the landlord keeps",
    "issues.Issue.urgency": "a fact the landlord keeps",
    "issues.Issue.status": "a fact the landlord keeps",
    "issues.Issue.photo": "provided / declined / not needed",
    "issues.Issue.fix_answer": "yes / no / none",
    "issues.Issue.location": "where in the property (a fact about the home, kept with the repair)",
    "issues.IssueUpdate.author": "code",
    "emergencies.EmergencyAlert.source": "code",
    "emergencies.EmergencyAlert.category": "a fact the landlord keeps",
    "emergencies.EmergencyAlert.matched_rules": "the rules' own phrases and categories, not the message",
    "emergencies.EmergencyAlert.model_version": "classifier version",
    "emergencies.EmergencyAlert.safety_reply": "the product's safety text (the same for every tenant)",
    "emergencies.EmergencyAlert.status": "state",
    "orchestration.Turn.backend": "code",
    "orchestration.Turn.model": "model name",
    "orchestration.Turn.prompt_version": "version",
    "orchestration.Turn.identity_before": "state",
    "orchestration.Turn.identity_after": "state",
    "orchestration.Turn.gathering_before": "state",
    "orchestration.Turn.gathering_after": "state",
    "orchestration.Turn.outcome": "code",
    # The landlord's world and configuration.
    "properties.Organization.name": "the landlord",
    "properties.Organization.slug": "the landlord",
    "properties.Organization.country": "the landlord",
    "properties.Organization.timezone": "the landlord",
    "properties.Organization.holiday_region": "the landlord",
    "properties.Property.access_notes": "the landlord's notes on the home",
    "properties.Contractor.name": "the landlord's contractor",
    "properties.Contractor.whatsapp": "the landlord's contractor",
    "properties.Contractor.email": "the landlord's contractor",
    "issues.Job.state": "offered / accepted / declined / expired / cancelled",
    "issues.Appointment.state": "proposed / offered / booked / not chosen / visited / missed / cancelled",
    "issues.Appointment.missed_by": "tenant / contractor",
    "issues.Appointment.outcome": "the contractor's tapped answer: fixed / again / missed",
    "issues.DeadlinePolicy.name": "the landlord's policy",
    "issues.DeadlineRule.hazard": "the landlord's policy",
    "issues.DeadlineRule.clock": "the landlord's policy",
    "issues.DeadlineRule.starts": "the landlord's policy",
    "issues.DeadlineRule.unit": "the landlord's policy",
    "issues.IssueClock.kind": "a deadline's name",
    "issues.IssueClock.rule": "the words of the policy's rule",
    "properties.Organization.messaging_service_sid": "Twilio configuration",
    "properties.Organization.notification_email": "the landlord's contact",
    "properties.Organization.contact_whatsapp": "the landlord's contact",
    "properties.Organization.emergency_contact_name": "the landlord's contact",
    "properties.Organization.emergency_contact_phone": "the landlord's contact",
    "properties.Organization.emergency_contact_email": "the landlord's contact",
    "properties.Organization.emergency_sensitivity": "setting",
    "properties.WhatsAppNumber.number": "the landlord's number",
    "properties.Membership.role": "staff role",
    "properties.Property.code": "the home (the landlord's record)",
    "properties.Property.address": "the home (the landlord's record)",
    "properties.Property.postcode": "the home (the landlord's record)",
    "retrieval.Document.title": "the landlord's documents",
    "retrieval.Document.source": "the landlord's documents",
    "retrieval.Document.checksum": "the landlord's documents",
    "retrieval.Document.text": "the landlord's documents",
    "retrieval.Document.file": "the landlord's documents",
    "retrieval.Document.status": "state",
    "retrieval.Document.embedding_model": "model name",
    "retrieval.Document.error": "ingest error",
    "retrieval.Chunk.heading_path": "the landlord's documents",
    "retrieval.Chunk.text": "the landlord's documents",
    "retrieval.Chunk.search_text": "the landlord's documents",
    "retrieval.Term.word": "vocabulary of the landlord's documents",
    "emergencies.EmergencyRule.country": "rule",
    "emergencies.EmergencyRule.language": "rule",
    "emergencies.EmergencyRule.phrase": "the landlord's (or built-in) rule",
    "emergencies.EmergencyRule.category": "rule",
    "emergencies.SafetyMessage.country": "the product's safety text",
    "emergencies.SafetyMessage.category": "the product's safety text",
    "emergencies.SafetyMessage.language": "the product's safety text",
    "emergencies.SafetyMessage.body": "the product's safety text",
    "evals.EvalRun.kind": "code",
    "evals.EvalRun.summary": "aggregate figures of an evaluation run",
    "evals.EvalRun.error": "evaluation error",
    "evals.JudgeVerdict.question": "code",
    "evals.JudgeVerdict.model": "model name",
    # Logs about staff actions.
    "admin.LogEntry.object_id": "an id",
    "auditlog.LogEntry.object_pk": "an id",
    "auditlog.LogEntry.object_repr": "rewritten at creation to a label without content (privacy.audit)",
    "auditlog.LogEntry.serialized_data": "unused (serialize_data is off)",
    "auditlog.LogEntry.changes_text": "unused",
    "auditlog.LogEntry.changes": "only the fields in privacy.audit.AUDITED_FIELDS: states, dates, links; phone masked",
    "auditlog.LogEntry.cid": "correlation id",
    "auditlog.LogEntry.additional_data": "unused",
    "auditlog.LogEntry.actor_email": "the staff user's email",
    # This app.
    "privacy.RetentionRun.counts": "counts",
    "privacy.DataRequest.kind": "code",
    "privacy.DataRequest.source": "code",
    "privacy.DataRequest.status": "state",
    "privacy.ErasureRecord.phone_masked": "a masked number",
    "privacy.ErasureRecord.via": "code",
    "privacy.ErasureRecord.counts": "counts",
    "privacy.AuditEvent.actor_name": "the staff user",
    "privacy.AuditEvent.via": "code",
    "privacy.AuditEvent.action": "code",
    "privacy.AuditEvent.target_type": "model label",
    "privacy.AuditEvent.label": "a reference, an id or a masked number (privacy.audit.target_label)",
}

# Apps whose models the coverage test reads (Django's own auth, sessions and
# tokens hold staff accounts, not tenants).
COVERED_APPS = (
    "properties",
    "conversations",
    "retrieval",
    "issues",
    "emergencies",
    "orchestration",
    "privacy",
    "evals",
    "api",
    "stack",
    "dashboard",
    "admin",
    "auditlog",
)


class ErasureError(Exception):
    pass


def _count(counts: dict[str, int], key: str, n: int) -> None:
    if n:
        counts[key] = counts.get(key, 0) + n


def media_files_delete(media: QuerySet[Media], counts: dict[str, int]) -> None:
    """Empty the file fields now; delete the files once the transaction commits
    (a rolled-back erasure leaves every file where it was), each unless another
    row still names it: files are named by their content, and a storage that
    overwrites (S3's default) gives two rows with the same bytes one file."""
    files = [(item.pk, item.file.storage, item.file.name or "") for item in media.exclude(file="").only("pk", "file")]
    if not files:
        return
    media.filter(pk__in=[pk for pk, _, _ in files]).update(file="")
    _count(counts, "conversations.Media.file", len(files))

    def delete() -> None:
        # One query for all: the same photo sent by someone else keeps its file.
        named = set(Media.objects.filter(file__in=[name for _, _, name in files]).values_list("file", flat=True))
        for pk, storage, name in files:
            if name in named:
                continue
            try:
                storage.delete(name)
            except Exception:  # after the commit: the others still go, the daily orphan sweep retries this one
                logger.exception("media %s: file could not be deleted", pk)

    transaction.on_commit(delete)


def _contractor_jobs_redact(messages: QuerySet[Message], counts: dict[str, int]) -> None:
    """What a contractor was sent about the tenant's issue: the words and the
    template's variables (the issue's title) go; the buttons' payloads (job
    ids) stay, so the contractor can still answer. One not sent yet is not sent."""
    messages.filter(status__in=[Message.Status.PENDING, Message.Status.SENDING]).update(
        status=Message.Status.FAILED, error_message=f"not sent: {ERASED}"
    )
    changed = []
    for message in messages.only("pk", "raw_payload"):
        message.body, message.template_variables = ERASED, {}
        message.raw_payload = {k: v for k, v in (message.raw_payload or {}).items() if k != "content_variables"}
        changed.append(message)
    Message.objects.bulk_update(changed, ["body", "template_variables", "raw_payload"], batch_size=500)
    _count(counts, "conversations.Message.body (contractors' jobs)", len(changed))


def _turns_redact(turns: QuerySet[Turn], counts: dict[str, int]) -> None:
    changed = []
    for turn in turns.only("pk", "tool_calls", "retrieval_hits", "error"):
        calls = [
            {"name": call.get("name", ""), "is_error": bool(call.get("is_error")), "erased": True}
            for call in (turn.tool_calls or [])
            if isinstance(call, dict)
        ]
        if calls == turn.tool_calls and not turn.retrieval_hits and not turn.error:
            continue
        turn.tool_calls, turn.retrieval_hits, turn.error = calls, [], ""
        changed.append(turn)
    Turn.objects.bulk_update(changed, ["tool_calls", "retrieval_hits", "error"], batch_size=500)
    _count(counts, "orchestration.Turn.tool_calls", len(changed))


def conversation_content_redact(
    *,
    conversations: QuerySet[Conversation],
    messages: QuerySet[Message],
    media: QuerySet[Media],
    turns: QuerySet[Turn],
    alerts: QuerySet[EmergencyAlert],
    marker: str,
    counts: dict[str, int],
    files: bool = True,
) -> None:
    """Remove the words and files of these conversations (erasure and retention share it).
    ``files`` False keeps the photos and voice notes (retention deletes them
    by their own months, which may be longer than the words').

    The conversations are locked first, as a turn locks its conversation to
    apply what the model decided: a turn that read the words before this
    commits finds its messages handled and is discarded, and one that
    committed first has its issue's words erased below. A reply not sent yet
    is not sent (it would arrive as the marker). A download or transcription
    still under way is cancelled: its result finds the row no longer pending
    and is thrown away."""
    list(conversations.select_for_update().order_by("pk").values_list("pk"))
    _count(
        counts,
        "conversations.Message.processed_at (not answered: erased)",
        messages.filter(direction=Message.Direction.INBOUND, processed_at__isnull=True).update(
            processed_at=timezone.now()
        ),
    )
    _count(
        counts,
        "conversations.Message.status (not sent: erased)",
        messages.filter(
            direction=Message.Direction.OUTBOUND, status__in=[Message.Status.PENDING, Message.Status.SENDING]
        ).update(status=Message.Status.FAILED, error_message=f"not sent: {marker}"),
    )
    _count(
        counts,
        "conversations.Media.download_state (cancelled)",
        media.filter(download_state=Media.DownloadState.PENDING).update(
            download_state=Media.DownloadState.REJECTED, error=marker
        ),
    )
    _count(
        counts,
        "conversations.Media.transcription_state (cancelled)",
        media.filter(transcription_state=TranscriptionState.PENDING).update(
            transcription_state=TranscriptionState.FAILED
        ),
    )
    _count(
        counts,
        "conversations.Message.body",
        messages.filter(~Q(body=marker) & ~Q(body="")).update(body=marker),
    )
    _count(
        counts,
        "conversations.Message.raw_payload",
        messages.filter(
            ~Q(raw_payload={})
            | ~Q(template_variables={})
            | ~Q(location_name="")
            | ~Q(button_text="")
            | ~Q(button_payload="")
            | Q(latitude__isnull=False)
        ).update(
            raw_payload={},
            template_variables={},
            location_name="",
            button_text="",
            button_payload="",
            latitude=None,
            longitude=None,
        ),
    )
    if files:
        media_files_delete(media, counts)
    _count(
        counts,
        "conversations.Media.transcript",
        media.filter(~Q(transcript="") | ~Q(transcription_error="")).update(transcript="", transcription_error=""),
    )
    _turns_redact(turns, counts)
    _count(
        counts,
        "emergencies.EmergencyAlert.validation_reasoning",
        alerts.filter(~Q(validation_reasoning="") & ~Q(validation_reasoning=marker)).update(
            validation_reasoning=marker
        ),
    )
    _count(
        counts,
        "conversations.Conversation.escalation_reason",
        conversations.filter(~Q(escalation_reason="") & ~Q(escalation_reason=marker)).update(escalation_reason=marker),
    )
    if apps.is_installed("evals"):
        verdicts = apps.get_model("evals", "JudgeVerdict")._default_manager.filter(conversation__in=conversations)
        _count(
            counts,
            "evals.JudgeVerdict.reasoning",
            verdicts.filter(~Q(reasoning="") & ~Q(reasoning=marker)).update(reasoning=marker),
        )


def _admin_log_redact(records: TenantRecords, counts: dict[str, int]) -> None:
    """The admin log's names of the tenant's rows, and their tenancies' names
    ("Jane Doe at P12") where an inline wrote them into a change message of
    the tenant's or the property's page, or linking a number into one of their
    issue's. Call before the tenant's name goes."""
    tenancies = list(records.tenant.tenancies.select_related("tenant", "property"))
    targets: list[tuple[type, list[Any]]] = [
        (Issue, list(records.issues.values_list("pk", flat=True))),
        (Tenant, [records.tenant.pk]),
        (Tenancy, [tenancy.pk for tenancy in tenancies]),
        (Conversation, list(records.conversations.values_list("pk", flat=True))),
        (Message, list(records.messages.values_list("pk", flat=True))),
    ]
    condition = Q(pk__in=[])
    for model, ids in targets:
        if ids:
            content_type = ContentType.objects.get_for_model(model)
            condition |= Q(content_type=content_type, object_id__in=[str(pk) for pk in ids])
    _count(
        counts,
        "admin.LogEntry.object_repr",
        AdminLogEntry.objects.filter(condition).exclude(object_repr=ERASED).update(object_repr=ERASED),
    )
    pages = Q(content_type=ContentType.objects.get_for_model(Tenant), object_id=str(records.tenant.pk)) | Q(
        content_type=ContentType.objects.get_for_model(Property),
        object_id__in=[str(tenancy.property_id) for tenancy in tenancies],
    )
    # As Django wrote it (json.dumps: quoted, non-ASCII escaped), quotes included, so that
    # "Bruce Lee at P1" is not taken for "Lee at P1".
    erased = json.dumps(ERASED)
    for name in {json.dumps(str(tenancy)) for tenancy in tenancies}:
        _count(
            counts,
            "admin.LogEntry.change_message",
            AdminLogEntry.objects.filter(pages, change_message__contains=name).update(
                change_message=Replace("change_message", Value(name), Value(erased))
            ),
        )
    # The issue page's "Linked +44... to <tenant> at <code>." (issues/admin.py), plain text.
    linked = [f" to {tenancy.tenant} at {tenancy.property.code}." for tenancy in tenancies]
    issue_pages = Q(
        content_type=ContentType.objects.get_for_model(Issue),
        object_id__in=[str(pk) for pk in records.issues.values_list("pk", flat=True)],
    )
    for words in set(linked):
        _count(
            counts,
            "admin.LogEntry.change_message",
            AdminLogEntry.objects.filter(issue_pages, change_message__startswith="Linked ")
            .filter(change_message__endswith=words)
            .update(change_message=Replace("change_message", Value(words), Value(f" to {ERASED}."))),
        )


def tenant_erase(*, tenant: Tenant, user: Any, via: str) -> ErasureRecord:
    """Erase ``tenant``'s content in their organization. Running it again
    changes nothing more (and records that nothing was left)."""
    counts: dict[str, int] = {}
    with transaction.atomic():
        # The conversations before the tenant, in the order the webhook and the
        # turn engine take them (a conversation, then its tenant): no deadlock.
        list(tenant_records(tenant=tenant).conversations.select_for_update().order_by("pk").values_list("pk"))
        tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
        records = tenant_records(tenant=tenant)
        quoting = records.messages_quoting_them().exclude(body=ERASED)
        _count(
            counts,
            "conversations.Message.body (landlord alerts)",
            quoting.filter(conversation__isnull=True).update(body=ERASED, raw_payload={}, template_variables={}),
        )
        _contractor_jobs_redact(quoting.filter(conversation__isnull=False), counts)
        conversation_content_redact(
            conversations=records.conversations,
            messages=records.messages,
            media=records.media,
            turns=records.turns,
            alerts=records.alerts,
            marker=ERASED,
            counts=counts,
        )
        _count(
            counts,
            "conversations.Conversation.profile_name",
            records.conversations.exclude(profile_name="").update(profile_name=""),
        )
        _count(
            counts,
            "issues.Issue.title",
            records.issues.filter(
                ~Q(title=ERASED) | ~Q(description=ERASED) | ~Q(photo_findings="") | ~Q(rating_comment="")
            ).update(title=ERASED, description=ERASED, photo_findings="", rating_comment=""),
        )
        _count(
            counts,
            "issues.IssueUpdate.body",
            records.issue_updates.exclude(body=ERASED).update(body=ERASED),
        )
        _admin_log_redact(records, counts)
        erased_name = f"Erased tenant {tenant.pk}"
        if tenant.name != erased_name or tenant.email or tenant.whatsapp_profile_name:
            Tenant.objects.filter(pk=tenant.pk).update(name=erased_name, email="", whatsapp_profile_name="")
            _count(counts, "properties.Tenant.name", 1)
        user_obj = user if user is not None and getattr(user, "is_authenticated", False) else None
        record = ErasureRecord.objects.create(
            organization_id=tenant.organization_id,
            tenant=tenant,
            phone_masked=mask_phone(tenant.phone),
            erased_by=user_obj,
            via=via,
            counts=counts,
        )
        audit_record(
            organization_id=tenant.organization_id,
            actor=user_obj,
            via=via if via in AuditEvent.Via.values else AuditEvent.Via.SYSTEM,
            action=AuditEvent.Action.ERASE,
            target_type="properties.tenant",
            target_id=tenant.pk,
            label=f"tenant {tenant.pk} ({mask_phone(tenant.phone)}): erasure {record.pk}",
        )
    logger.info("tenant %s erased (%s fields)", tenant.pk, len(counts))
    return record
