"""Which rows hold one tenant's data, shared by export, erasure and their tests.

A tenant's conversations are those linked to them and the live one from their
phone number (a retired conversation from it was someone else's while it was
live: ``conversations.number_change``), inside their organization only; everything else follows from those
conversations (messages, media, turns, alerts) or from the tenant (issues),
and so do the messages sent to their number while they had no conversation.
The landlord's alert messages about the tenant's issues (sent to the
organization's own contact number, with no conversation) and the job offers
and updates sent to contractors are found by the issues' references."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Max, Q, QuerySet

from conversations.models import Conversation, Media, Message
from emergencies.models import EmergencyAlert
from issues.appointments import SLOTS_PURPOSE
from issues.dispatch import JOB_PURPOSE
from issues.models import Issue, IssueUpdate
from issues.summary import SUMMARY_PURPOSE
from orchestration.models import Turn
from properties.models import Contractor, Tenant

# What is sent to a tenant's bare number: an issue's status updates and its
# written summary (not the landlord's alerts, should the landlord's own
# number also be a tenant's).
TO_THEIR_NUMBER = ("issue_update", SUMMARY_PURPOSE)
# What is sent to a contractor about a job: the offer, the dispatch notes, the
# visit-times list (not the tenant's own appointment messages: their conversation's).
CONTRACTOR_PURPOSES = (JOB_PURPOSE, "dispatch", SLOTS_PURPOSE)


@dataclass
class TenantRecords:
    tenant: Tenant
    conversations: QuerySet[Conversation]
    messages: QuerySet[Message]
    media: QuerySet[Media]
    issues: QuerySet[Issue]
    issue_updates: QuerySet[IssueUpdate]
    alerts: QuerySet[EmergencyAlert]
    turns: QuerySet[Turn]

    def messages_quoting_them(self) -> QuerySet[Message]:
        """Messages outside the tenant's conversations that name one of their
        issues or their number: the landlord's own alerts (no conversation) and
        what contractors were sent (a job offer quotes "The tenant says: ...").
        Their number includes one they had before, while its conversation was
        theirs (before and after, someone else's); a contractor's messages
        are found by their purpose too, so a contractor whose number changed
        since is still covered."""
        references = list(self.issues.values_list("reference", flat=True))
        # Their number now, since it stopped being an earlier holder's (whose conversation from it was retired).
        theirs_since = (
            Conversation.objects.filter(organization_id=self.tenant.organization_id, phone=self.tenant.phone)
            .exclude(tenant=self.tenant)
            .aggregate(at=Max("retired_at"))["at"]
        )
        condition = Q(body__contains=self.tenant.phone) & (Q(created_at__gte=theirs_since) if theirs_since else Q())
        for reference in references:
            condition |= Q(body__contains=reference)
        earlier = self.conversations.exclude(phone=self.tenant.phone).values_list("phone", "created_at", "retired_at")
        for phone, since, retired_at in earlier:
            condition |= Q(body__contains=phone, created_at__gte=since) & (
                Q(created_at__lte=retired_at) if retired_at else Q()
            )
        organization_id = self.tenant.organization_id
        contractor_numbers = Contractor.objects.filter(organization_id=organization_id).exclude(whatsapp="")
        to_contractors = Q(conversation__phone__in=contractor_numbers.values("whatsapp")) | Q(
            raw_payload__purpose__in=CONTRACTOR_PURPOSES
        )
        outside = Q(conversation__isnull=True) | (to_contractors & Q(direction=Message.Direction.OUTBOUND))
        return Message.objects.filter(organization_id=organization_id).filter(outside).filter(condition)


def _to_their_number(tenant: Tenant) -> Q:
    """What was sent to the tenant's bare number: by the tenant it was sent
    to as (``raw_payload["tenant"]``), since a number can change hands; one
    sent before that was kept (2026-11-29), by their number now."""
    bare = Q(conversation__isnull=True, direction=Message.Direction.OUTBOUND, raw_payload__purpose__in=TO_THEIR_NUMBER)
    earlier = Q(to_address=f"whatsapp:{tenant.phone}") & ~Q(raw_payload__has_key="tenant")
    return bare & (Q(raw_payload__tenant=tenant.pk) | earlier)


def tenant_records(*, tenant: Tenant) -> TenantRecords:
    organization_id = tenant.organization_id
    conversation_ids = list(
        Conversation.objects.filter(organization_id=organization_id)
        # From their number, the live one: a retired conversation from it was someone else's (found by tenant).
        .filter(Q(tenant=tenant) | Q(phone=tenant.phone, retired_at__isnull=True))
        .values_list("pk", flat=True)
    )
    conversations = Conversation.objects.filter(pk__in=conversation_ids)
    issues = Issue.objects.filter(organization_id=organization_id).filter(
        Q(tenant=tenant) | Q(conversation_id__in=conversation_ids)
    )
    return TenantRecords(
        tenant=tenant,
        conversations=conversations,
        # With the messages sent to their bare number (status updates, summaries) while they had no conversation.
        messages=Message.objects.filter(organization_id=organization_id).filter(
            Q(conversation_id__in=conversation_ids) | _to_their_number(tenant)
        ),
        media=Media.objects.filter(
            message__organization_id=organization_id, message__conversation_id__in=conversation_ids
        ),
        issues=issues,
        # Written from their conversations (on any issue), or on their issues by no tenant (the landlord, the
        # system); not another tenant's report added to one of theirs (a flatmate's).
        issue_updates=IssueUpdate.objects.filter(
            Q(conversation_id__in=conversation_ids) | Q(issue__in=issues, conversation__isnull=True)
        ),
        # Raised from their conversations only: a flatmate's alert linked to this tenant's issue is the flatmate's.
        alerts=EmergencyAlert.objects.filter(organization_id=organization_id, conversation_id__in=conversation_ids),
        turns=Turn.objects.filter(conversation_id__in=conversation_ids),
    )
