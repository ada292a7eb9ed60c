"""Subject access: one ZIP with everything the product holds about a tenant.

``data.json`` (machine-readable), ``conversations/<id>.txt`` (each
conversation as a dated transcript a person can read), and ``media/`` (the
photos and voice notes as stored). Only the tenant's own rows are read
(``privacy.selectors.tenant_records``): their conversations' messages, media,
turn traces and alerts, and their issues with their history.

The ZIP is written to a temporary file that stays in memory up to
``SPOOL_BYTES`` and goes to disk beyond it, and each file is copied into it in
pieces: a tenant with years of photos does not hold the web worker's memory.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import zipfile
from typing import IO, Any

from django.db.models import Prefetch
from django.utils import timezone

from conversations.models import Media, Message
from privacy.audit import audit_record, mask_phone
from privacy.models import AuditEvent
from privacy.selectors import tenant_records
from properties.models import Tenant

logger = logging.getLogger(__name__)

EXPORT_FORMAT_VERSION = 1
SPOOL_BYTES = 8 * 1024 * 1024


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _media_name(media: Media) -> str:
    base = (media.file.name or "file").rsplit("/", 1)[-1]
    return f"media/{media.message_id}-{media.index}-{base}"


def tenant_export_build(*, tenant: Tenant, user: Any = None, via: str = AuditEvent.Via.SYSTEM) -> IO[bytes]:
    """The ZIP, as a file read from its start (the caller closes it, or hands it
    to a ``FileResponse``, which does); records an ``export`` entry in the audit log."""
    tenant = Tenant.objects.select_related("organization").get(pk=tenant.pk)  # as stored now
    records = tenant_records(tenant=tenant)
    # Returned open; on an error on the way it goes with the frame (an unlinked temporary file).
    buffer = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115
    data: dict[str, Any] = {
        "format_version": EXPORT_FORMAT_VERSION,
        "exported_at": timezone.now().isoformat(),
        "organization": tenant.organization.name,
        "tenant": {
            "id": tenant.pk,
            "name": tenant.name,
            "phone": tenant.phone,
            "email": tenant.email,
            "whatsapp_profile_name": tenant.whatsapp_profile_name,
            "wa_id": tenant.wa_id,
            "created_at": _iso(tenant.created_at),
            "tenancies": [
                {
                    "property": tenancy.property.address,
                    "start_date": _iso(tenancy.start_date),
                    "end_date": _iso(tenancy.end_date),
                }
                for tenancy in tenant.tenancies.select_related("property")
            ],
        },
        "conversations": [],
        # Sent to their number while they had no conversation (issue updates, summaries).
        "messages_to_their_number": [],
        "issues": [],
        "emergency_alerts": [],
    }
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        messages = records.messages.order_by("created_at", "id").prefetch_related(
            Prefetch("media", queryset=Media.objects.order_by("index"))
        )
        by_conversation: dict[int, list[Message]] = {}
        for message in messages:
            by_conversation.setdefault(message.conversation_id or 0, []).append(message)
        turns_by_conversation: dict[int, list[dict]] = {}
        for turn in records.turns.order_by("created_at", "id"):
            turns_by_conversation.setdefault(turn.conversation_id, []).append(
                {
                    "at": _iso(turn.created_at),
                    "message_ids": turn.message_ids,
                    "model": turn.model,
                    "tool_calls": turn.tool_calls,
                    "retrieval_hits": turn.retrieval_hits,
                    "outcome": turn.outcome,
                    "identity": [turn.identity_before, turn.identity_after],
                    "gathering": [turn.gathering_before, turn.gathering_after],
                }
            )
        data["messages_to_their_number"] = [
            {"id": message.pk, "at": _iso(message.created_at), "author": message.author, "body": message.body}
            for message in by_conversation.get(0, [])
        ]
        for conversation in records.conversations.order_by("created_at"):
            lines = [f"Conversation {conversation.pk} with {tenant.organization.name}, number {conversation.phone}", ""]
            entries = []
            for message in by_conversation.get(conversation.pk, []):
                files = []
                for media in message.media.all():
                    entry = {
                        "content_type": media.content_type,
                        "transcript": media.transcript,
                        "transcript_language": media.transcript_language,
                        "file": None,
                    }
                    if media.file:
                        name = _media_name(media)
                        try:
                            with media.file.open("rb") as handle, archive.open(name, "w") as member:
                                shutil.copyfileobj(handle, member)
                            entry["file"] = name
                        except OSError:
                            logger.warning("media %s: file missing from storage", media.pk)
                    files.append(entry)
                entries.append(
                    {
                        "id": message.pk,
                        "at": _iso(message.created_at),
                        "direction": message.direction,
                        "author": message.author,
                        "kind": message.kind,
                        "body": message.body,
                        "location": (
                            {
                                "latitude": str(message.latitude),
                                "longitude": str(message.longitude),
                                "name": message.location_name,
                            }
                            if message.latitude is not None
                            else None
                        ),
                        "button_text": message.button_text,
                        "media": files,
                    }
                )
                who = "You" if message.direction == "inbound" else message.author.capitalize()
                text = message.body
                for item in files:
                    if item["transcript"]:
                        text += f"\n    (voice note) {item['transcript']}"
                    if item["file"]:
                        text += f"\n    [{item['content_type']}: {item['file']}]"
                lines.append(f"{_iso(message.created_at)}  {who}: {text}")
            archive.writestr(f"conversations/{conversation.pk}.txt", "\n".join(lines) + "\n")
            data["conversations"].append(
                {
                    "id": conversation.pk,
                    "phone": conversation.phone,
                    "profile_name": conversation.profile_name,
                    "language": conversation.language,
                    "started_at": _iso(conversation.created_at),
                    # When they sent STOP (None: WhatsApp messages are on).
                    "opted_out_at": _iso(conversation.opted_out_at),
                    "escalation_reason": conversation.escalation_reason,
                    "messages": entries,
                    "turns": turns_by_conversation.get(conversation.pk, []),
                }
            )
        updates = list(records.issue_updates.select_related("issue").order_by("created_at", "id"))
        for issue in records.issues.select_related("property").order_by("created_at"):
            data["issues"].append(
                {
                    "reference": issue.reference,
                    "property": issue.property.address,
                    "title": issue.title,
                    "description": issue.description,
                    "category": issue.category,
                    "urgency": issue.urgency,
                    "status": issue.status,
                    "location": issue.location,
                    "photo_findings": issue.photo_findings,
                    "created_at": _iso(issue.created_at),
                    "scheduled_for": _iso(issue.scheduled_for),
                    "resolved_at": _iso(issue.resolved_at),
                    "is_it_fixed": issue.fix_answer,
                    "rating": issue.rating,
                    "rating_comment": issue.rating_comment,
                    "history": [
                        {"at": _iso(update.created_at), "author": update.author, "note": update.body}
                        for update in updates
                        if update.issue_id == issue.pk
                    ],
                }
            )
        theirs = {issue["reference"] for issue in data["issues"]}
        # Their reports added to an issue another tenant opened (the same problem in a shared home).
        data["reports_added_to_other_issues"] = [
            {"issue": update.issue.reference, "at": _iso(update.created_at), "note": update.body}
            for update in updates
            if update.issue.reference not in theirs
        ]
        for alert in records.alerts.order_by("created_at"):
            data["emergency_alerts"].append(
                {
                    "at": _iso(alert.created_at),
                    "category": alert.category,
                    "status": alert.status,
                    "message_id": alert.message_id,
                    "safety_reply": alert.safety_reply,
                    "validation_reasoning": alert.validation_reasoning,
                }
            )
        archive.writestr("data.json", json.dumps(data, ensure_ascii=False, indent=2))
        archive.writestr(
            "README.txt",
            "Your data held by "
            f"{tenant.organization.name}'s repair service.\n"
            "data.json: everything, machine-readable. conversations/: each conversation as a transcript.\n"
            "media/: your photos and voice notes.\n",
        )
    audit_record(
        organization_id=tenant.organization_id,
        actor=user,
        via=via,
        action=AuditEvent.Action.EXPORT,
        target_type="properties.tenant",
        target_id=tenant.pk,
        label=f"tenant {tenant.pk} ({mask_phone(tenant.phone)})",
    )
    buffer.seek(0)
    return buffer


def export_filename(tenant: Tenant) -> str:
    return f"tenant-{tenant.pk}-data-{timezone.now():%Y%m%d}.zip"
