"""Screening every inbound message for an emergency, once, at the right place.

The keyword rules cost about a millisecond and run inside the webhook request;
the classifier costs tens of milliseconds on this hardware, over the request's
budget (docs/benchmarks.md), so it runs in a worker on the ``emergency`` queue,
which has workers of its own. Where each decision is taken:

* **In the request** (``message_screen_in_request``): with the classifier off,
  the rules decide alone, as they always did. With it on, only an
  organization's own rule decides there (the policy lets nothing veto it);
  the safety text goes back in the TwiML at once.
* **In the worker** (``message_screen``): everything else. The rules and the
  classifier decide together (``emergencies.detector``) and the safety text is
  sent as a WhatsApp message straight from the task, not through the outbound
  queue, so it reaches Twilio within about a second of receipt.
* **Redis down**: the task cannot be queued, so the request screens the message
  itself, classifier and all: slower, and the safety text goes in the TwiML.
* **The emergency worker down or lost the task**: the turn screens the messages
  it is about to handle before the model decides, and the emergency sweeper
  screens whatever is still unscreened after ``EMERGENCY_SCREEN_GRACE_SECONDS``.

``Message.screened_at`` records that a message was screened; the row lock taken
here makes the decision once, whichever of these gets there first.

**Voice notes**: the detector reads ``message_text`` (the body and the done
transcripts). A voice note arrives with no words and is marked screened with
nothing to read; when its transcript is done, ``conversations.transcription``
clears ``screened_at`` and queues ``emergency.screen``, so it is screened
again on what was said, and the safety text goes out as a WhatsApp message
(the TwiML has long gone). A message that already raised its alert is not
screened again: one alert and one safety text per message.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from config.tasks import EMERGENCY_SCREEN, queue_task
from conversations.delivery import SendRetry, message_send
from conversations.message_kinds import AUDIO
from conversations.models import Message, message_text
from conversations.outbound import outbound_send_queue, outbound_text_queue
from emergencies.alerts import emergency_alert_raise, emergency_recently_alerted, safety_message_for
from emergencies.detector import Detection, emergency_detect, keyword_detection
from emergencies.matching import Match, emergency_match
from emergencies.models import EmergencyAlert

logger = logging.getLogger(__name__)

SAFETY_PURPOSE = "safety"


@dataclass(frozen=True)
class Screened:
    detection: Detection
    reply: str = ""  # the safety text, when it is an emergency
    alert: EmergencyAlert | None = None  # None for an emergency alerted moments ago


def classifier_in_worker() -> bool:
    return settings.EMERGENCY_CLASSIFIER != "off"


def message_screen_in_request(message: Message, *, repeat: bool = False) -> str | None:
    """The webhook's part: the safety text for the TwiML, or None (no
    emergency, the worker decides, or a turn already screened it: the turn is
    queued when the message commits, before this runs). ``repeat``: Twilio's
    repeat of a delivery whose message is still unscreened. Moments old, the
    worker's part is left to the task the first delivery queued; older than
    ``EMERGENCY_SCREEN_GRACE_SECONDS`` (Twilio repeats after 15 s: the first
    request is stuck, on a hung Redis say, and its answer given up), the
    request screens it, classifier and all, so this answer carries the text."""
    conversation = message.conversation
    assert conversation is not None
    detection = None
    if message.body and classifier_in_worker():
        own = _own_rules_match(message)
        if own is None:
            if repeat:
                if timezone.now() - message.created_at < timedelta(seconds=settings.EMERGENCY_SCREEN_GRACE_SECONDS):
                    return None
                logger.warning("message %s: still unscreened when Twilio repeated it, screening it here", message.pk)
            elif queue_task(EMERGENCY_SCREEN, [message.pk]):
                return None
            else:
                logger.warning("message %s: Redis is down, screening it in the request", message.pk)
        else:
            detection = keyword_detection(own, language=conversation.language)
    screened = message_screen(message_id=message.pk, stage="request", detection=detection)
    return (screened.reply or None) if screened else None


def message_screen(*, message_id: int, stage: str, detection: Detection | None = None) -> Screened | None:
    """Screen one inbound message unless it already was (None then). In the
    worker, the turn and the sweeper the safety text goes out as a WhatsApp
    message; in the request (``stage="request"``) the caller puts it in the TwiML.
    ``detection`` is a decision already taken (an organization's own rule);
    otherwise the detector decides here."""
    with transaction.atomic():
        message = (
            Message.objects.select_for_update(of=("self",))
            .select_related("conversation__organization")
            .filter(pk=message_id, direction=Message.Direction.INBOUND, screened_at__isnull=True)
            .first()
        )
        if message is None or message.conversation is None:
            return None
        # Only a message without typed words is ever screened twice (again after its transcript).
        if not message.body and EmergencyAlert.objects.filter(message_id=message.pk).exists():
            _screened_mark(message.pk)  # its alert and safety text are already out
            return None
        # Typed words alone need no query for media; a voice note's are its transcript.
        text = message_text(message) if message.kind == AUDIO or not message.body else message.body
        result = _decide(message, detection if detection is not None else _detect(message, text)) if text else None
        in_answer = result.reply if result is not None and stage == "request" else ""
        _screened_mark(message.pk, twiml_reply=in_answer)
        safety = []
        if result is not None and result.reply and stage != "request":
            safety = outbound_text_queue(
                body=result.reply, conversation=message.conversation, purpose=SAFETY_PURPOSE, queue=False
            )
    if result is not None and result.detection:
        logger.warning("message %s screened in the %s: %s", message_id, stage, result.detection.explain())
    _send_now([part.pk for part in safety])
    return result


def _send_now(message_ids: list[int]) -> None:
    """Send the safety text's parts from here, in order, rather than behind the
    outbound queue; at a transient failure the parts left go to the outbound
    task together (or its sweeper), so they still arrive in order."""
    for index, message_id in enumerate(message_ids):
        try:
            message_send(message_id=message_id)
        except SendRetry:
            outbound_send_queue(message_ids[index:])
            return


def _detect(message: Message, text: str) -> Detection:
    conversation = message.conversation
    assert conversation is not None
    organization = conversation.organization
    return emergency_detect(
        text,
        organization_id=organization.pk,
        country=organization.country,
        sensitivity=organization.emergency_sensitivity,
        language=conversation.language,
    )


def _own_rules_match(message: Message) -> Match | None:
    conversation = message.conversation
    assert conversation is not None
    match = emergency_match(
        message.body, organization_id=conversation.organization_id, country=conversation.organization.country
    )
    own = [hit for hit in match.hits if hit.own]
    return Match(hits=own) if own else None


def _decide(message: Message, detection: Detection) -> Screened:
    """The safety text for an emergency, and its alert unless the same
    category was alerted in this conversation moments ago (or any was, and
    only the classifier sees one now)."""
    if detection.vetoed:
        logger.info(
            "built-in rule hit on message %s stood down (a figure of speech, or the classifier's %.2f)",
            message.pk,
            detection.score.emergency if detection.score else 0.0,
        )
    if not detection:
        return Screened(detection=detection)
    conversation = message.conversation
    assert conversation is not None
    if detection.source == "classifier" and emergency_recently_alerted(conversation=conversation):
        # The classifier reads one message without the conversation: in a live emergency the tenant's
        # next words ("we're all outside now") read as an emergency of their own, often of another
        # category. They are the same emergency: no second alert, issue or safety text. A rule hit
        # (a hazard named) still raises its own.
        logger.info("message %s follows a live alert; the classifier raises nothing new", message.pk)
        return Screened(detection=detection)
    category, language = detection.category, detection.language
    assert category is not None and language is not None  # an emergency always names both
    reply = safety_message_for(organization=conversation.organization, category=category, language=language)
    alert = None
    if not emergency_recently_alerted(conversation=conversation, category=category):
        alert = emergency_alert_raise(
            conversation=conversation,
            message=message,
            category=category,
            matched_rules=[hit.as_dict() for hit in detection.hits],
            source=detection.source,
            safety_reply=reply,
            score=detection.score.emergency if detection.score else None,
            model_version=detection.model_version,
        )
    return Screened(detection=detection, reply=reply, alert=alert)


def _screened_mark(message_id: int, *, twiml_reply: str = "") -> None:
    """Screened now; ``twiml_reply`` is the safety text the webhook's answer carries (a repeat answers the same)."""
    changes = {"screened_at": timezone.now(), **({"twiml_reply": twiml_reply} if twiml_reply else {})}
    Message.objects.filter(pk=message_id, screened_at__isnull=True).update(**changes)


def safety_unsent_send(*, now: datetime | None = None, limit: int = 20) -> int:
    """The sweeper's part: safety texts still waiting ``EMERGENCY_SCREEN_GRACE_SECONDS``
    after they were written (the worker died between the screening's commit and
    the send, or a retry was lost), sent now rather than when the outbound
    sweeper's lease runs out minutes later. The send claims each row, so one
    sent meanwhile is not sent twice. At Twilio's first refusal the sweep stops
    (the rest wait for the next one): a Twilio that is down costs a sweep one
    timeout, not one per message. Returns how many were tried."""
    now = now or timezone.now()
    ids = list(
        Message.objects.filter(
            direction=Message.Direction.OUTBOUND,
            status=Message.Status.PENDING,
            raw_payload__purpose=SAFETY_PURPOSE,
            created_at__lt=now - timedelta(seconds=settings.EMERGENCY_SCREEN_GRACE_SECONDS),
            created_at__gte=now - timedelta(hours=settings.EMERGENCY_SCREEN_WINDOW_HOURS),
        )
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )
    for tried, message_id in enumerate(ids, start=1):
        try:
            message_send(message_id=message_id)
        except SendRetry:
            logger.warning("safety text %s: Twilio refused it for now; the next sweep tries again", message_id)
            return tried
    return len(ids)


def unscreened_screen(*, now: datetime | None = None, limit: int = 200) -> int:
    """The sweeper's part: screen inbound messages the worker has not reached
    after ``EMERGENCY_SCREEN_GRACE_SECONDS`` (within the last
    ``EMERGENCY_SCREEN_WINDOW_HOURS``). Returns how many were screened."""
    now = now or timezone.now()
    ids = list(
        Message.objects.filter(
            direction=Message.Direction.INBOUND,
            screened_at__isnull=True,
            conversation__isnull=False,
            created_at__lt=now - timedelta(seconds=settings.EMERGENCY_SCREEN_GRACE_SECONDS),
            created_at__gte=now - timedelta(hours=settings.EMERGENCY_SCREEN_WINDOW_HOURS),
        )
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )
    for message_id in ids:
        message_screen(message_id=message_id, stage="sweeper")
    return len(ids)
