"""The tenant closes the loop: "Is it fixed?".

When the landlord resolves an issue that came from a WhatsApp conversation,
the tenant is asked "Is it fixed?" with Yes / No (``fix_question_ask``, a
question with choices: quick-reply buttons inside the 24-hour window where a
template is configured, the approved ``issue_fixed`` template outside it,
numbered text otherwise). The turn engine reads the answer
(``orchestration/repair_answers.py``) and calls the services here:

- **Yes**: recorded and the issue closed (unless a clock is still owed, such
  as the written summary); the tenant is asked for a rating,
  1 to 5 (numbered), then invited to add a comment. The next text after that
  invitation is the comment (``follow_up_record``); the model still answers it.
- **No**: the issue is reopened (its resolved clock runs again), the manager
  is alerted, and the tenant is asked what is still wrong; their next text
  goes on the issue's history and to the manager.
- A No or a rating sent together with words (one burst of messages): the
  words are what the prompt would have asked for, so they are recorded at
  once (``words``) and the prompt is not sent: the model answers the burst.
  (Words sent with a Yes go to the model only; while an emergency stands
  they are the emergency's; ``orchestration/repair_answers.py`` decides.)
- **No answer** within ``ISSUE_FIX_CLOSE_DAYS``: beat closes the issue
  (``fix_unanswered_close``).

The texts are in ``issues/fix_question.py``, in the tenant's language.
"""

from __future__ import annotations

import datetime
import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from conversations.models import Conversation, Message
from conversations.outbound import Choice, outbound_choice_queue, outbound_text_queue
from issues.appointments import contractor_back
from issues.deadlines import clocks_running
from issues.fix_question import language_of, text
from issues.landlord import landlord_tell
from issues.models import Issue, IssueClock, IssueUpdate
from issues.status import issue_status_change

logger = logging.getLogger(__name__)

RATING_ACTION = "issue_rating"  # payloads issue_rating:<1-5>:<reference>
RATING_PURPOSE = "issue_rating"
# Prompts whose next text reply is recorded on the issue.
COMMENT_PURPOSE = "issue_rating_comment"
NOT_FIXED_PURPOSE = "issue_not_fixed"
FOLLOW_UP_PURPOSES = (COMMENT_PURPOSE, NOT_FIXED_PURPOSE)
FOLLOW_UP_MAX_CHARS = 2000
FOLLOW_UP_WINDOW = datetime.timedelta(hours=12)


class FixCheckError(ValueError):
    """The answer does not apply now; the message says why (for the model's note)."""


def issues_answerable(conversation: Conversation) -> QuerySet[Issue]:
    """The issues whose questions this conversation answers: those reported in
    it, and those entered by hand for the tenant with this number (the
    question went to their conversation: ``status._tenant_notify``)."""
    return Issue.objects.filter(organization_id=conversation.organization_id).filter(
        Q(conversation=conversation)
        | Q(conversation__isnull=True, tenant__phone=conversation.phone)
        # Reported from a number that stopped being the tenant's: asked at their number now.
        | Q(conversation__retired_at__isnull=False, tenant__phone=conversation.phone)
    )


def _locked(conversation: Conversation, reference: str) -> Issue:
    issue = (
        issues_answerable(conversation)
        .select_for_update(of=("self",), no_key=True)
        .select_related("organization", "property")
        .filter(reference=reference)
        .first()
    )
    if issue is None:
        raise FixCheckError(f"no issue {reference} was reported in this conversation")
    return issue


def fix_answer_record(*, conversation: Conversation, reference: str, answer: str, words: str | None = None) -> str:
    """The tenant's Yes or No to "Is it fixed?". Returns what was done (for
    the turn's trace); raises FixCheckError when the issue is not waiting for
    that answer (answered already, reopened or closed by the landlord).
    ``words``, with No: what is still wrong, sent with the answer (recorded
    and sent to the manager); given, even empty, the tenant is not asked."""
    with transaction.atomic():
        issue = _locked(conversation, reference)
        if issue.status != Issue.Status.RESOLVED or issue.fix_asked_at is None or issue.fix_answer:
            raise FixCheckError(f"{reference} is not waiting for the tenant's answer to 'Is it fixed?' any more")
        language = language_of(conversation)
        issue.fix_answer, issue.fix_answered_at = answer, timezone.now()
        issue.save(update_fields=["fix_answer", "fix_answered_at"])
        if answer == "yes":
            IssueUpdate.objects.create(
                issue=issue,
                author=IssueUpdate.Author.TENANT,
                conversation=conversation,
                body="The tenant says it is fixed.",
            )
            if not clocks_running(issue):  # a clock still owed (the written summary) keeps it resolved
                issue_status_change(
                    issue=issue, status=Issue.Status.CLOSED, note="Closed: the tenant confirmed the fix."
                )
            outbound_choice_queue(
                conversation=conversation,
                body=text("rating", language),
                choices=[Choice(payload=f"{RATING_ACTION}:{n}:{reference}", title=str(n)) for n in range(1, 6)],
                purpose=RATING_PURPOSE,
                content_variables={"1": reference},
                language=language,
                author=Message.Author.SYSTEM,
            )
            return f"{reference}: the tenant says it is fixed; a rating asked"
        if answer != "no":
            raise FixCheckError(f"{answer!r} is not an answer to 'Is it fixed?'")
        issue_status_change(
            issue=issue, status=Issue.Status.OPEN, note="The tenant says it is not fixed.", tenant_told=False
        )
        back = contractor_back(issue)
        if words:
            _still_wrong_record(issue, conversation, words, more=f"The tenant answered No to 'Is it fixed?'. {back}")
            return (
                f"{reference}: the tenant says it is not fixed; reopened, and what is still wrong sent to the manager"
            )
        if words is None:
            _prompt(conversation, text("not_fixed", language, reference=reference), NOT_FIXED_PURPOSE, reference)
        then = "their next message will be added to it" if words is None else "the assistant is answering them"
        landlord_tell(
            organization=issue.organization,
            subject=f"[{reference}] The tenant says it is NOT fixed: reopened",
            body=f"{issue.title}\nProperty: {issue.property}\nThe tenant answered No to 'Is it fixed?'. "
            f"The issue is open again; {then}. {back}".strip(),
        )
        return f"{reference}: the tenant says it is not fixed; reopened and the manager alerted"


def rating_record(*, conversation: Conversation, reference: str, rating: int, words: str | None = None) -> str:
    """``words``: the comment, sent with the rating (recorded); given, even
    empty, no comment is invited."""
    with transaction.atomic():
        issue = _locked(conversation, reference)
        if issue.fix_answer != "yes" or issue.rating is not None:
            raise FixCheckError(f"{reference} is not waiting for a rating")
        if not 1 <= rating <= 5:
            raise FixCheckError(f"{rating} is not a rating from 1 to 5")
        issue.rating = rating
        issue.save(update_fields=["rating"])
        IssueUpdate.objects.create(
            issue=issue,
            author=IssueUpdate.Author.TENANT,
            conversation=conversation,
            body=f"The tenant rated the repair {rating}/5.",
        )
        if words:
            _comment_record(issue, conversation, words)
            return f"{reference}: rated {rating}/5; the tenant's comment recorded"
        if words is not None:
            return f"{reference}: rated {rating}/5"
        _prompt(conversation, text("comment", language_of(conversation)), COMMENT_PURPOSE, reference)
    return f"{reference}: rated {rating}/5; comment invited"


def _prompt(conversation: Conversation, body: str, purpose: str, reference: str) -> None:
    """A prompt whose next text reply ``follow_up_record`` puts on the issue."""
    message, *_ = outbound_text_queue(
        conversation=conversation, body=body, author=Message.Author.ASSISTANT, purpose=purpose
    )
    message.raw_payload = {**message.raw_payload, "issue": reference}
    message.save(update_fields=["raw_payload"])


def follow_up_record(*, conversation: Conversation, message: Message) -> str | None:
    """When the last thing said to the tenant before ``message`` (a text) was a
    prompt of ``FOLLOW_UP_PURPOSES`` sent at most ``FOLLOW_UP_WINDOW`` earlier:
    record it on the issue (the rating's comment, or what is still wrong,
    which the manager is sent) and return what was done, else None. The
    message still goes on to the turn: the model answers it, and a new
    problem in the same words is still reported."""
    body = (message.body or "").strip()
    if message.kind not in ("", "text") or not body:
        return None
    last = (
        Message.objects.filter(conversation=conversation, direction=Message.Direction.OUTBOUND, id__lt=message.pk)
        .exclude(author=Message.Author.SYSTEM)
        .order_by("-id")
        .first()
    )
    if last is None or (last.raw_payload or {}).get("purpose") not in FOLLOW_UP_PURPOSES:
        return None
    if message.created_at - last.created_at > FOLLOW_UP_WINDOW:
        return None
    answered_by = last.raw_payload.get("answered_by")
    if answered_by not in (None, message.pk):
        return None  # another message answered it
    reference = last.raw_payload.get("issue", "")
    issue = (
        issues_answerable(conversation).select_related("organization", "property").filter(reference=reference).first()
    )
    if issue is None:
        return None
    if answered_by == message.pk:
        # A turn run again (discarded, or the state moved under it): the same note, nothing recorded twice.
        return _follow_up_done(reference, last.raw_payload["purpose"])
    last.raw_payload = {**last.raw_payload, "answered_by": message.pk}
    last.save(update_fields=["raw_payload"])
    if last.raw_payload["purpose"] == COMMENT_PURPOSE:
        _comment_record(issue, conversation, body)
    else:
        _still_wrong_record(issue, conversation, body)
    return _follow_up_done(reference, last.raw_payload["purpose"])


def _comment_record(issue: Issue, conversation: Conversation, words: str) -> None:
    words = words.strip()[:FOLLOW_UP_MAX_CHARS]
    Issue.objects.filter(pk=issue.pk).update(rating_comment=words)
    IssueUpdate.objects.create(
        issue=issue, author=IssueUpdate.Author.TENANT, conversation=conversation, body=f"Comment: {words}"
    )


def _still_wrong_record(issue: Issue, conversation: Conversation, words: str, *, more: str = "") -> None:
    """What is still wrong after a repair: on the issue's history and to the
    manager (``more``: a line added to the manager's email)."""
    words = words.strip()[:FOLLOW_UP_MAX_CHARS]
    IssueUpdate.objects.create(
        issue=issue, author=IssueUpdate.Author.TENANT, conversation=conversation, body=f"Still wrong: {words}"
    )
    landlord_tell(
        organization=issue.organization,
        subject=f"[{issue.reference}] Not fixed, the tenant says: {words}",
        body=f"{issue.title}\nProperty: {issue.property}\nThe tenant says: {words}\n{more}".strip(),
        whatsapp=f"[{issue.reference}] Not fixed, the tenant says: {words}",
    )


def _follow_up_done(reference: str, purpose: str) -> str:
    if purpose == COMMENT_PURPOSE:
        return f"{reference}: the tenant's comment recorded"
    return f"{reference}: what is still wrong recorded and sent to the manager"


def fix_unanswered_close(*, now: datetime.datetime | None = None) -> int:
    """Beat: close resolved issues whose tenant did not answer "Is it fixed?"
    within ``ISSUE_FIX_CLOSE_DAYS`` (the answer becomes ``none``), and those
    whose tenant said Yes while a clock was still owed, once it no longer is.
    One with a clock still owed stays resolved, and its tenant can still
    answer. Returns how many were closed."""
    now = now or timezone.now()
    cutoff = now - datetime.timedelta(days=settings.ISSUE_FIX_CLOSE_DAYS)
    closed = 0
    with transaction.atomic():
        waiting = list(
            Issue.objects.select_for_update(skip_locked=True, no_key=True)
            .filter(status=Issue.Status.RESOLVED)
            .filter(
                Q(fix_answer="", fix_asked_at__lte=cutoff, fix_asked_at__gte=F("resolved_at"))  # asked for this one
                | Q(fix_answer="yes", fix_answered_at__gte=F("resolved_at"))  # Yes to this resolution
            )
            # Not those kept for an owed clock (they would be locked and read again every hour).
            .exclude(Exists(IssueClock.objects.filter(issue=OuterRef("pk"), met_at__isnull=True)))
        )
        for issue in waiting:
            if clocks_running(issue):  # a clock still owed keeps it resolved: closing would stop it
                continue
            note = "Closed: the tenant confirmed the fix, and no deadline is owed any more."
            if not issue.fix_answer:
                Issue.objects.filter(pk=issue.pk).update(fix_answer="none")
                note = f"No answer to 'Is it fixed?' in {settings.ISSUE_FIX_CLOSE_DAYS} days."
            issue_status_change(issue=issue, status=Issue.Status.CLOSED, note=note)
            closed += 1
    if closed:
        logger.info("closed %s resolved issues with no answer to 'Is it fixed?'", closed)
    return closed
