"""The one way to say something to a WhatsApp user.

``outbound_text_queue`` stores the outbound Message rows (text over WhatsApp's
1600-character limit is split at sentence or word boundaries, in order) and
queues their sending after the surrounding transaction commits, so a rolled-back
turn never sends anything. Inside ``outbound_sent_together`` (a turn) the
messages queued for one recipient go to the outbound worker as one task, in
the order written, so a reply and the question after it never overtake each
other on concurrent workers.

Both senders are the door where a tenant's opt-out (STOP) is applied
(``opt_out.opt_out_refusal``): a message the tenant opted out of is stored
``failed`` with ``error_code="opted_out"`` and the reason, and never queued,
so the landlord sees in the conversation what was not sent and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial

from django.db import transaction
from django.utils import timezone

from config.tasks import OUTBOUND_SEND
from conversations.models import Conversation, Message
from conversations.number_change import RETIRED_CODE, retired_refusal
from conversations.opt_out import OPTED_OUT_CODE, opt_out_refusal
from conversations.sweeper import queue_leased
from properties.models import Organization

WHATSAPP_MAX_CHARS = 1600

# The ids queued inside ``outbound_sent_together``, by recipient; None outside it.
_sent_together: ContextVar[dict[str, list[int]] | None] = ContextVar("outbound_sent_together", default=None)


@contextmanager
def outbound_sent_together() -> Iterator[None]:
    """Send what is queued in the block as one task per recipient, in the
    order written, when the surrounding transaction commits (nothing if the
    block raises). Per recipient: a landlord's number that Twilio refuses for
    a while must not hold the tenant's reply behind it."""
    batches: dict[str, list[int]] = {}
    token = _sent_together.set(batches)
    try:
        yield
    finally:
        _sent_together.reset(token)
    for ids in batches.values():
        transaction.on_commit(partial(outbound_send_queue, ids))


def _send_on_commit(to: str, ids: list[int]) -> None:
    batches = _sent_together.get()
    if batches is not None:
        batches.setdefault(to, []).extend(ids)
    else:
        transaction.on_commit(partial(outbound_send_queue, ids))


def text_split(body: str, *, limit: int = WHATSAPP_MAX_CHARS) -> list[str]:
    """Split ``body`` into parts of at most ``limit`` characters, preferring
    paragraph, then sentence, then word boundaries."""
    body = body.strip()
    parts: list[str] = []
    while len(body) > limit:
        window = body[:limit]
        cut = -1
        for pattern in (r"\n\s*\n", r"[.!?]\s", r"\s"):
            matches = list(re.finditer(pattern, window))
            if matches and matches[-1].end() > limit // 2:
                cut = matches[-1].end()
                break
        if cut <= 0:
            cut = limit
        parts.append(body[:cut].rstrip())
        body = body[cut:].lstrip()
    if body:
        parts.append(body)
    return parts


def outbound_text_queue(
    *,
    body: str,
    conversation: Conversation | None = None,
    organization: Organization | None = None,
    to: str | None = None,
    author: str = Message.Author.ASSISTANT,
    purpose: str = "generic",
    queue: bool = True,
    tenant_id: int | None = None,
) -> list[Message]:
    """Store outbound text for ``conversation`` (or for a bare number ``to`` of
    ``organization``, such as a landlord's emergency contact) and send it after
    commit. Returns the stored messages in sending order. ``tenant_id``: the
    tenant a bare number is sent to as, kept on the message so that their data
    is found by them, not by a number that may change hands. ``queue=False``: the
    caller sends them itself (``delivery.message_send``), as the emergency
    screening does so that the outbound queue cannot hold the safety text up;
    the sweeper still sends any it left pending."""
    if conversation is not None:
        organization = conversation.organization
        to = conversation.whatsapp_id
    if organization is None or not to:
        raise ValueError("outbound_text_queue needs a conversation, or an organization and a number")
    if not to.startswith("whatsapp:"):
        to = f"whatsapp:{to}"
    code, refusal = _refusal(purpose=purpose, conversation=conversation, organization=organization, to=to)
    messages = [
        Message.objects.create(
            organization=organization,
            conversation=conversation,
            direction=Message.Direction.OUTBOUND,
            author=author,
            body=part,
            to_address=to,
            raw_payload={"purpose": purpose} | ({"tenant": tenant_id} if tenant_id is not None else {}),
            **_state(code, refusal),
        )
        for part in text_split(body)
    ]
    if queue and not refusal:
        _send_on_commit(to, [message.pk for message in messages])
    return messages


def _refusal(
    *, purpose: str, conversation: Conversation | None, organization: Organization | None = None, to: str = ""
) -> tuple[str, str]:
    """(error code, reason) when a message of ``purpose`` may not go there now:
    the conversation is retired, or the tenant opted out; ("", "") when it may."""
    if reason := retired_refusal(purpose=purpose, conversation=conversation):
        return RETIRED_CODE, reason
    if reason := opt_out_refusal(purpose=purpose, conversation=conversation, organization=organization, to=to):
        return OPTED_OUT_CODE, reason
    return "", ""


def _state(code: str, refusal: str) -> dict[str, object]:
    """A new outbound message's status: pending, its sending queued on commit
    (the sweeper's lease starts now); or failed, never queued, when it may not
    go (``_refusal``)."""
    now = timezone.now()
    if refusal:
        return {"status": Message.Status.FAILED, "error_code": code, "error_message": refusal, "status_updated_at": now}
    return {"status": Message.Status.PENDING, "queued_at": now}


@dataclass(frozen=True)
class Choice:
    """One tap-to-answer option: the ``payload`` WhatsApp posts back as
    ``ButtonPayload`` when it is tapped, and the button's ``title``
    (``ButtonText``; WhatsApp shows at most 20 characters)."""

    payload: str
    title: str


def outbound_choice_queue(
    *,
    conversation: Conversation,
    body: str,
    choices: list[Choice],
    purpose: str,
    content_variables: dict[str, str],
    language: str = "",
    author: str = Message.Author.ASSISTANT,
) -> Message:
    """Store a question with choices and send it after commit. ``body`` is
    the whole question as numbered text ("... Reply 1 for Yes, 2 for No"),
    what goes out where no quick-reply template is configured for
    ``purpose``; with one, ``delivery`` sends the template with
    ``content_variables`` instead. The choices are kept on the message
    (``raw_payload["choices"]``): a later answer, tapped or typed as a
    number, is read against them (``orchestration.buttons``)."""
    code, refusal = _refusal(purpose=purpose, conversation=conversation)
    message = Message.objects.create(
        organization=conversation.organization,
        conversation=conversation,
        direction=Message.Direction.OUTBOUND,
        author=author,
        body=body.strip()[:WHATSAPP_MAX_CHARS],
        to_address=conversation.whatsapp_id
        if conversation.whatsapp_id.startswith("whatsapp:")
        else f"whatsapp:{conversation.whatsapp_id}",
        raw_payload={
            "purpose": purpose,
            "choices": [{"payload": c.payload, "title": c.title} for c in choices],
            "content_variables": content_variables,
            "language": language,
        },
        **_state(code, refusal),
    )
    if not refusal:
        _send_on_commit(message.to_address, [message.pk])
    return message


def outbound_send_queue(message_ids: list[int]) -> None:
    """Queue sending, in order. If Redis is down the rows stay ``pending`` and
    the sweeper queues them later."""
    queue_leased(OUTBOUND_SEND, [message_ids], Message, message_ids)
