"""Dispatch: offering an issue's job to a contractor, and their answer.

The landlord picks a contractor from ``contractors_suggest`` (trade, area,
who is free) and offers the job (``job_offer``: admin page or API). The
contractor gets it over WhatsApp, with Accept / Decline buttons, and by
email. Their tap is read by the turn (``orchestration/contractor_turns.py``)
and applied by ``job_answer``. Accept assigns the job; Decline, or no answer
by ``respond_by`` (beat: ``jobs_expire``), goes back to the landlord with
the next suggestion. The landlord can take a live job back
(``job_withdraw``), and a contractor made inactive loses their open offers
(``contractor_offers_withdraw``). Every step is a line in the issue's history.
"""

from __future__ import annotations

import datetime
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from conversations.models import Conversation, Message
from conversations.outbound import Choice, outbound_choice_queue, outbound_text_queue
from issues.landlord import email_subject, landlord_tell
from issues.models import Appointment, Issue, IssueUpdate, Job
from issues.selectors import contractor_conversation
from issues.status import issue_lock, issue_status_change, visits_cancel
from properties.models import Contractor
from properties.working_time import zone_get

logger = logging.getLogger(__name__)

JOB_ACTION = "job"  # payloads job:accept:<job id>, job:decline:<job id>
JOB_PURPOSE = "job_offer"  # the offer, and its template's key in WHATSAPP_TEMPLATES
LIVE = (Job.State.OFFERED, Job.State.ACCEPTED)
# How an offer that is not open any more ended, in the contractor's refusal.
OFFER_OVER: dict[str, str] = {
    Job.State.ACCEPTED: "accepted already",
    Job.State.DECLINED: "declined already",
    Job.State.EXPIRED: "not open any more: it was not answered in time",
    Job.State.CANCELLED: "withdrawn",
}
ANSWER_HINT = "Reply 1 to Accept, 2 to Decline."


class DispatchError(ValueError):
    """The offer or answer is not possible now; the message says why."""


def postcode_district(postcode: str) -> str:
    """'LS6 2AB' -> 'LS6'; 'ls62ab' -> 'LS6'; '' when it is not a full UK postcode."""
    compact = re.sub(r"\s+", "", postcode or "").upper()
    match = re.fullmatch(r"([A-Z]{1,2}[0-9][A-Z0-9]?)([0-9][A-Z]{2})", compact)
    return match.group(1) if match else ""


def covers(contractor: Contractor, district: str) -> bool:
    """No areas: everywhere. A property whose postcode gives no district is
    covered only by those."""
    return not contractor.areas or (bool(district) and district in contractor.areas)


@dataclass
class Suggestion:
    contractor: Contractor
    score: int
    reasons: list[str] = field(default_factory=list)
    open_jobs: int = 0


def contractors_suggest(*, issue: Issue) -> list[Suggestion]:
    """The organization's active contractors ranked for ``issue``: trade
    matching its category (3), area covering its property's postcode district
    or no areas set (2), free of open jobs (1), then fewest open jobs, then
    name. Those who declined or let this issue's offer lapse come last."""
    district = postcode_district(issue.property.postcode)
    contractors = (
        Contractor.objects.filter(organization_id=issue.organization_id, active=True)
        .annotate(open_jobs=Count("jobs", filter=Q(jobs__state__in=LIVE, jobs__issue__status__in=Issue.OPEN_STATUSES)))
        .order_by("name")
    )
    passed = set(
        Job.objects.filter(issue=issue, state__in=[Job.State.DECLINED, Job.State.EXPIRED]).values_list(
            "contractor_id", flat=True
        )
    )
    suggestions = []
    for contractor in contractors:
        s = Suggestion(contractor=contractor, score=0, open_jobs=contractor.open_jobs)
        if issue.category in contractor.trades:
            s.score += 3
            s.reasons.append(f"does {issue.get_category_display().lower()}")
        if covers(contractor, district):
            s.score += 2
            s.reasons.append(f"covers {district or 'the area'}" if contractor.areas else "covers every area")
        if not contractor.open_jobs:
            s.score += 1
            s.reasons.append("free")
        else:
            s.reasons.append(f"{contractor.open_jobs} open job{'s' if contractor.open_jobs > 1 else ''}")
        if contractor.pk in passed:
            s.score -= 10
            s.reasons.append("passed on this job")
        suggestions.append(s)
    return sorted(suggestions, key=lambda s: (-s.score, s.open_jobs, s.contractor.name))


def _offer_text(issue: Issue, job: Job) -> str:
    photos = issue.photos.count()
    lines = [
        f"New job {issue.reference} from {issue.organization.name}: {issue.title}",
        f"Address: {issue.property.address}, {issue.property.postcode}".rstrip(", "),
        f"Urgency: {issue.get_urgency_display()}. Where: {issue.location or 'not said'}.",
        f"The tenant says: {issue.description[:500]}",
    ]
    if issue.property.access_notes:
        lines.append(f"Access: {issue.property.access_notes}")
    if photos:
        lines.append(f"{photos} photo{'s' if photos > 1 else ''} by email.")
    if job.contractor.callout_limit is not None:
        lines.append(f"Call-out limit without asking: {job.contractor.callout_limit}.")
    lines.append(f"Please answer by {_when(issue, job.respond_by)}. {ANSWER_HINT}")
    return "\n".join(lines)


def respond_by_from(start: datetime.datetime, *, issue: Issue) -> datetime.datetime:
    """When an offer made at ``start`` lapses: ``DISPATCH_RESPONSE_HOURS``
    counted only in the contractor's waking day (``DISPATCH_DAY_STARTS_HOUR``
    to ``DISPATCH_DAY_ENDS_HOUR`` in the organization's time zone), so an offer
    made at 21:30 is not lapsed by 01:30; an emergency's in calendar hours."""
    remaining = datetime.timedelta(hours=settings.DISPATCH_RESPONSE_HOURS)
    if issue.urgency == Issue.Urgency.EMERGENCY:
        return start + remaining
    zone = zone_get(issue.organization.timezone)
    day = start.astimezone(zone).date()
    moment = start.astimezone(zone)
    for _ in range(366):
        opens = datetime.datetime.combine(day, datetime.time(settings.DISPATCH_DAY_STARTS_HOUR), tzinfo=zone)
        closes = datetime.datetime.combine(day, datetime.time(settings.DISPATCH_DAY_ENDS_HOUR), tzinfo=zone)
        moment = max(moment, opens)
        if moment < closes:
            if remaining <= closes - moment:
                return (moment + remaining).astimezone(datetime.UTC)
            remaining -= closes - moment
        day += datetime.timedelta(days=1)
    raise ValueError("the dispatch day has no hours (DISPATCH_DAY_STARTS_HOUR >= DISPATCH_DAY_ENDS_HOUR)")


def job_live(issue: Issue) -> Job | None:
    """The issue's job offered or accepted, with its contractor (at most one: a database constraint)."""
    return Job.objects.filter(issue=issue, state__in=LIVE).select_related("contractor").first()


def job_offer(*, issue: Issue, contractor: Contractor, actor: Any = None) -> Job:
    """Offer ``issue``'s job to ``contractor`` (of the issue's organization).
    Raises DispatchError when the issue is done, already has a contractor
    offered or assigned, or the contractor cannot be reached."""
    with transaction.atomic():
        issue = (
            Issue.objects.select_for_update(of=("self",), no_key=True)
            .select_related("property", "organization")
            .get(pk=issue.pk)
        )
        if contractor.organization_id != issue.organization_id or not contractor.active:
            raise DispatchError("Choose an active contractor of the issue's organization.")
        if not issue.is_open():
            raise DispatchError(f"{issue.reference} is {issue.get_status_display().lower()}: reopen it first.")
        live = job_live(issue)
        if live is not None:
            raise DispatchError(
                f"{issue.reference} is already {live.get_state_display().lower()} by {live.contractor.name}."
            )
        if not contractor.whatsapp and not contractor.email:
            raise DispatchError(f"{contractor.name} has no WhatsApp number or email to send the job to.")
        now = timezone.now()
        job = Job.objects.create(
            issue=issue,
            contractor=contractor,
            offered_by=actor if actor is not None and actor.pk else None,
            offered_at=now,
            respond_by=respond_by_from(now, issue=issue),
        )
        body = _offer_text(issue, job)
        if contractor.whatsapp:
            outbound_choice_queue(
                conversation=contractor_conversation(contractor),
                body=body,
                choices=[
                    Choice(payload=f"{JOB_ACTION}:accept:{job.pk}", title="Accept"),
                    Choice(payload=f"{JOB_ACTION}:decline:{job.pk}", title="Decline"),
                ],
                purpose=JOB_PURPOSE,
                content_variables={"1": f"{issue.reference}: {issue.title}", "2": str(job.pk)},
                author=Message.Author.SYSTEM,
            )
        if contractor.email:
            _offer_email(issue, contractor, body)
        who = (actor.get_username() if actor is not None else "") or "the system"
        IssueUpdate.objects.create(
            issue=issue,
            author=IssueUpdate.Author.LANDLORD if actor is not None else IssueUpdate.Author.SYSTEM,
            user=actor if actor is not None and actor.pk else None,
            body=f"Job offered to {contractor.name} by {who}; answer due {_when(issue, job.respond_by)}.",
        )
    return job


def _offer_email(issue: Issue, contractor: Contractor, body: str) -> None:
    photos = [p.media for p in issue.photos.select_related("media") if p.media.file]
    email = EmailMessage(
        subject=email_subject(f"New job {issue.reference}: {issue.title}"),
        body=body.replace(ANSWER_HINT, "Answer on WhatsApp, or call the agency."),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[contractor.email],
    )
    for media in photos:
        try:
            with media.file.open("rb") as handle:
                email.attach((media.file.name or "photo").rsplit("/", 1)[-1], handle.read(), media.content_type or None)
        except OSError:
            logger.warning("photo %s of %s missing from storage: offered without it", media.pk, issue.reference)
    # robust: a mail server that refuses does not turn the committed offer into an error page.
    transaction.on_commit(email.send, robust=True)


def _when(issue: Issue, moment: datetime.datetime) -> str:
    return f"{moment.astimezone(zone_get(issue.organization.timezone)):%a %d %b %H:%M}"


def landlord_note(issue: Issue, tell: str) -> None:
    """Tell the landlord ``tell`` about ``issue`` (email and WhatsApp)."""
    landlord_tell(organization=issue.organization, subject=f"[{issue.reference}] {tell}", body=f"{issue.title}\n{tell}")


def message_pass_on(contractor: Contractor, words: str) -> None:
    """A contractor's message that is not an answer goes to the landlord."""
    words = words or "(a message with no text)"
    landlord_tell(
        organization=contractor.organization,
        subject=f"Message from {contractor.name}: {words}",
        body=f"{contractor.name} ({contractor.whatsapp}) wrote:\n{words}",
        whatsapp=f"Message from {contractor.name}: {words}",
    )


def _reachable(issue: Issue) -> list[Suggestion]:
    return [
        s
        for s in contractors_suggest(issue=issue)
        if s.score >= 0 and (s.contractor.whatsapp or s.contractor.email)  # not passed on it, and reachable
    ]


def next_suggestion_text(issue: Issue) -> str:
    ranked = _reachable(issue)
    if not ranked:
        return "No other active contractor is on record: add one, or arrange it yourself."
    best = ranked[0]
    return f"Next suggestion: {best.contractor.name} ({', '.join(best.reasons)})."


def dispatch_auto(issue: Issue, *, tell_landlord: bool = False) -> str:
    """With the organization's ``auto_dispatch`` on, offer a routine or urgent
    issue from a known tenant to the best-placed reachable contractor of its
    trade, at most ``DISPATCH_AUTO_MAX_OFFERS`` times per issue. Returns what
    was done ('' when nothing was tried); ``tell_landlord``: also tell them
    when it could not be offered (a new issue; after a decline or lapse the
    caller's notice says it)."""
    automatic = issue.organization.auto_dispatch and issue.urgency != Issue.Urgency.EMERGENCY
    # An unverified number names an address it may not live at: a person checks it before anyone is sent.
    if not automatic or issue.tenant_unverified or not issue.is_open():
        return ""
    # Sent without a person looking: only to one whose trade and area both fit, and who can answer
    # (an offer is accepted on WhatsApp; one by email alone would only lapse and use up an offer).
    district = postcode_district(issue.property.postcode)
    fitting = [s for s in _reachable(issue) if issue.category in s.contractor.trades and covers(s.contractor, district)]
    trade = [s for s in fitting if s.contractor.whatsapp]
    if Job.objects.filter(issue=issue).count() >= settings.DISPATCH_AUTO_MAX_OFFERS:
        said = f"Offered {settings.DISPATCH_AUTO_MAX_OFFERS} times already: please arrange it yourself."
    elif not trade:
        by_email = ", ".join(s.contractor.name for s in fitting)
        said = (
            f"No contractor of that trade covering {district or 'the area'} is left to offer it to"
            + (f" on WhatsApp ({by_email}: email only, so offer it to them yourself)" if by_email else "")
            + ": please arrange it yourself."
        )
    else:
        job_offer(issue=issue, contractor=trade[0].contractor)
        return f"Offered automatically to {trade[0].contractor.name}."
    if tell_landlord:
        landlord_note(issue, f"Not sent to a contractor automatically. {said}")
    return said


def job_answer(*, conversation: Conversation, job_id: int, accept: bool) -> str:
    """The contractor's Accept or Decline, from their own number. Returns what
    was done (for the turn's trace); raises DispatchError when the offer is
    not theirs or not open any more."""
    with transaction.atomic():
        if issue_id := Job.objects.filter(pk=job_id).values_list("issue_id", flat=True).first():
            issue_lock(issue_id)
        job = (
            Job.objects.select_for_update(of=("self",))
            .select_related("issue__organization", "issue__property", "contractor")
            .filter(
                pk=job_id, issue__organization_id=conversation.organization_id, contractor__whatsapp=conversation.phone
            )
            .first()
        )
        if job is None:
            raise DispatchError("no such job was offered to this number")
        issue, contractor = job.issue, job.contractor
        if not issue.is_open():
            raise DispatchError(f"{issue.reference} is {issue.get_status_display().lower()}")
        if job.state == Job.State.EXPIRED and accept and job_live(issue) is None:
            # Too late, but willing, and nobody else has it: the landlord may still want them, and decides.
            line = f"{contractor.name} tapped Accept after the offer lapsed."
            outbound_text_queue(
                conversation=conversation,
                body=f"Sorry, the offer of {issue.reference} lapsed at {_when(issue, job.respond_by)}. "
                f"I've told {issue.organization.name} you would still take it.",
                purpose="dispatch",
            )
            if not IssueUpdate.objects.filter(issue=issue, body=line).exists():  # told once, however often tapped
                IssueUpdate.objects.create(issue=issue, author=IssueUpdate.Author.SYSTEM, body=line)
                landlord_note(issue, f"{contractor.name} tapped Accept for {issue.reference} after the offer lapsed.")
            return f"{issue.reference}: {contractor.name} accepted after the offer lapsed"
        if job.state != Job.State.OFFERED:
            raise DispatchError(f"the offer of {issue.reference} is {OFFER_OVER[job.state]}")
        job.state = Job.State.ACCEPTED if accept else Job.State.DECLINED
        job.responded_at = timezone.now()
        job.save(update_fields=["state", "responded_at"])
        verb = "accepted" if accept else "declined"
        IssueUpdate.objects.create(
            issue=issue, author=IssueUpdate.Author.SYSTEM, body=f"{contractor.name} {verb} the job."
        )
        if accept:
            # The offer may have gone as a short template: the details now, inside the window the tap opened.
            details = _offer_text(issue, job).replace(
                f"Please answer by {_when(issue, job.respond_by)}. {ANSWER_HINT}", ""
            )
            reply = f"Thanks, {issue.reference} is yours. Next I'll ask you for times to visit.\n{details.strip()}"
            tell = f"{contractor.name} accepted {issue.reference}."
        else:
            reply = f"Thanks for letting us know. {issue.reference} has gone back to {issue.organization.name}."
            tell = (
                f"{contractor.name} declined {issue.reference}. {dispatch_auto(issue) or next_suggestion_text(issue)}"
            )
        outbound_text_queue(conversation=conversation, body=reply, purpose="dispatch")
        landlord_note(issue, tell)
    return f"{issue.reference}: {contractor.name} {verb}"


def job_withdraw(*, job: Job, actor: Any = None, reason: str = "") -> Job:
    """The landlord takes back a job offered or accepted (a contractor who went
    quiet after accepting, the wrong trade): it is cancelled, its visits still
    to come end with both sides told, the contractor is told, and the issue can
    be offered again. Raises DispatchError when the job is not live."""
    reason = reason.strip()
    with transaction.atomic():
        issue_lock(job.issue_id)
        job = (
            Job.objects.select_for_update(of=("self",))
            .select_related("issue__organization", "issue__property", "contractor")
            .get(pk=job.pk)
        )
        issue, contractor = job.issue, job.contractor
        if job.state not in LIVE:
            raise DispatchError(f"The job is {job.get_state_display().lower()} already: there is nothing to withdraw.")
        now = timezone.now()
        job.state = Job.State.CANCELLED
        job.responded_at = job.responded_at or now
        job.save(update_fields=["state", "responded_at"])
        # A visit whose window has started is off too: the withdrawn contractor is asked nothing about it.
        cancelled = visits_cancel(
            jobs=[job], why=f"{issue.organization.name} has withdrawn the job", now=now, started_too=True
        )
        booked = Appointment.objects.filter(job__issue=issue, state=Appointment.State.BOOKED)
        if cancelled and issue.status == Issue.Status.SCHEDULED and not booked.exists():
            # Scheduled for the visit just cancelled: the next contractor's times are asked for and read again.
            person = actor if actor is not None and actor.pk else None
            issue_status_change(issue=issue, status=Issue.Status.ACKNOWLEDGED, actor=person, tenant_told=False)
        told = f"{issue.organization.name} has withdrawn job {issue.reference} ({issue.title})."
        if reason:
            told += f" {reason}"
        if contractor.whatsapp:
            outbound_text_queue(
                conversation=contractor_conversation(contractor),
                body=told,
                purpose="dispatch",
                author=Message.Author.SYSTEM,
            )
        elif contractor.email:
            transaction.on_commit(lambda: _tell_by_email(contractor, f"[{issue.reference}] Job withdrawn", told))
        who = (actor.get_username() if actor is not None else "") or "the system"
        IssueUpdate.objects.create(
            issue=issue,
            author=IssueUpdate.Author.LANDLORD if actor is not None else IssueUpdate.Author.SYSTEM,
            user=actor if actor is not None and actor.pk else None,
            body=f"Job withdrawn from {contractor.name} by {who}." + (f" {reason}" if reason else ""),
        )
    return job


def _tell_by_email(contractor: Contractor, subject: str, body: str) -> None:
    try:
        EmailMessage(subject=email_subject(subject), body=body, to=[contractor.email]).send()
    except Exception:  # the withdrawal stands; the history shows it
        logger.exception("could not email contractor %s", contractor.pk)


def contractor_offers_withdraw(*, contractor: Contractor) -> int:
    """A contractor made inactive keeps no open offer: each goes back to the
    landlord with the next suggestion (a job they accepted stays theirs until
    the landlord withdraws it). Returns how many."""
    withdrawn = 0
    for job in Job.objects.filter(contractor=contractor, state=Job.State.OFFERED).select_related("issue"):
        try:
            job_withdraw(job=job, reason=f"{contractor.name} is no longer active.")
        except DispatchError:
            continue  # answered or lapsed meanwhile
        withdrawn += 1
        landlord_note(
            job.issue,
            f"{contractor.name} was made inactive: the offer of {job.issue.reference} is withdrawn. "
            f"{dispatch_auto(job.issue) or next_suggestion_text(job.issue)}",
        )
    return withdrawn


def jobs_locked_each(due: QuerySet[Job]) -> Iterator[Job]:
    """Each job of ``due`` in a transaction of its own, its issue locked first
    (``issue_lock``, as every change to an issue's jobs and visits), then the
    job, read again there: one another run took meanwhile, or no longer due, is
    skipped (beat's passes over many jobs)."""
    for job_id, issue_id in due.order_by("pk").values_list("pk", "issue_id"):
        with transaction.atomic():
            issue_lock(issue_id)
            job = (
                due.select_for_update(of=("self",), skip_locked=True)
                .select_related("issue__organization", "issue__property", "contractor")
                .filter(pk=job_id)
                .first()
            )
            if job is not None:
                yield job


def jobs_expire(*, now: datetime.datetime | None = None) -> int:
    """Beat: offers nobody answered by ``respond_by`` lapse; the landlord gets
    the next suggestion and the contractor is told. Each in its own
    transaction, its issue locked first (``jobs_locked_each``). Returns how many."""
    now = now or timezone.now()
    due = Job.objects.filter(state=Job.State.OFFERED, respond_by__lte=now)
    lapsed = 0
    for job in jobs_locked_each(due):
        Job.objects.filter(pk=job.pk).update(state=Job.State.EXPIRED, responded_at=now)
        issue, contractor = job.issue, job.contractor
        IssueUpdate.objects.create(
            issue=issue,
            author=IssueUpdate.Author.SYSTEM,
            body=f"{contractor.name} did not answer the offer in time.",
        )
        tell = f"{contractor.name} did not answer for {issue.reference}."
        if issue.is_open():  # nobody is suggested for a repair already done
            tell += f" {dispatch_auto(issue) or next_suggestion_text(issue)}"
        landlord_note(issue, tell)
        if contractor.whatsapp:
            outbound_text_queue(
                conversation=contractor_conversation(contractor),
                body=f"The offer of {issue.reference} has lapsed; no need to reply.",
                purpose="dispatch",
            )
        lapsed += 1
    return lapsed
