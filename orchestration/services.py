"""Actions the turn engine takes, named ``<entity>_<action>``. Every state
change the model asks for goes through one of these."""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.postgres.search import TrigramSimilarity, TrigramWordSimilarity
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Q, QuerySet
from django.db.models.functions import Greatest
from django.utils import timezone

from conversations.models import Conversation, GatheringState, IdentityStatus, Media
from conversations.outbound import outbound_text_queue
from orchestration.replies import language_guess
from properties.models import Issue, IssuePhoto, IssueUpdate, Organization, Property, Tenancy, Tenant

logger = logging.getLogger(__name__)


def tenancies_current(*, tenant: Tenant, on=None) -> list[Tenancy]:
    on = on or timezone.localdate()
    return list(
        Tenancy.objects.filter(tenant=tenant, start_date__lte=on)
        .filter(Q(end_date__isnull=True) | Q(end_date__gte=on))
        .select_related("property")
        .order_by("property__code")
    )


def conversation_identify_by_phone(*, conversation: Conversation) -> str:
    """Before the first turn: link the tenant by phone number. One current
    tenancy confirms identity at once; several leave it ``identified`` until
    the tenant says which. Returns the outcome for the transition table."""
    tenant = Tenant.objects.filter(organization_id=conversation.organization_id, phone=conversation.phone).first()
    if tenant is None:
        return "unknown_phone"
    conversation.tenant = tenant
    tenancies = tenancies_current(tenant=tenant)
    if len(tenancies) == 1:
        conversation.property = tenancies[0].property
        conversation.identity_status = IdentityStatus.CONFIRMED
        outcome = "one_tenancy"
    elif tenancies:
        conversation.identity_status = IdentityStatus.IDENTIFIED
        outcome = "several_tenancies"
    else:
        outcome = "no_current_tenancy"
    conversation.save(update_fields=["tenant", "property", "identity_status", "updated_at"])
    return outcome


def property_match(*, organization: Organization, text: str) -> Property | None:
    """The organization's property whose address or postcode the text matches
    best (pg_trgm word similarity, so typos still match), if good enough."""
    text = text.strip()[:300]
    if not text:
        return None
    best = (
        Property.objects.filter(organization=organization)
        .annotate(
            score=Greatest(
                TrigramWordSimilarity(text, "address"),
                TrigramSimilarity("postcode", text),
                TrigramWordSimilarity(text, "postcode"),
            )
        )
        .order_by("-score", "code")
        .first()
    )
    if best is None or best.score < settings.PROPERTY_MATCH_MIN_SIMILARITY:
        return None
    return best


def conversation_property_propose(*, conversation: Conversation, address: str) -> Property | None:
    match = property_match(organization=conversation.organization, text=address)
    conversation.candidate_property = match
    conversation.save(update_fields=["candidate_property", "updated_at"])
    return match


def conversation_property_confirm(*, conversation: Conversation, property_code: str = "") -> Property:
    """The tenant confirmed where they live."""
    prop = conversation.candidate_property
    if property_code and (prop is None or prop.code != property_code):
        prop = Property.objects.get(organization_id=conversation.organization_id, code=property_code)
    conversation.property = prop
    conversation.candidate_property = None
    conversation.save(update_fields=["property", "candidate_property", "updated_at"])
    return prop


def conversation_property_reject(*, conversation: Conversation) -> None:
    conversation.candidate_property = None
    conversation.save(update_fields=["candidate_property", "updated_at"])


def gathering_restart(*, conversation: Conversation) -> None:
    """A half-finished report went stale: start afresh."""
    conversation.gathering_state = GatheringState.IDLE
    conversation.gathering_started_at = None
    conversation.save(update_fields=["gathering_state", "gathering_started_at", "updated_at"])


def issue_reference_new() -> str:
    return f"R{timezone.now():%y%m}-{secrets.token_hex(3).upper()}"


def issue_duplicate_find(*, conversation: Conversation, title: str, description: str, location: str) -> Issue | None:
    """An open issue at the same property, reported recently, about the same
    problem: its title or its description alone must be similar enough
    (``ISSUE_DUPLICATE_MIN_SIMILARITY``); the same room is an extra condition
    (``ISSUE_DUPLICATE_MIN_LOCATION_SIMILARITY`` when both have a location),
    never a reason on its own."""
    since = timezone.now() - timedelta(days=settings.ISSUE_DUPLICATE_WINDOW_DAYS)
    candidates = (
        Issue.objects.filter(property=conversation.property, status__in=Issue.OPEN_STATUSES, created_at__gte=since)
        .annotate(
            problem=Greatest(TrigramSimilarity("title", title), TrigramSimilarity("description", description)),
            place=TrigramSimilarity("location", location or ""),
        )
        .filter(problem__gte=settings.ISSUE_DUPLICATE_MIN_SIMILARITY)
    )
    if location.strip():
        candidates = candidates.filter(Q(location="") | Q(place__gte=settings.ISSUE_DUPLICATE_MIN_LOCATION_SIMILARITY))
    return candidates.order_by("-problem", "-place").first()


def issue_create(
    *,
    conversation: Conversation,
    title: str,
    description: str,
    category: str,
    urgency: str,
    location: str,
    photo: str,
) -> tuple[Issue, bool]:
    """Create the issue, or add to an open duplicate. Returns (issue, created)."""
    duplicate = issue_duplicate_find(conversation=conversation, title=title, description=description, location=location)
    if duplicate is not None:
        IssueUpdate.objects.create(issue=duplicate, author=IssueUpdate.Author.TENANT, body=description)
        _photos_attach(issue=duplicate, conversation=conversation)
        return duplicate, False
    issue = Issue.objects.create(
        organization_id=conversation.organization_id,
        property=conversation.property,
        tenant=conversation.tenant,
        conversation=conversation,
        reference=issue_reference_new(),
        title=title[:200],
        description=description,
        category=category,
        urgency=urgency,
        location=location[:200],
        photo=photo,
    )
    _photos_attach(issue=issue, conversation=conversation)
    landlord_notify_issue(issue=issue)
    return issue, True


PHOTO_USABLE_STATES = (Media.DownloadState.PENDING, Media.DownloadState.DOWNLOADED)


def report_photos(*, conversation: Conversation, message_ids: list[int] = ()) -> QuerySet[Media]:
    """The photos of the report being gathered: images sent since it started
    (or in ``message_ids``, this turn's messages) that are not on an issue yet.
    A download that was rejected or failed is not a photo; one still
    downloading is. A photo already attached to an issue belongs to that
    report, never to the next one."""
    since = conversation.gathering_started_at or (timezone.now() - timedelta(hours=settings.GATHERING_STALE_HOURS))
    return Media.objects.filter(
        Q(message__created_at__gte=since) | Q(message_id__in=list(message_ids)),
        message__conversation=conversation,
        content_type__startswith="image/",
        download_state__in=PHOTO_USABLE_STATES,
        issue_photos__isnull=True,
    )


def _photos_attach(*, issue: Issue, conversation: Conversation) -> None:
    media = report_photos(conversation=conversation)
    IssuePhoto.objects.bulk_create([IssuePhoto(issue=issue, media=m) for m in media], ignore_conflicts=True)


def landlord_notify_issue(*, issue: Issue) -> None:
    """Email the organization and message its contact number, after commit."""
    organization = issue.organization
    subject = f"[{issue.get_urgency_display()}] {issue.reference}: {issue.title}"
    body = (
        f"{issue.title}\nProperty: {issue.property}\nWhere: {issue.location}\nUrgency: {issue.urgency}\n\n"
        f"{issue.description}"
    )
    if organization.notification_email:
        transaction.on_commit(
            lambda: send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [organization.notification_email])
        )
    if organization.contact_whatsapp:
        outbound_text_queue(
            organization=organization,
            to=organization.contact_whatsapp,
            body=f"New repair {subject}",
            author="system",
            purpose="landlord_alert",
        )


def conversation_language_note(*, conversation: Conversation, text: str) -> None:
    """Remember the language the tenant writes in, when ``text`` shows it."""
    language = language_guess(text)
    if language and language != conversation.language:
        conversation.language = language
        conversation.save(update_fields=["language", "updated_at"])


def conversation_escalate(*, conversation: Conversation, reason: str, pause_bot: bool = True) -> None:
    """Put the conversation in the landlord's inbox. With ``pause_bot`` (the
    ``escalate`` tool and the fallback) the assistant also stays silent until a
    person hands the conversation back (``conversation_handback``); the tenant's
    messages keep being stored and shown. The feature flag's hand-over passes
    False: the switched-off flag already keeps the assistant silent."""
    conversation.escalated_at = timezone.now()
    conversation.escalation_reason = reason[:2000]
    fields = ["escalated_at", "escalation_reason", "updated_at"]
    if pause_bot:
        conversation.bot_paused = True
        fields.append("bot_paused")
    conversation.save(update_fields=fields)
    organization = conversation.organization
    if organization.notification_email:
        transaction.on_commit(
            lambda: send_mail(
                f"Conversation needs a person: {conversation.phone}",
                f"Reason: {reason}",
                settings.DEFAULT_FROM_EMAIL,
                [organization.notification_email],
            )
        )
