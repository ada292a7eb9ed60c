"""Actions the turn engine takes, named ``<entity>_<action>``. Every state
change the model asks for goes through one of these."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.postgres.search import TrigramSimilarity, TrigramWordSimilarity
from django.core.mail import send_mail
from django.db import transaction
from django.db.models.functions import Greatest
from django.utils import timezone

from conversations.models import Conversation, GatheringState, IdentityStatus
from orchestration.replies import language_guess
from properties.models import Organization, Property, Tenant
from properties.selectors import tenancies_current

logger = logging.getLogger(__name__)


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
    if prop is None:  # gating lets confirm_property through only with a candidate or a code
        raise Property.DoesNotExist("no candidate property to confirm and no property_code given")
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
