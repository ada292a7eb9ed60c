"""The written summary a significant hazard needs (Awaab's Law), drafted from
the issue and sent to the tenant.

After a significant hazard (damp and mould) is investigated, a social
landlord in England must give the tenant, within 3 working days, a written
summary: what the investigation found, what the landlord will do, by when,
and what happens next (the Hazards in Social Housing (Prescribed
Requirements) (England) Regulations 2025; the clock is
``ClockKind.SUMMARY_SENT`` of the Awaab's Law policy, ``issues/deadlines.py``).

``summary_draft`` writes a plain-text draft from what the issue holds: the
report, the findings (what the assistant saw in the tenant's photos, the
landlord's own notes in the history, when the investigation was recorded),
the open deadlines of the work still to do with their due times in the
organization's time zone, a booked date and the contractor, and the next
steps. It is deterministic (no language model) and in English only; the
landlord reads and edits it before it goes.

``summary_send`` sends the landlord's text once: over WhatsApp in the
tenant's conversation (purpose ``written_summary``: free text inside the
24-hour window; outside it the approved template ``WHATSAPP_TEMPLATES
["written_summary"]``, else ``generic``, with the text as its one variable),
by email when the tenant has an address, records it in the issue's history
with the whole text, and meets the written summary's clock when one is
running. The issue row is locked, so a double click sends nothing twice: the
same text already sent to the tenant on this issue is refused.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction

from conversations.delivery import session_window_open, template_for
from conversations.models import Conversation, Message
from conversations.opt_out import opt_out_refusal
from conversations.outbound import outbound_send_queue, outbound_text_queue, text_split
from issues.deadlines import ClockError, clock_meet
from issues.landlord import email_subject
from issues.models import ClockKind, Issue, IssueClock, IssueUpdate, Job
from issues.selectors import tenant_conversation
from properties.working_time import zone_get

SUMMARY_PURPOSE = "written_summary"  # the messages' purpose, and its template's key in WHATSAPP_TEMPLATES
# One WhatsApp message of the summary holds at most this much: outside the
# 24-hour window each goes as the approved template's one variable, and a
# WhatsApp template's body holds 1 024 characters, the template's own words
# included. Longer summaries go as several messages, numbered "(1/3)".
SUMMARY_PART_MAX_CHARS = 900
# The whole summary: about a page, at most a few WhatsApp messages.
SUMMARY_MAX_CHARS = 3000
# The history line that records a sent summary starts with this; the text follows a blank line.
SUMMARY_HISTORY_PREFIX = "Written summary sent to the tenant"

# How much of the tenant's and the landlord's words the draft quotes.
DESCRIPTION_MAX_CHARS = 400
FINDINGS_MAX_CHARS = 400
NOTE_MAX_CHARS = 300
NOTES_MAX = 3

# What each deadline still to meet means for the tenant ("We will ...").
ACTION_TEXT: dict[str, str] = {
    ClockKind.MADE_SAFE: "make your home safe",
    ClockKind.INVESTIGATED: "investigate the problem",
    ClockKind.WORKS_STARTED: "start the repair work",
    ClockKind.RESOLVED: "finish the repair",
}

# Lines the services write on the issue's history as the landlord (a status
# change, a job offered, a number linked, a summary sent) are not the
# landlord's notes; a recorded step's note is ("Investigated: damp behind the wardrobe").
_SERVICE_LINE = re.compile(
    r"^(?:Status \S+ → \S+|Job offered to |Job withdrawn from |Number \S+ linked by |" + SUMMARY_HISTORY_PREFIX + ")"
)
_STEP_RECORDED = re.compile(
    r"^(?P<step>.+?) recorded by .+? at .+?: (?:in time|.+? late)\.(?: Note: (?P<note>.+))?$", re.DOTALL
)


class SummaryError(ValueError):
    """The summary cannot be sent as asked; the message says why, for the user."""


@dataclass
class SummaryRecipients:
    """Where the summary goes: the tenant's conversation (or bare number) and email."""

    conversation: Conversation | None
    phone: str
    email: str

    @property
    def anyone(self) -> bool:
        return bool(self.conversation is not None or self.phone)


@dataclass
class SummarySent:
    update: IssueUpdate
    messages: list[Message] = field(default_factory=list)
    whatsapp_refusal: str = ""  # why nothing went over WhatsApp ("" when it did)
    emailed_to: str = ""
    clock_met: bool = False


def summary_recipients(*, issue: Issue) -> SummaryRecipients:
    """The conversation the issue came from, else the organization's
    conversation with the tenant's number, else the tenant's number alone;
    and the tenant's email."""
    tenant = issue.tenant
    conversation = tenant_conversation(issue)
    phone = conversation.phone if conversation is not None else (tenant.phone if tenant is not None else "")
    return SummaryRecipients(conversation=conversation, phone=phone, email=tenant.email if tenant is not None else "")


def summary_owed(*, issue: Issue) -> IssueClock | None:
    """The written summary's clock when it is running (not met), else None."""
    return IssueClock.objects.filter(issue=issue, kind=ClockKind.SUMMARY_SENT, met_at__isnull=True).first()


# --- the draft --------------------------------------------------------------------


def summary_draft(*, issue: Issue) -> str:
    """A plain-text written summary of ``issue`` for the tenant, in English,
    built only from what the issue holds (no language model): the same issue
    always gives the same draft. The landlord reviews and edits it: it quotes
    their notes on the issue's history, which may hold things not meant for
    the tenant."""
    zone = zone_get(issue.organization.timezone)
    clocks = list(IssueClock.objects.filter(issue=issue).order_by("due_at", "id"))
    sections = [
        f"Written summary of your repair {issue.reference} ({issue.title}), from {issue.organization.name}.",
        _reported(issue, zone),
        _findings(issue, clocks, zone),
        _actions(issue, clocks, zone),
        _next_steps(issue),
    ]
    return "\n\n".join(sections)


def _reported(issue: Issue, zone: datetime.tzinfo) -> str:
    what = issue.title + (f", {issue.location}" if issue.location else "")
    lines = ["What you reported", f"On {_day(issue.created_at, zone)} you reported: {what}."]
    if issue.description.strip():
        lines.append(f'You told us: "{_cut(issue.description, DESCRIPTION_MAX_CHARS)}"')
    return "\n".join(lines)


def _findings(issue: Issue, clocks: list[IssueClock], zone: datetime.tzinfo) -> str:
    lines = ["What we found"]
    investigated = next((c for c in clocks if c.kind == ClockKind.INVESTIGATED and c.met_at is not None), None)
    if investigated is not None and investigated.met_at is not None:
        lines.append(f"We investigated the problem on {_day(investigated.met_at, zone)}.")
    if issue.photo_findings.strip():
        lines.append(f"From your photos: {_cut(issue.photo_findings, FINDINGS_MAX_CHARS)}")
    lines += [f"- {note}" for note in _landlord_notes(issue)]
    if len(lines) == 1:
        lines.append("We are still looking into the problem and will tell you what we find.")
    return "\n".join(lines)


def _landlord_notes(issue: Issue) -> list[str]:
    """The landlord's own words on the history, newest ``NOTES_MAX``, oldest
    first: notes added to the history, and the notes given when a step was
    recorded. The services' own lines are left out."""
    notes = []
    updates = issue.updates.filter(author=IssueUpdate.Author.LANDLORD, user__isnull=False).order_by("created_at", "id")
    for body in updates.values_list("body", flat=True):
        body = body.strip()
        recorded = _STEP_RECORDED.match(body)
        if recorded is not None:
            if recorded.group("note"):
                notes.append(f"{recorded.group('step')}: {_cut(recorded.group('note'), NOTE_MAX_CHARS)}")
        elif body and not _SERVICE_LINE.match(body):
            notes.append(_cut(body, NOTE_MAX_CHARS))
    return notes[-NOTES_MAX:]


def _actions(issue: Issue, clocks: list[IssueClock], zone: datetime.tzinfo) -> str:
    lines = ["What we will do, and when"]
    for clock in clocks:
        if clock.met_at is None and clock.kind in ACTION_TEXT:
            lines.append(f"- We will {ACTION_TEXT[clock.kind]} by {_moment(clock.due_at, zone)}.")
    if issue.scheduled_for is not None and issue.is_open():
        lines.append(f"- The repair is booked for {issue.scheduled_for:%A %-d %B %Y}.")
    job = Job.objects.filter(issue=issue, state=Job.State.ACCEPTED).select_related("contractor").first()
    if job is not None:
        lines.append(f"- {job.contractor.name} will do the work.")
    if issue.status in (Issue.Status.RESOLVED, Issue.Status.CLOSED) and issue.resolved_at is not None:
        lines.append(f"- We recorded the repair as finished on {_day(issue.resolved_at, zone)}.")
    if len(lines) == 1:
        lines.append("We will tell you what work is needed and when it will be done.")
    return "\n".join(lines)


def _next_steps(issue: Issue) -> str:
    return "\n".join(
        [
            "Next steps",
            "We will keep you updated here. If you have a question, reply to this message and quote "
            f"{issue.reference}.",
            "If the problem gets worse, or anyone in your home becomes unwell because of it, tell us straight away "
            "by replying here, and we will look at it again.",
        ]
    )


def _day(moment: datetime.datetime, zone: datetime.tzinfo) -> str:
    return f"{moment.astimezone(zone):%A %-d %B %Y}"


def _moment(moment: datetime.datetime, zone: datetime.tzinfo) -> str:
    """'the end of Wednesday 6 January 2027' for a deadline at the end of a
    day (days' deadlines), else '16:00 on Saturday 19 December 2026'."""
    local = moment.astimezone(zone)
    if (local.hour, local.minute) == (23, 59):
        return f"the end of {_day(local, zone)}"
    return f"{local:%H:%M} on {_day(local, zone)}"


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# --- sending ----------------------------------------------------------------------


def summary_send(*, issue: Issue, text: str, user: Any) -> SummarySent:
    """Send ``text`` to the tenant of ``issue`` as the written summary, as
    ``user``: over WhatsApp (several numbered messages when it is long) and
    by email when the tenant has an address; a line in the issue's history
    with the whole text; the written summary's clock met if it is running.
    The messages and the email go after commit.

    Raises SummaryError, and changes nothing, when the text is empty or
    longer than ``SUMMARY_MAX_CHARS``, the issue has no tenant or
    conversation, this same text was sent on this issue already (a double
    click), or WhatsApp cannot carry it (the tenant opted out, or it is
    outside the 24-hour window with no template) and there is no email."""
    text = (text or "").replace("\r\n", "\n").strip()
    if not text:
        raise SummaryError("The summary is empty.")
    if len(text) > SUMMARY_MAX_CHARS:
        raise SummaryError(f"The summary is {len(text)} characters; at most {SUMMARY_MAX_CHARS} can be sent.")

    with transaction.atomic():
        # The issue first, as a status change and a clock's record lock it: two
        # sends of one issue wait for each other, and the second sees the first.
        locked = (
            Issue.objects.select_for_update(of=("self",), no_key=True)
            .select_related("organization", "tenant", "conversation")
            .get(pk=issue.pk)
        )
        recipients = summary_recipients(issue=locked)
        if not recipients.anyone:
            raise SummaryError(
                f"{locked.reference} has no tenant or conversation to send the summary to: "
                "add the tenant on the issue first."
            )
        earlier = (
            IssueUpdate.objects.filter(
                issue=locked, body__startswith=SUMMARY_HISTORY_PREFIX, body__endswith=f"\n\n{text}"
            )
            .order_by("-created_at")
            .first()
        )
        if earlier is not None:
            raise SummaryError(
                f"This summary was sent to the tenant already, at {_local(locked, earlier.created_at)}. "
                "Change it to send an updated one."
            )
        refusal = _whatsapp_refusal(locked, recipients)
        if refusal and not recipients.email:
            raise SummaryError(
                f"Not sent: {refusal}, and the tenant has no email address. Give the summary to the tenant "
                "another way (by post or by hand), then record it on the issue's deadlines."
            )
        messages = [] if refusal else _whatsapp_queue(locked, recipients, text)
        if recipients.email:
            _email(locked, recipients.email, text)
        who = (user.get_username() if user is not None else "") or "the system"
        update = IssueUpdate.objects.create(
            issue=locked,
            author=IssueUpdate.Author.LANDLORD if user is not None else IssueUpdate.Author.SYSTEM,
            user=user if user is not None and user.pk else None,
            body=f"{SUMMARY_HISTORY_PREFIX} by {who}: {_channels(messages, refusal, recipients.email)}.\n\n{text}",
        )
        clock_met = False
        if summary_owed(issue=locked) is not None:
            try:
                clock_meet(issue=locked, kind=ClockKind.SUMMARY_SENT, actor=user)
            except ClockError as error:
                raise SummaryError(str(error)) from None
            clock_met = True
    return SummarySent(
        update=update,
        messages=messages,
        whatsapp_refusal=refusal,
        emailed_to=recipients.email,
        clock_met=clock_met,
    )


def _whatsapp_refusal(issue: Issue, recipients: SummaryRecipients) -> str:
    """Why the summary cannot go over WhatsApp now ("" when it can): the
    tenant opted out, or it is outside the 24-hour window (a number that
    never wrote to us always is) with no template to carry it."""
    if not recipients.phone:
        return "the tenant has no WhatsApp number on record"
    refusal = opt_out_refusal(
        purpose=SUMMARY_PURPOSE,
        conversation=recipients.conversation,
        organization=issue.organization,
        to=recipients.phone,
    )
    if refusal:
        return "the tenant opted out of WhatsApp messages (STOP)"
    window_open = session_window_open(recipients.conversation) if recipients.conversation is not None else False
    if not window_open and not template_for(SUMMARY_PURPOSE):
        return (
            "it is outside WhatsApp's 24-hour window and no approved template is configured "
            f"(WHATSAPP_TEMPLATES '{SUMMARY_PURPOSE}' or 'generic')"
        )
    return ""


def _whatsapp_queue(issue: Issue, recipients: SummaryRecipients, text: str) -> list[Message]:
    """Store the summary's messages, numbered when there are several, and
    queue their sending in order, as one task, after commit."""
    parts = text_split(text, limit=SUMMARY_PART_MAX_CHARS - len("(99/99) "))
    if len(parts) > 1:
        parts = [f"({n}/{len(parts)}) {part}" for n, part in enumerate(parts, start=1)]
    target: dict[str, Any] = (
        {"conversation": recipients.conversation}
        if recipients.conversation is not None
        else {"organization": issue.organization, "to": recipients.phone, "tenant_id": issue.tenant_id}
    )
    messages = []
    for part in parts:
        messages += outbound_text_queue(
            body=part, author=Message.Author.LANDLORD, purpose=SUMMARY_PURPOSE, queue=False, **target
        )
    ids = [message.pk for message in messages]
    transaction.on_commit(lambda: outbound_send_queue(ids))
    return messages


def _email(issue: Issue, address: str, text: str) -> None:
    organization = issue.organization
    email = EmailMessage(
        subject=email_subject(f"Written summary of your repair {issue.reference}: {issue.title}"),
        body=text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[address],
        reply_to=[organization.notification_email] if organization.notification_email else None,
    )
    # robust: a mail server that refuses does not undo the committed record.
    transaction.on_commit(email.send, robust=True)


def _channels(messages: list[Message], refusal: str, email: str) -> str:
    sent = []
    if messages:
        sent.append(f"over WhatsApp (message {', '.join(str(m.pk) for m in messages)})")
    if email:
        sent.append(f"by email to {email}")
    line = " and ".join(sent)
    if refusal:
        line += f"; not over WhatsApp: {refusal}"
    return line


def _local(issue: Issue, moment: datetime.datetime) -> str:
    return f"{moment.astimezone(zone_get(issue.organization.timezone)):%a %d %b %Y %H:%M}"


def summary_last_sent(*, issue: Issue) -> datetime.datetime | None:
    """When a written summary was last sent on ``issue`` (None: never)."""
    return (
        IssueUpdate.objects.filter(issue=issue, body__startswith=SUMMARY_HISTORY_PREFIX)
        .order_by("-created_at")
        .values_list("created_at", flat=True)
        .first()
    )
