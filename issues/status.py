"""A landlord moves an issue along: acknowledge, schedule, resolve, close, reopen.

``issue_status_change`` is the one door for the admin actions and the API's
PATCH. It locks the issue row, checks the move against ``TRANSITIONS``,
records an IssueUpdate and tells the tenant over WhatsApp through
``outbound_text_queue(purpose="issue_update")``; the outbound task decides
whether that goes as text (inside the 24-hour window) or as the configured
template. The message is sent after the transaction commits.
"""

from __future__ import annotations

import datetime
import logging

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from conversations.models import Message
from conversations.opt_out import OPTED_OUT_CODE
from conversations.outbound import outbound_text_queue
from issues.deadlines import clocks_on_status
from issues.fix_question import fix_question_ask
from issues.models import Appointment, Issue, IssueClock, IssueUpdate, Job
from issues.selectors import contractor_conversation, tenant_conversation
from properties.working_time import zone_get

logger = logging.getLogger(__name__)

Status = Issue.Status

# Where an issue may go from each status. Scheduled -> scheduled is a new date.
TRANSITIONS: dict[str, frozenset[str]] = {
    Status.OPEN: frozenset({Status.ACKNOWLEDGED, Status.SCHEDULED, Status.RESOLVED, Status.CLOSED}),
    Status.ACKNOWLEDGED: frozenset({Status.SCHEDULED, Status.RESOLVED, Status.CLOSED}),
    # Back to acknowledged: the visit is off (missed, or another one needed) and a new one is being arranged.
    Status.SCHEDULED: frozenset({Status.ACKNOWLEDGED, Status.SCHEDULED, Status.RESOLVED, Status.CLOSED}),
    Status.RESOLVED: frozenset({Status.OPEN, Status.CLOSED}),
    Status.CLOSED: frozenset({Status.OPEN}),
}

# What the tenant is told. Closing is bookkeeping and tells the tenant nothing.
TENANT_TEXT: dict[str, str] = {
    Status.ACKNOWLEDGED: "Your landlord has seen your report and is arranging the next step.",
    Status.SCHEDULED: "The repair is booked for {date}.",
    Status.RESOLVED: "Your landlord has marked this as fixed. If the problem is still there, just reply here.",
    Status.OPEN: "Your report has been reopened and your landlord is looking at it again.",
}

NOTE_MAX_CHARS = 1000


class IssueStatusError(ValueError):
    """The requested change is not allowed; the message says why, for the user."""


def issue_status_change(
    *,
    issue: Issue,
    status: str,
    actor: User | None = None,
    scheduled_for: datetime.date | None = None,
    note: str = "",
    tenant_told: bool = True,
) -> IssueUpdate:
    """Move ``issue`` to ``status`` as ``actor`` (a user, or None for the
    system), record it and notify the tenant (unless ``tenant_told`` is
    False: the caller tells them itself). Resolving an issue from a
    conversation asks the tenant "Is it fixed?" (``issues/fix_question.py``).
    Raises IssueStatusError for a move that is not allowed, a missing or past
    date, or a note that is too long; nothing is changed then."""
    note = (note or "").strip()
    if status not in TRANSITIONS:
        raise IssueStatusError(f"Unknown status {status!r}.")
    if len(note) > NOTE_MAX_CHARS:
        raise IssueStatusError(f"The note is longer than {NOTE_MAX_CHARS} characters.")
    if status == Status.SCHEDULED:
        if scheduled_for is None:
            raise IssueStatusError("Scheduling needs a date.")
        if scheduled_for < issue_today(issue):
            raise IssueStatusError("The scheduled date is in the past.")
    elif scheduled_for is not None:
        raise IssueStatusError("Only scheduling takes a date.")

    with transaction.atomic():
        locked = (  # the lock issue_lock takes
            Issue.objects.select_for_update(of=("self",), no_key=True)
            .select_related("conversation", "tenant", "organization")
            .get(pk=issue.pk)
        )
        before = locked.status
        if status not in TRANSITIONS[before]:
            raise IssueStatusError(
                f"{locked.reference} is {locked.get_status_display().lower()}; it cannot become {status}."
            )
        if before == Status.SCHEDULED and status == Status.SCHEDULED and locked.scheduled_for == scheduled_for:
            raise IssueStatusError(f"{locked.reference} is already scheduled for {scheduled_for:%d %b %Y}.")

        now = timezone.now()
        locked.status = status
        if status != Status.OPEN and locked.acknowledged_at is None and actor is not None:
            # A person's first move: the dashboard's first response. The system's own moves (a visit the
            # tenant booked, a contractor's Fixed) are not the agency responding.
            locked.acknowledged_at = now
        if status == Status.SCHEDULED:
            locked.scheduled_for = scheduled_for
        if status == Status.ACKNOWLEDGED:
            locked.scheduled_for = None
        if status == Status.RESOLVED:
            locked.resolved_at = now
        if status == Status.OPEN:
            locked.resolved_at = None
            locked.scheduled_for = None
        locked.save(update_fields=["status", "acknowledged_at", "scheduled_for", "resolved_at", "updated_at"])
        clocks_on_status(issue=locked, status=status, at=now)
        # Closing stops the clocks still owed (a written summary the law asks for, say): the history says so.
        owed = list(IssueClock.objects.filter(issue=locked, met_at__isnull=True)) if status == Status.CLOSED else []
        if status in (Status.RESOLVED, Status.CLOSED):
            _jobs_close(locked, now=now)
        if before == Status.CLOSED and status == Status.OPEN:
            # Reopened after closing: the job that was done is over, so another contractor can be sent.
            Job.objects.filter(issue=locked, state=Job.State.ACCEPTED).update(
                state=Job.State.CANCELLED, responded_at=now
            )  # taken, as the dashboard reads a job cancelled after its answer was due

        author = IssueUpdate.Author.LANDLORD if actor is not None else IssueUpdate.Author.SYSTEM
        notified = _tenant_notify(issue=locked, status=status, note=note, author=author) if tenant_told else []
        update = IssueUpdate.objects.create(
            issue=locked,
            author=author,
            user=actor,
            body=_update_body(before=before, issue=locked, note=note, notified=notified, told=tenant_told, owed=owed),
        )

    # The caller's object reflects the change.
    for field in ("status", "acknowledged_at", "scheduled_for", "resolved_at", "updated_at"):
        setattr(issue, field, getattr(locked, field))
    logger.info("issue %s: %s -> %s by %s", locked.reference, before, status, getattr(actor, "pk", "system"))
    return update


def issue_today(issue: Issue) -> datetime.date:
    """Today in the organization's own time zone (a landlord in London at 00:30
    may schedule for 'today')."""
    return timezone.now().astimezone(zone_get(issue.organization.timezone)).date()


def tenant_text(*, issue: Issue, status: str, note: str = "") -> str:
    text = TENANT_TEXT[status].format(date=f"{issue.scheduled_for:%A %-d %B %Y}" if issue.scheduled_for else "")
    body = f"Update on your repair {issue.reference} ({issue.title}): {text}"
    if note:
        body += f"\nNote from your landlord: {note}"
    return body


def _jobs_close(issue: Issue, *, now: datetime.datetime) -> None:
    """An open offer and the visits still to come end when the issue is
    resolved or closed; both sides are told of a booked visit. An accepted job
    stays accepted: who did the work is kept."""
    offered = Job.objects.filter(issue=issue, state=Job.State.OFFERED)
    offered.filter(respond_by__lte=now).update(state=Job.State.EXPIRED, responded_at=now)  # lapsed before beat saw it
    offered.update(state=Job.State.CANCELLED, responded_at=now)
    visits_cancel(
        jobs=list(Job.objects.filter(issue=issue)),
        why=f"{issue.organization.name} has "
        + ("closed the repair" if issue.status == Status.CLOSED else "marked the repair as done"),
        now=now,
    )


def issue_lock(issue_id: int) -> None:
    """Lock the issue's row (FOR NO KEY UPDATE) in the caller's transaction.
    Whatever changes an issue, its jobs or its visits takes this lock before
    theirs, so two such changes never wait on each other's rows in opposite
    orders (a deadlock PostgreSQL ends by failing one)."""
    Issue.objects.select_for_update(no_key=True).filter(pk=issue_id).values_list("pk").first()


def visits_cancel(*, jobs: list[Job], why: str, now: datetime.datetime, started_too: bool = False) -> int:
    """The visits of ``jobs`` still to come end: times proposed or offered are
    withdrawn (a tenant who was offered times is told), and a visit already
    booked is cancelled with the tenant and the contractor told ``why`` ("Demo
    Lettings has closed the repair"). ``started_too``: a booked visit whose
    window has started, that nobody has said how it went, too (told while
    its window runs; one long over is cancelled without a word). Returns how
    many booked visits were cancelled."""
    offered = Issue.objects.filter(
        pk__in=Appointment.objects.filter(job__in=jobs, state=Appointment.State.OFFERED).values("job__issue_id")
    ).select_related("conversation", "tenant")
    for issue in offered:
        if conversation := tenant_conversation(issue):
            outbound_text_queue(
                conversation=conversation,
                body=f"The visit times offered for {issue.reference} are withdrawn: {why}.",
                purpose="appointment",
                author=Message.Author.SYSTEM,
            )
    Appointment.objects.filter(job__in=jobs, state__in=[Appointment.State.PROPOSED, Appointment.State.OFFERED]).update(
        state=Appointment.State.CANCELLED
    )
    booked_ones = Appointment.objects.filter(job__in=jobs, state=Appointment.State.BOOKED)
    if not started_too:
        booked_ones = booked_ones.filter(starts_at__gt=now)
    booked = list(booked_ones.select_related("job__contractor", "job__issue__organization", "job__issue__tenant"))
    Appointment.objects.filter(pk__in=[a.pk for a in booked]).update(state=Appointment.State.CANCELLED)
    for appointment in (a for a in booked if a.ends_at > now):  # one long over is cancelled, not announced
        issue, contractor = appointment.job.issue, appointment.job.contractor
        when = f"{appointment.starts_at.astimezone(zone_get(issue.organization.timezone)):%a %d %b %H:%M}"
        text = f"The visit for {issue.reference} on {when} is cancelled: {why}."
        sides = [tenant_conversation(issue), contractor_conversation(contractor) if contractor.whatsapp else None]
        for conversation in (c for c in sides if c is not None):
            outbound_text_queue(
                conversation=conversation, body=text, purpose="appointment", author=Message.Author.SYSTEM
            )
    return len(booked)


def _tenant_notify(*, issue: Issue, status: str, note: str, author: str) -> list[Message]:
    """Queue the WhatsApp message to the tenant. Prefers the conversation the
    issue came from; falls back to the tenant's phone for an issue entered by
    hand. Returns the queued messages (none when there is nobody to tell)."""
    if status not in TENANT_TEXT:
        return []
    body = tenant_text(issue=issue, status=status, note=note)
    message_author = Message.Author.LANDLORD if author == IssueUpdate.Author.LANDLORD else Message.Author.SYSTEM
    conversation = tenant_conversation(issue)
    if conversation is not None and status == Status.RESOLVED and not note:
        return [fix_question_ask(issue=issue, conversation=conversation, author=message_author)]
    if conversation is not None:
        notified = outbound_text_queue(
            conversation=conversation, body=body, author=message_author, purpose="issue_update"
        )
        if status == Status.RESOLVED:  # the note first, then the question
            notified.append(fix_question_ask(issue=issue, conversation=conversation, author=message_author))
        return notified
    if issue.tenant is not None and issue.tenant.phone:
        return outbound_text_queue(
            organization=issue.organization,
            to=issue.tenant.phone,
            tenant_id=issue.tenant.pk,
            body=body,
            author=message_author,
            purpose="issue_update",
        )
    return []


def _update_body(
    *, before: str, issue: Issue, note: str, notified: list[Message], told: bool, owed: list[IssueClock]
) -> str:
    line = f"Status {before} → {issue.status}"
    if issue.status == Status.SCHEDULED and issue.scheduled_for:
        line += f" for {issue.scheduled_for:%d %b %Y}"
    line += "."
    if note:
        line += f" Note: {note}"
    if owed:
        zone = zone_get(issue.organization.timezone)
        steps = ", ".join(f"{c.get_kind_display()} (due {c.due_at.astimezone(zone):%d %b %Y %H:%M})" for c in owed)
        line += f" Closed with deadlines not met, which stop now: {steps}."
    refused = [m for m in notified if m.error_code == OPTED_OUT_CODE]
    if refused:
        line += " Tenant not notified: they opted out of WhatsApp messages (STOP)."
    elif notified:
        line += f" Tenant notified over WhatsApp (message {', '.join(str(m.pk) for m in notified)})."
    elif issue.status in TENANT_TEXT and told:
        line += " Tenant not notified: no conversation or phone number on the issue."
    return line
