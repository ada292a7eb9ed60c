"""Actions the turn engine takes, named ``<entity>_<action>``. Every state
change the model asks for goes through one of these."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Collection

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from conversations.models import Conversation, GatheringState, IdentityStatus, Message
from orchestration.gating import identity_after
from orchestration.replies import language_guess
from properties.address_match import AddressMatch, address_match, property_address_match
from properties.location import NearMatch, property_nearest
from properties.models import Organization, Property, Tenant
from properties.selectors import tenancies_current

logger = logging.getLogger(__name__)


def conversation_identify_by_phone(*, conversation: Conversation) -> str:
    """At the start of a turn while unidentified: link the tenant by phone
    number (again, so a tenancy that has begun since counts). One current
    tenancy confirms identity at once. Several leave it ``identified`` until
    the tenant says which, unless the messages of this first turn already name
    one of them clearly ("the Orchard Lane house has a leak"): then that one is
    confirmed and the tenant is not asked again. Only the tenant's own homes
    are candidates. Returns the outcome for the transition table."""
    # Locked: a change of the tenant's number being saved now is waited for, and then the number is not theirs.
    tenant = (
        Tenant.objects.select_for_update()
        .filter(organization_id=conversation.organization_id, phone=conversation.phone)
        .first()
    )
    if tenant is None:
        return "unknown_phone"
    before = (conversation.tenant_id, conversation.property_id, conversation.identity_status)
    conversation.tenant = tenant
    if conversation.profile_name and tenant.whatsapp_profile_name != conversation.profile_name:
        Tenant.objects.filter(pk=tenant.pk).update(
            whatsapp_profile_name=conversation.profile_name, wa_id=conversation.wa_id
        )
    tenancies = tenancies_current(tenant=tenant)
    named = _tenancy_named(conversation, [t.property for t in tenancies]) if len(tenancies) > 1 else None
    if len(tenancies) == 1:
        conversation.property = tenancies[0].property
        outcome = "one_tenancy"
    elif named is not None:
        conversation.property = named
        outcome = "named_tenancy"
    elif tenancies:
        outcome = "several_tenancies"
    else:
        outcome = "no_current_tenancy"
    conversation.identity_status = identity_after("phone_lookup", outcome, conversation.identity_status)
    after = (conversation.tenant_id, conversation.property_id, conversation.identity_status)
    if after != before:  # a later turn's lookup mostly finds what the last one did: no write then
        conversation.save(update_fields=["tenant", "property", "identity_status", "updated_at"])
    return outcome


def conversation_home_recheck(*, conversation: Conversation) -> list[Property] | None:
    """At the start of a turn between reports, for a number whose tenant had
    confirmed a home: when the tenant has current tenancies and that home is
    no longer one of them (the tenancy ended, they moved to another of the
    agency's homes), the confirmation is dropped and the number looked up
    again, so that the next report is not filed at the home they left. A
    tenant with no current tenancy keeps the home they confirmed (their
    reports are marked unverified). Returns the tenant's current homes when
    it read them (the turn's context needs them too), else None."""
    if conversation.tenant is None or conversation.property_id is None:
        return None
    if conversation.identity_status not in (IdentityStatus.CONFIRMED, IdentityStatus.ACTIVE):
        return None
    homes = [t.property for t in tenancies_current(tenant=conversation.tenant)]
    if not homes or conversation.property_id in {home.pk for home in homes}:
        return homes
    logger.info(
        "conversation %s: home %s is no longer the tenant's; looked up again", conversation.pk, conversation.property_id
    )
    conversation.property, conversation.identity_status = None, IdentityStatus.UNIDENTIFIED
    if conversation_identify_by_phone(conversation=conversation) == "unknown_phone":  # not saved by the lookup
        conversation.save(update_fields=["property", "identity_status", "updated_at"])
    return homes


def _tenancy_named(conversation: Conversation, homes: list[Property]) -> Property | None:
    """The one home among ``homes`` that the tenant's unanswered messages name
    (free text, so a street needs its type or number: "the park" is not Park Lane)."""
    text = "\n".join(
        Message.objects.filter(
            conversation=conversation, direction=Message.Direction.INBOUND, processed_at__isnull=True
        ).values_list("body", flat=True)
    )
    return address_match(text=text, properties=homes, strict=True).property if text.strip() else None


def property_match(*, organization: Organization, text: str) -> AddressMatch:
    """The organization's property that an address, postcode, house name or
    code names (``properties.address_match``: typos and spacing tolerated,
    another house or flat never proposed), or the candidates when several fit."""
    return property_address_match(organization=organization, text=text)


def conversation_property_propose(*, conversation: Conversation, address: str) -> AddressMatch:
    """Look up the address an unknown number gave; one match becomes the
    candidate the tenant confirms. Several, or none, leave no candidate."""
    match = property_match(organization=conversation.organization, text=address)
    conversation.candidate_property = match.property
    conversation.save(update_fields=["candidate_property", "updated_at"])
    return match


def conversation_property_propose_near(
    *, conversation: Conversation, latitude: float, longitude: float, codes: Collection[str] | None = None
) -> NearMatch:
    """A location pin: the home nearest to it, within
    ``LOCATION_MATCH_MAX_METRES``, becomes the candidate the tenant confirms,
    as an address given to ``find_property`` would. A number with no tenancy
    searches the organization's homes; a tenant with several homes passes
    their ``codes`` and only those are candidates. Several about as near
    (flats in one building), or none, leave no candidate. The pin never
    confirms anything by itself."""
    match = property_nearest(
        organization_id=conversation.organization_id,
        latitude=latitude,
        longitude=longitude,
        max_metres=settings.LOCATION_MATCH_MAX_METRES,
        codes=codes,
    )
    conversation.candidate_property = match.property
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


def gathering_restart(*, conversation: Conversation, since: datetime.datetime) -> None:
    """A half-finished report went stale: start afresh. ``since``: when the
    next report starts (this turn's first message), so that the stale
    report's words and photos are not the next one's."""
    conversation.gathering_state = GatheringState.IDLE
    conversation.gathering_started_at = since
    conversation.save(update_fields=["gathering_state", "gathering_started_at", "updated_at"])


def conversation_language_note(*, conversation: Conversation, text: str) -> None:
    """Remember the language the tenant writes in, when ``text`` shows it."""
    language = language_guess(text)
    if language and language != conversation.language:
        conversation.language = language
        conversation.save(update_fields=["language", "updated_at"])


def conversation_escalate(
    *, conversation: Conversation, reason: str, pause_bot: bool = True, notify: bool = True
) -> None:
    """Put the conversation in the landlord's inbox. With ``pause_bot`` (the
    ``escalate`` tool and the fallback) the assistant also stays silent until a
    person hands the conversation back (``conversation_handback``); the tenant's
    messages keep being stored and shown. The feature flag's hand-over passes
    False: the switched-off flag already keeps the assistant silent, and so
    does an emergency escalation, where the assistant keeps answering the
    tenant's safety questions until a person takes over. ``notify=False``
    when the landlord was already told another way (an emergency's alert)."""
    conversation.escalated_at = timezone.now()
    conversation.escalation_reason = reason[:2000]
    fields = ["escalated_at", "escalation_reason", "updated_at"]
    if pause_bot:
        conversation.bot_paused = True
        fields.append("bot_paused")
    conversation.save(update_fields=fields)
    organization = conversation.organization
    if notify and organization.notification_email:
        transaction.on_commit(
            lambda: send_mail(
                f"Conversation needs a person: {conversation.phone}",
                f"Reason: {reason}",
                settings.DEFAULT_FROM_EMAIL,
                [organization.notification_email],
            ),
            robust=True,  # a mail server that refuses is logged; the reply's send, also on commit, still goes
        )
