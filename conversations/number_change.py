"""A number that stops being its tenant's: their conversation is retired.

A conversation is the organization's thread with one WhatsApp number, tied to
the tenant it was identified as. When that tenant's number is changed (a
correction, a new phone) or the tenant is deleted, the number is no longer
theirs, and whoever writes from it next (a new tenant given it, a stranger)
must not be taken for them, read their history in the model's context or
inherit their alert. So the conversation is retired (``retired_at``):

* its history stays the tenant's: export, erasure and the issue pages find it
  through the tenant, not the number (a conversation from the old number not
  linked to anyone yet was theirs by the number, and is linked to them);
* the next message from the number starts a new conversation, identified
  afresh (the unique key is one *live* conversation per number); messages it
  held that no turn has handled yet move there (``messages_hand_on``);
* nothing more is sent to it but a safety text (``retired_refusal``); what
  waited to be sent there is not sent. Updates on the tenant's issues go to
  their current number (``issues.selectors.tenant_conversation``).

It runs before the tenant's row is written (``pre_save``, ``pre_delete``):
conversations are locked before the tenant, in the order the webhook, the
turn and erasure use, and the number before the change is read from the row.
A tenant deleted leaves their retired conversations linked to no one (the
foreign key empties): no data request can name them; retention still applies.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from config.tasks import INBOUND_PROCESS
from conversations.models import Conversation, Message
from conversations.opt_out import OPT_OUT_EXEMPT_PURPOSES
from conversations.sweeper import queue_leased
from properties.models import Tenant

logger = logging.getLogger(__name__)

RETIRED_CODE = "number_retired"


def conversations_retire(*, tenant: Tenant, number: str, keep: str = "") -> int:
    """Retire ``tenant``'s live conversations, and the live one from their
    former ``number`` that is linked to no one, except the one from ``keep``
    (their number from now on); fail what waits to be sent there. Returns how
    many were retired."""
    live = Conversation.objects.filter(organization_id=tenant.organization_id, retired_at__isnull=True).filter(
        Q(tenant=tenant) | Q(phone=number, tenant__isnull=True)
    )
    if keep:
        live = live.exclude(phone=keep)
    now = timezone.now()
    with transaction.atomic():
        ids = list(live.select_for_update().order_by("pk").values_list("pk", flat=True))
        if not ids:
            return 0
        Conversation.objects.filter(pk__in=ids).update(tenant=tenant, retired_at=now, updated_at=now)
        Message.objects.filter(
            conversation_id__in=ids, direction=Message.Direction.OUTBOUND, status=Message.Status.PENDING
        ).exclude(raw_payload__purpose__in=OPT_OUT_EXEMPT_PURPOSES).update(
            status=Message.Status.FAILED,
            error_code=RETIRED_CODE,
            error_message="not sent: the number stopped being the tenant's",
            status_updated_at=now,
        )
    logger.info("tenant %s: conversations %s retired, the number is no longer theirs", tenant.pk, ids)
    return len(ids)


def retired_refusal(*, purpose: str, conversation: Conversation | None) -> str:
    """Why a message of ``purpose`` may not go to ``conversation``: it is
    retired, and only a safety text (an answer to what its sender just wrote)
    still goes there. "" when it may."""
    if conversation is None or conversation.retired_at is None or purpose in OPT_OUT_EXEMPT_PURPOSES:
        return ""
    return f"not sent: the number stopped being the tenant's at {conversation.retired_at:%Y-%m-%d %H:%M} UTC"


def messages_hand_on(*, conversation: Conversation, message_ids: list[int]) -> Conversation:
    """A turn that finds its conversation retired (the messages came in just
    before): they are whoever has the number now, so they move to the
    number's live conversation (created if new), whose turn is queued, and
    the former tenant's identity and history never answer them. Inside the
    caller's transaction, the retired conversation locked."""
    live, _ = Conversation.objects.get_or_create(
        organization_id=conversation.organization_id,
        phone=conversation.phone,
        retired_at__isnull=True,
        defaults={"whatsapp_id": conversation.whatsapp_id},
    )
    moved = list(
        Message.objects.filter(
            pk__in=message_ids,
            conversation=conversation,
            direction=Message.Direction.INBOUND,
            processed_at__isnull=True,
        ).values_list("pk", flat=True)
    )
    if moved:
        Message.objects.filter(pk__in=moved).update(conversation=live, queued_at=timezone.now())
        # They wrote just now: WhatsApp's 24-hour window is open for the live conversation too, so its
        # reply (or a safety text) goes as text, not as a template that may not be configured.
        latest = Message.objects.filter(pk__in=moved).aggregate(at=Max("created_at"))["at"]
        Conversation.objects.filter(pk=live.pk).filter(
            Q(last_inbound_at__isnull=True) | Q(last_inbound_at__lt=latest)
        ).update(last_inbound_at=latest)
        live.refresh_from_db(fields=["last_inbound_at"])
        last = moved[-1]
        transaction.on_commit(lambda: queue_leased(INBOUND_PROCESS, [last], Message, moved))
        logger.info("messages %s of retired conversation %s handed on to %s", moved, conversation.pk, live.pk)
    return live


def on_tenant_saving(sender: type, *, instance: Tenant, raw: bool = False, **kwargs: object) -> None:
    if instance.pk is None or raw:  # a new tenant, or a fixture loaded as it is
        return
    before = Tenant.objects.filter(pk=instance.pk).values_list("phone", flat=True).first()
    if before is not None and before != instance.phone:
        conversations_retire(tenant=instance, number=before, keep=instance.phone)


def on_tenant_deleting(sender: type, *, instance: Tenant, **kwargs: object) -> None:
    conversations_retire(tenant=instance, number=instance.phone)
