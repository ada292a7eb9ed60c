"""Booking the visit, once a contractor has accepted a job.

1. ``slots_ask``: the contractor gets a list of half-day windows inside their
   working days and hours (``slots_free``: the next working days of the
   organization, public holidays and their booked visits left out). They tap
   up to ``APPOINTMENT_SLOTS_MAX`` (``slot_propose``; "Send these" sends fewer),
   or write them ("tues 9 or weds 2pm"), read by a small scripted grammar
   (``issues/visit_times.py``); a typed message is their whole proposal. Text it cannot read is passed on
   to the landlord, and the contractor is shown the list again.
2. ``slots_offer``: the tenant picks one from a list (or "None of these": the
   contractor is asked for other times and the landlord told). Times the
   tenant left until every one had started lapse the same way (beat).
3. ``visit_pick``: booked. Both get a confirmation with a link to the visit's
   ``.ics`` (``issues/calendar.py``); their emails carry it attached.
4. Beat (``appointments_check``): a reminder to both the day before; once
   the window has passed, the tenant is asked "Did they come?" and the
   contractor "How did it go?" (``visit_report``); if neither answers within
   ``APPOINTMENT_UNANSWERED_HOURS``, the landlord is told once. The first "No" or
   "Couldn't get in" marks it missed, tells the landlord and asks the
   contractor for new times; "Fixed" resolves the issue, which asks the
   tenant "Is it fixed?"; "Another visit" asks for times again.

Every step is a line in the issue's history. Texts are in English.
"""

from __future__ import annotations

import datetime
import itertools
from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.urls import reverse
from django.utils import timezone

from conversations.models import Conversation, Message
from conversations.outbound import Choice, outbound_choice_queue, outbound_text_queue
from issues.calendar import ICS_SALT, visit_ics
from issues.dispatch import DispatchError, job_answer, jobs_locked_each, landlord_note, message_pass_on
from issues.landlord import email_subject
from issues.models import Appointment, Issue, IssueUpdate, Job
from issues.selectors import contractor_conversation, tenant_conversation
from issues.status import IssueStatusError, issue_lock, issue_status_change
from issues.visit_times import times_read
from properties.models import Contractor
from properties.working_time import public_holiday, zone_get

SLOT_ACTION = "slot"  # the contractor's: slot:<start>-<end>:<job id>, slot:send:<job id>
VISIT_ACTION = "visit"  # the tenant's pick (visit:pick:<appointment>, visit:none:<job>); after it, either side's
# visit:came:<appointment> / visit:missed:<appointment>
SLOTS_PURPOSE = "appointment_slots"  # to the contractor; with a list-picker template in WHATSAPP_TEMPLATES
OFFER_PURPOSE = "appointment_offer"  # to the tenant
VISIT_PURPOSE = "appointment"  # confirmations, reminders, "did it happen?"
STAMP = "%Y%m%d%H%M"  # a payload's UTC times
NOON = datetime.time(12, 0)


class AppointmentError(DispatchError):
    """The answer does not apply now; the message says why."""


@dataclass(frozen=True)
class Window:
    starts: datetime.datetime
    ends: datetime.datetime

    def payload(self, job_id: int) -> str:
        stamps = f"{self.starts.astimezone(datetime.UTC):{STAMP}}-{self.ends.astimezone(datetime.UTC):{STAMP}}"
        return f"{SLOT_ACTION}:{stamps}:{job_id}"


def window_parse(value: str) -> Window | None:
    """The window of a payload's value, or None when it is not one."""
    try:
        starts, ends = (
            datetime.datetime.strptime(part, STAMP).replace(tzinfo=datetime.UTC) for part in value.split("-", 1)
        )
    except ValueError:
        return None
    return Window(starts, ends) if ends > starts else None


def window_text(window: Window, zone: datetime.tzinfo) -> str:
    """'Tue 1 Dec 08:00-12:00' in the organization's time."""
    starts, ends = window.starts.astimezone(zone), window.ends.astimezone(zone)
    return f"{starts:%a} {starts.day} {starts:%b %H:%M}-{ends:%H:%M}"


def _zone(issue: Issue) -> datetime.tzinfo:
    return zone_get(issue.organization.timezone)


def slots_free(contractor: Contractor, *, issue: Issue, now: datetime.datetime) -> list[Window]:
    """Half-day windows (start to noon, noon to end) on the contractor's next
    ``APPOINTMENT_DAYS_AHEAD`` working days from tomorrow (their own days,
    less the organization's public holidays), leaving out their booked
    visits; at most ``APPOINTMENT_SLOTS_LISTED``."""
    zone = _zone(issue)
    booked = [
        (a.starts_at, a.ends_at)
        for a in Appointment.objects.filter(
            job__contractor=contractor, state=Appointment.State.BOOKED, ends_at__gt=now
        ).only("starts_at", "ends_at")
    ]
    bounds = sorted(
        {contractor.work_starts, contractor.work_ends, max(min(NOON, contractor.work_ends), contractor.work_starts)}
    )
    windows: list[Window] = []
    day, days = now.astimezone(zone).date(), 0
    for _ in range(28):
        day += datetime.timedelta(days=1)
        if day.weekday() not in contractor.working_days or public_holiday(
            day, country=issue.organization.country, region=issue.organization.holiday_region
        ):
            continue
        for first, second in itertools.pairwise(bounds):
            window = Window(
                datetime.datetime.combine(day, first, tzinfo=zone), datetime.datetime.combine(day, second, tzinfo=zone)
            )
            if not any(s < window.ends and e > window.starts for s, e in booked):
                windows.append(window)
        days += 1
        if days >= settings.APPOINTMENT_DAYS_AHEAD or len(windows) >= settings.APPOINTMENT_SLOTS_LISTED:
            break
    return windows[: settings.APPOINTMENT_SLOTS_LISTED]


def slots_ask(job: Job, *, note: str = "", now: datetime.datetime | None = None) -> Message | None:
    """Ask the contractor for visit times (inside the caller's transaction)."""
    now = now or timezone.now()
    issue, contractor = job.issue, job.contractor
    if not contractor.whatsapp:
        landlord_note(issue, f"{contractor.name} has no WhatsApp number: agree the visit with them yourself.")
        return None
    proposed = list(job.appointments.filter(state=Appointment.State.PROPOSED))
    taken = {(a.starts_at, a.ends_at) for a in proposed}
    windows = [w for w in slots_free(contractor, issue=issue, now=now) if (w.starts, w.ends) not in taken]
    zone = _zone(issue)
    choices = [Choice(payload=w.payload(job.pk), title=window_text(w, zone)) for w in windows]
    if proposed:
        choices.insert(0, Choice(payload=f"{SLOT_ACTION}:send:{job.pk}", title=f"Send {len(proposed)} to tenant"))
    lines = [c.title for c in choices]
    body = (
        (f"{note}\n" if note else "")
        + f"When can you visit {issue.property.address} for {issue.reference}? Pick up to "
        f"{settings.APPOINTMENT_SLOTS_MAX} times, one at a time, or write them "
        + (
            f"after its reference (e.g. '{issue.reference} Tue 9am, Wed 2pm').\n"
            if _holds_another(contractor.whatsapp, issue.organization_id, [job.pk])
            else "(e.g. 'Tue 9am, Wed 2pm').\n"
        )
        + "\n".join(f"{n}. {line}" for n, line in enumerate(lines, 1))
    )
    return outbound_choice_queue(
        conversation=contractor_conversation(contractor),
        body=body,
        choices=choices,
        purpose=SLOTS_PURPOSE,
        content_variables={"1": issue.reference, "2": str(job.pk)},
        author=Message.Author.SYSTEM,
    )


def job_reply(*, conversation: Conversation, job_id: int, accept: bool) -> str:
    """The contractor's Accept or Decline (``dispatch.job_answer``); on
    Accept they are asked for visit times in the same transaction."""
    with transaction.atomic():
        done = job_answer(conversation=conversation, job_id=job_id, accept=accept)
        job = Job.objects.select_related("issue__organization", "issue__property", "contractor").get(pk=job_id)
        if job.state == Job.State.ACCEPTED:  # not a tap after the offer lapsed
            slots_ask(job)
    return done


def contractor_back(issue: Issue) -> str:
    """The tenant says the repair is not fixed: with the organization's auto
    dispatch on, the contractor who did it is asked for times to come back
    (inside the caller's transaction). Returns what was done, '' for nothing."""
    if not issue.organization.auto_dispatch:
        return ""
    job = (
        Job.objects.filter(issue=issue, state=Job.State.ACCEPTED)
        .select_related("contractor", "issue__organization", "issue__property")
        .first()
    )
    if job is None or not job.contractor.whatsapp:
        return ""
    slots_ask(job, note=f"The tenant of {issue.reference} says it is not fixed. When can you come back?")
    return f"{job.contractor.name} is asked to come back."


def _job_locked(conversation: Conversation, job_id: int) -> Job:
    if issue_id := Job.objects.filter(pk=job_id).values_list("issue_id", flat=True).first():
        issue_lock(issue_id)  # before the job and its visits, as every change to an issue does
    job = (
        Job.objects.select_for_update(of=("self",))
        .select_related("issue__organization", "issue__property", "issue__conversation", "issue__tenant", "contractor")
        .filter(pk=job_id, issue__organization_id=conversation.organization_id)
        .first()
    )
    if job is None:
        raise AppointmentError("no such job")
    if job.state != Job.State.ACCEPTED:
        raise AppointmentError(f"the job on {job.issue.reference} is {job.get_state_display().lower()}")
    if not job.issue.is_open():
        raise AppointmentError(f"{job.issue.reference} is {job.issue.get_status_display().lower()}")
    return job


def _contractors_job(conversation: Conversation, job_id: int) -> Job:
    job = _job_locked(conversation, job_id)
    if job.contractor.whatsapp != conversation.phone:
        raise AppointmentError("that job is not this number's")
    if job.appointments.filter(state__in=[Appointment.State.OFFERED, Appointment.State.BOOKED]).exists():
        raise AppointmentError(f"times for {job.issue.reference} have gone to the tenant already")
    return job


def _window_check(window: Window, now: datetime.datetime) -> str:
    if window.starts <= now:
        return "that time has passed"
    if window.starts > now + datetime.timedelta(days=settings.APPOINTMENT_HORIZON_DAYS):
        return f"that is more than {settings.APPOINTMENT_HORIZON_DAYS} days ahead"
    return ""


def slot_propose(*, conversation: Conversation, job_id: int, window: Window) -> str:
    """The contractor tapped a time. At ``APPOINTMENT_SLOTS_MAX`` proposed,
    they go to the tenant; before, the contractor is shown the rest."""
    now = timezone.now()
    with transaction.atomic():
        job = _contractors_job(conversation, job_id)
        refused = _window_check(window, now)
        if refused:
            raise AppointmentError(refused)
        Appointment.objects.get_or_create(
            job=job, starts_at=window.starts, ends_at=window.ends, state=Appointment.State.PROPOSED
        )
        count = job.appointments.filter(state=Appointment.State.PROPOSED).count()
        if count >= settings.APPOINTMENT_SLOTS_MAX:
            return slots_offer(job)
        slots_ask(job, note=f"Noted: {window_text(window, _zone(job.issue))}.", now=now)
    return f"{job.issue.reference}: {count} time(s) proposed"


def slots_send(*, conversation: Conversation, job_id: int) -> str:
    """The contractor's "Send these": the proposed times go to the tenant."""
    with transaction.atomic():
        job = _contractors_job(conversation, job_id)
        if not job.appointments.filter(state=Appointment.State.PROPOSED).exists():
            raise AppointmentError("no times are proposed yet")
        return slots_offer(job)


def slots_read(text: str, *, zone: datetime.tzinfo, country: str, now: datetime.datetime) -> list[Window]:
    """The visit times in a contractor's typed reply (``visit_times``), each
    an ``APPOINTMENT_TYPED_HOURS`` window; [] when none can be read."""
    length = datetime.timedelta(hours=settings.APPOINTMENT_TYPED_HOURS)
    starts = times_read(text, now=now.astimezone(zone), country=country, limit=settings.APPOINTMENT_SLOTS_MAX)
    return [Window(start, start + length) for start in starts]


def _numbers_jobs(phone: str, organization_id: int) -> QuerySet[Job]:
    """The accepted jobs of the contractor with WhatsApp number ``phone`` in the organization."""
    return Job.objects.filter(
        issue__organization_id=organization_id, contractor__whatsapp=phone, state=Job.State.ACCEPTED
    )


def _jobs_awaiting_times(conversation: Conversation) -> list[Job]:
    """The number's accepted jobs not scheduled (no booked visit) with no times with the tenant."""
    return list(
        _numbers_jobs(conversation.phone, conversation.organization_id)
        .filter(issue__status__in=[Issue.Status.OPEN, Issue.Status.ACKNOWLEDGED])
        .exclude(appointments__state=Appointment.State.OFFERED)
        .select_related("issue")
    )


def _holds_another(contractor_phone: str, organization_id: int, besides: list[int]) -> bool:
    """The number holds an accepted job on an open issue other than ``besides``."""
    return (
        _numbers_jobs(contractor_phone, organization_id)
        .filter(issue__status__in=Issue.OPEN_STATUSES)
        .exclude(pk__in=besides)
        .exists()
    )


def _names_a_job(conversation: Conversation, text: str) -> bool:
    """``text`` names the reference of one of the number's accepted jobs on an open issue."""
    references = (
        _numbers_jobs(conversation.phone, conversation.organization_id)
        .filter(issue__status__in=Issue.OPEN_STATUSES)
        .values_list("issue__reference", flat=True)
    )
    return any(reference.lower() in text.lower() for reference in references)


def _times_asked_for(conversation: Conversation, awaiting: list[Job]) -> Job | None:
    """The awaiting job the conversation's latest question asked times for."""
    question = (
        Message.objects.filter(conversation=conversation, direction=Message.Direction.OUTBOUND)
        .filter(raw_payload__has_key="choices")
        .order_by("-id")
        .first()
    )
    if question is None or question.raw_payload.get("purpose") != SLOTS_PURPOSE:
        return None
    asked = str(question.raw_payload.get("content_variables", {}).get("2", ""))
    return next((job for job in awaiting if str(job.pk) == asked), None)


def job_awaiting_times(conversation: Conversation, text: str = "") -> Job | None:
    """The contractor's accepted job that awaits visit times and that
    ``text`` answers: the one whose reference it names, else the only one,
    else the one the conversation's latest question asked times for. None
    when the contractor holds another job as well (a visit booked, times with
    a tenant) and the text names none: "running late, there by 3 today" is
    about the visit under way, not times for the job waiting for them, and a
    person reads it (``slots_typed`` asks again for the reference)."""
    awaiting = _jobs_awaiting_times(conversation)
    named = [job for job in awaiting if job.issue.reference.lower() in text.lower()]
    if len(named) == 1:
        return named[0]
    if _holds_another(conversation.phone, conversation.organization_id, [job.pk for job in awaiting]):
        return None
    if len(awaiting) == 1:
        return awaiting[0]
    return _times_asked_for(conversation, awaiting)


def slots_typed(*, conversation: Conversation, text: str) -> str | None:
    """A typed message from a contractor whose job awaits visit times: the
    times read from it go to the tenant; with none read, the text goes to the
    landlord and the contractor sees the list again. With another job held
    and no reference named, the text goes to the landlord and the contractor
    is asked again, told to tap or name the job. None when no job awaits
    times (the caller passes the text on)."""
    now = timezone.now()
    awaiting = job_awaiting_times(conversation, text)
    if awaiting is None:
        asked = _times_asked_for(conversation, _jobs_awaiting_times(conversation))
        if asked is None or _names_a_job(conversation, text):
            return None  # about another job ("R2611-LEAK01 running late"), or no times asked: passed on
        if not slots_read(text, zone=_zone(asked.issue), country=asked.issue.organization.country, now=now):
            return None  # no time in it ("on site now"): passed on, the list not sent again
        with transaction.atomic():
            job = _contractors_job(conversation, asked.pk)
            message_pass_on(job.contractor, text)
            slots_ask(
                job,
                note="You have more than one job with us, so I've passed that on to the landlord. For "
                f"{job.issue.reference}, tap the times below or write them after its reference.",
                now=now,
            )
        return "another job held and no reference named: passed on to the landlord, times asked again"
    with transaction.atomic():
        job = _contractors_job(conversation, awaiting.pk)
        read = slots_read(text, zone=_zone(job.issue), country=job.issue.organization.country, now=now)
        windows = [w for w in read if not _window_check(w, now)]
        if not windows:
            message_pass_on(job.contractor, text)
            slots_ask(job, note="I couldn't read a time in that; I've passed it on to the landlord.", now=now)
            return "no time read: passed on to the landlord"
        # A typed message is their whole proposal: times tapped before it are dropped, so at most
        # APPOINTMENT_SLOTS_MAX go to the tenant.
        job.appointments.filter(state=Appointment.State.PROPOSED).delete()
        for window in windows:
            Appointment.objects.get_or_create(
                job=job, starts_at=window.starts, ends_at=window.ends, state=Appointment.State.PROPOSED
            )
        return slots_offer(job)


def slots_offer(job: Job) -> str:
    """The proposed times go to the tenant to pick one (inside the caller's
    transaction, the job locked)."""
    issue, contractor = job.issue, job.contractor
    proposed = list(job.appointments.filter(state=Appointment.State.PROPOSED).order_by("starts_at"))
    zone = _zone(issue)
    texts = [visit_text(a, zone) for a in proposed]
    tenant = tenant_conversation(issue)
    if tenant is None:
        landlord_note(
            issue, f"{contractor.name} can visit {' or '.join(texts)}; there is no tenant conversation to ask."
        )
        _history(issue, f"{contractor.name} proposed {', '.join(texts)}; no tenant to ask.")
        return f"{issue.reference}: no tenant conversation"
    Appointment.objects.filter(pk__in=[a.pk for a in proposed]).update(state=Appointment.State.OFFERED)
    choices = [Choice(payload=f"{VISIT_ACTION}:pick:{a.pk}", title=t) for a, t in zip(proposed, texts, strict=True)]
    choices.append(Choice(payload=f"{VISIT_ACTION}:none:{job.pk}", title="None of these"))
    outbound_choice_queue(
        conversation=tenant,
        body=f"{contractor.name} can come to fix '{issue.title}' ({issue.reference}). Which time suits you?\n"
        + "\n".join(f"{n}. {c.title}" for n, c in enumerate(choices, 1))
        + "\nReply with the number.",
        choices=choices,
        purpose=OFFER_PURPOSE,
        content_variables={"1": issue.reference, "2": contractor.name},
        author=Message.Author.SYSTEM,
    )
    outbound_text_queue(
        conversation=contractor_conversation(contractor),
        body=f"Thanks. I've sent {', '.join(texts)} to the tenant of {issue.reference}; you'll hear which they pick.",
        purpose=VISIT_PURPOSE,
        author=Message.Author.SYSTEM,
    )
    _history(issue, f"{contractor.name} proposed {', '.join(texts)}; offered to the tenant.")
    return f"{issue.reference}: {len(proposed)} time(s) offered to the tenant"


def _tenants_job(conversation: Conversation, job_id: int) -> Job:
    job = _job_locked(conversation, job_id)
    issue = job.issue
    if tenant_conversation(issue) != conversation:
        raise AppointmentError(f"{issue.reference} was not reported from this number")
    return job


def visit_pick(*, conversation: Conversation, appointment_id: int) -> str:
    """The tenant picked a time: booked, both told with the calendar entry.
    A time that has passed, or that the contractor has since booked for
    another job, is not booked: the contractor is asked for new times."""
    appointment = Appointment.objects.filter(pk=appointment_id).only("job_id").first()
    if appointment is None:
        raise AppointmentError("no such visit time")
    with transaction.atomic():
        job = _tenants_job(conversation, appointment.job_id)
        Contractor.objects.select_for_update().filter(pk=job.contractor_id).first()  # one booking at a time each
        appointment = Appointment.objects.get(pk=appointment_id)
        if appointment.state != Appointment.State.OFFERED:
            raise AppointmentError(f"that time is {appointment.get_state_display().lower()}")
        now = timezone.now()
        issue, contractor = job.issue, job.contractor
        clash = Appointment.objects.filter(
            job__contractor=contractor,
            state=Appointment.State.BOOKED,
            starts_at__lt=appointment.ends_at,
            ends_at__gt=appointment.starts_at,
        )
        if appointment.starts_at <= now or clash.exists():
            job.appointments.filter(state=Appointment.State.OFFERED).update(state=Appointment.State.NOT_CHOSEN)
            why = "has passed" if appointment.starts_at <= now else "has just been taken"
            outbound_text_queue(
                conversation=conversation,
                body=f"Sorry, that time {why}. I've asked {contractor.name} for new times for {issue.reference}.",
                purpose=VISIT_PURPOSE,
                author=Message.Author.SYSTEM,
            )
            slots_ask(job, note=f"The tenant of {issue.reference} picked a time that {why}.")
            return f"{issue.reference}: the time {why}"
        job.appointments.filter(state=Appointment.State.OFFERED).exclude(pk=appointment.pk).update(
            state=Appointment.State.NOT_CHOSEN
        )
        appointment.state, appointment.booked_at = Appointment.State.BOOKED, now
        if appointment.starts_at - now <= datetime.timedelta(hours=settings.APPOINTMENT_REMINDER_HOURS):
            appointment.reminded_at = now  # booked for within a day: the confirmation is the reminder
        appointment.save(update_fields=["state", "booked_at", "reminded_at"])
        when = _when_of(appointment)
        day = appointment.starts_at.astimezone(_zone(issue)).date()
        if not (issue.status == Issue.Status.SCHEDULED and issue.scheduled_for == day):
            try:
                issue_status_change(issue=issue, status=Issue.Status.SCHEDULED, scheduled_for=day, tenant_told=False)
            except IssueStatusError as error:  # closed by the landlord since the job was read: nothing is booked
                raise AppointmentError(str(error)) from None
        link = ics_link(appointment)
        outbound_text_queue(
            conversation=conversation,
            body=f"Booked: {contractor.name} will come {when} for {issue.reference}. Add it to your calendar: {link}",
            purpose=VISIT_PURPOSE,
            author=Message.Author.SYSTEM,
        )
        if contractor.whatsapp:
            outbound_text_queue(
                conversation=contractor_conversation(contractor),
                body=f"Booked: {issue.reference} at {issue.property.address}, {when}. Calendar: {link}",
                purpose=VISIT_PURPOSE,
                author=Message.Author.SYSTEM,
            )
        # One email each: the contractor and the tenant do not see each other's address.
        for address in dict.fromkeys(e for e in (contractor.email, issue.tenant.email if issue.tenant else "") if e):
            _ics_email(appointment, to=[address], subject=f"Visit booked: {issue.reference}, {when}")
        _history(issue, f"Visit booked with {contractor.name}: {when} (the tenant's pick).")
        landlord_note(issue, f"Visit booked: {contractor.name}, {when}.")
    return f"{issue.reference}: booked {when}"


def visit_none(*, conversation: Conversation, job_id: int) -> str:
    """None of the times suits the tenant: the contractor is asked again."""
    with transaction.atomic():
        job = _tenants_job(conversation, job_id)
        changed = job.appointments.filter(state=Appointment.State.OFFERED).update(state=Appointment.State.NOT_CHOSEN)
        if not changed:
            raise AppointmentError(f"no times for {job.issue.reference} are waiting for an answer")
        issue = job.issue
        outbound_text_queue(
            conversation=conversation,
            body=f"OK, I'll ask {job.contractor.name} for other times for {issue.reference}.",
            purpose=VISIT_PURPOSE,
            author=Message.Author.SYSTEM,
        )
        slots_ask(job, note=f"None of those times suits the tenant of {issue.reference}.")
        _history(issue, "None of the proposed times suited the tenant; the contractor was asked again.")
        landlord_note(issue, f"None of {job.contractor.name}'s times suited the tenant; they were asked for others.")
    return f"{issue.reference}: none suited"


class Outcome:
    """Answers after the visit: the tenant's Yes (``came``) or No
    (``missed``); the contractor's Fixed, Another visit, or Couldn't get in."""

    CAME = "came"
    FIXED = "fixed"
    AGAIN = "again"
    MISSED = "missed"
    ALL = (CAME, FIXED, AGAIN, MISSED)


def visit_report(*, conversation: Conversation, appointment_id: int, outcome: str) -> str:
    """Either side's answer after the visit. A missed visit (the first "No"
    or "Couldn't get in") tells the landlord and the other side and asks for
    new times; the contractor's **Fixed** resolves the issue, which asks the
    tenant "Is it fixed?"; **Another visit** asks the contractor for times
    again. The contractor answers once; nothing is changed on an issue that
    is no longer open."""
    if outcome not in Outcome.ALL:
        raise AppointmentError(f"{outcome!r} is not an answer about a visit")
    with transaction.atomic():
        issue_id = Appointment.objects.filter(pk=appointment_id).values_list("job__issue_id", flat=True).first()
        if issue_id:
            issue_lock(issue_id)  # before the visit, as every change to an issue does
        appointment = (
            Appointment.objects.select_for_update(of=("self",))
            .select_related("job__contractor", "job__issue__organization", "job__issue__property")
            .select_related("job__issue__conversation", "job__issue__tenant")
            .filter(pk=appointment_id, job__issue__organization_id=conversation.organization_id)
            .first()
        )
        if appointment is None:
            raise AppointmentError("no such visit")
        job, issue = appointment.job, appointment.job.issue
        if job.state != Job.State.ACCEPTED:  # withdrawn: its contractor has no say on the issue now
            raise AppointmentError(f"the job of {issue.reference} is {job.get_state_display().lower()}")
        by = "contractor" if job.contractor.whatsapp == conversation.phone else "tenant"
        if by == "tenant" and tenant_conversation(issue) != conversation:
            raise AppointmentError("that visit is not this number's")
        if (by == "tenant") != (outcome == Outcome.CAME) and outcome != Outcome.MISSED:
            raise AppointmentError("that answer is the other side's")
        if not issue.is_open():
            raise AppointmentError(f"{issue.reference} is {issue.get_status_display().lower()} already")
        # The tenant's Yes does not stop the contractor saying how it went, once.
        answerable = [Appointment.State.BOOKED] + ([Appointment.State.VISITED] if by == "contractor" else [])
        if appointment.state not in answerable or (by == "contractor" and appointment.outcome):
            raise AppointmentError(f"the visit is {appointment.get_state_display().lower()} already")
        when = _when_of(appointment)
        if by == "contractor":
            appointment.outcome = outcome
        if outcome == Outcome.MISSED:
            return _missed(appointment, conversation=conversation, by=by, when=when)
        appointment.state = Appointment.State.VISITED
        appointment.save(update_fields=["state", "outcome"])
        if outcome == Outcome.CAME:
            _history(issue, f"The tenant confirmed the visit of {when}.")
        elif outcome == Outcome.FIXED:
            _history(issue, f"{job.contractor.name} reported the repair done at the visit of {when}.")
            issue_status_change(issue=issue, status=Issue.Status.RESOLVED)  # asks the tenant "Is it fixed?"
        else:
            _history(issue, f"{job.contractor.name} needs another visit after {when}.")
            landlord_note(issue, f"{job.contractor.name} needs another visit after {when}; they are asked for times.")
            _unschedule(issue)
            slots_ask(job, note=f"When can you come back to {issue.reference}?")
    return f"{issue.reference}: {outcome} ({by})"


def _unschedule(issue: Issue) -> None:
    if issue.status == Issue.Status.SCHEDULED:
        issue_status_change(issue=issue, status=Issue.Status.ACKNOWLEDGED, tenant_told=False)


def _missed(appointment: Appointment, *, conversation: Conversation, by: str, when: str) -> str:
    job, issue = appointment.job, appointment.job.issue
    appointment.state, appointment.missed_by = Appointment.State.MISSED, by
    appointment.save(update_fields=["state", "missed_by", "outcome"])
    _unschedule(issue)
    _history(issue, f"The {by} reported the visit of {when} as missed.")
    landlord_note(issue, f"Missed visit ({when}), reported by the {by}. {job.contractor.name} is asked for new times.")
    sorry = f"Sorry about that. I've told {issue.organization.name} and asked for a new time for {issue.reference}."
    other = tenant_conversation(issue) if by == "contractor" else None
    for told in (c for c in (conversation, other) if c is not None):
        outbound_text_queue(conversation=told, body=sorry, purpose=VISIT_PURPOSE, author=Message.Author.SYSTEM)
    slots_ask(job, note=f"The visit of {when} for {issue.reference} was missed.")
    return f"{issue.reference}: missed ({by})"


@dataclass
class Checked:
    reminded: int = 0
    asked: int = 0
    lapsed: int = 0  # jobs whose offered times all started unpicked
    unanswered: int = 0  # visits nobody said happened, the landlord told


def appointments_check(*, now: datetime.datetime | None = None) -> Checked:
    """Beat: the day-before reminder to both sides, then once the window has
    passed, the tenant is asked "Did they come?" and the contractor "How did
    it go?". Each is recorded on the appointment in the same transaction as
    its messages (SKIP LOCKED), so never sent twice."""
    now = now or timezone.now()
    checked = Checked()
    base = Appointment.objects.select_for_update(of=("self",), skip_locked=True).select_related(
        "job__contractor", "job__issue__organization", "job__issue__property", "job__issue__conversation"
    )
    with transaction.atomic():
        soon = now + datetime.timedelta(hours=settings.APPOINTMENT_REMINDER_HOURS)
        for appointment in base.filter(
            state=Appointment.State.BOOKED,
            reminded_at__isnull=True,
            starts_at__gt=now,
            starts_at__lte=soon,
            job__issue__status__in=Issue.OPEN_STATUSES,
        ).select_related("job__issue__tenant"):
            text = f"Reminder: the visit for {appointment.job.issue.reference} is {_when_of(appointment)}."
            for conversation in _sides(appointment):
                outbound_text_queue(
                    conversation=conversation, body=text, purpose=VISIT_PURPOSE, author=Message.Author.SYSTEM
                )
            Appointment.objects.filter(pk=appointment.pk).update(reminded_at=now)
            checked.reminded += 1
    with transaction.atomic():
        for appointment in base.filter(
            state=Appointment.State.BOOKED,
            asked_at__isnull=True,
            ends_at__lte=now,
            job__issue__status__in=Issue.OPEN_STATUSES,
        ).select_related("job__issue__tenant"):
            _after_ask(appointment)
            Appointment.objects.filter(pk=appointment.pk).update(asked_at=now)
            checked.asked += 1
    with transaction.atomic():
        # Nobody answered "Did they come?" nor "How did it go?": the visit stays booked and the job waits on it,
        # so the landlord is told once, to find out and record it, or withdraw the job. The same when only the
        # tenant said they came: without the contractor's "How did it go?" the issue stays scheduled.
        silent_since = now - datetime.timedelta(hours=settings.APPOINTMENT_UNANSWERED_HOURS)
        for appointment in base.filter(
            # A withdrawn job's visit is the landlord's decision already (only booked ones are cancelled).
            Q(state=Appointment.State.BOOKED)
            | Q(state=Appointment.State.VISITED, outcome="", job__state=Job.State.ACCEPTED),
            asked_at__lte=silent_since,
            unanswered_told_at__isnull=True,
            job__issue__status__in=Issue.OPEN_STATUSES,
        ):
            name, when = appointment.job.contractor.name, _when_of(appointment)
            landlord_note(
                appointment.job.issue,
                f"Nobody has said whether {name}'s visit of {when} happened: find out and record it, or withdraw "
                "the job to send someone else."
                if appointment.state == Appointment.State.BOOKED
                else f"The tenant says {name} came on {when}, but {name} has not said how it went: find out, and "
                "resolve the issue if it is fixed, or withdraw the job to send someone else.",
            )
            Appointment.objects.filter(pk=appointment.pk).update(unanswered_told_at=now)
            checked.unanswered += 1
    checked.lapsed = _offers_lapse(now)
    return checked


def _offers_lapse(now: datetime.datetime) -> int:
    """Times offered to a tenant who picked none before every one had started:
    they lapse as "None of these" would, so the job does not wait forever for
    a pick (the contractor could not propose again meanwhile)."""
    offered = Appointment.objects.filter(job=OuterRef("pk"), state=Appointment.State.OFFERED)
    due = Job.objects.filter(Exists(offered), state=Job.State.ACCEPTED, issue__status__in=Issue.OPEN_STATUSES).exclude(
        Exists(offered.filter(starts_at__gt=now))
    )
    lapsed = 0
    for job in jobs_locked_each(due):
        issue = job.issue
        Appointment.objects.filter(job=job, state=Appointment.State.OFFERED).update(state=Appointment.State.NOT_CHOSEN)
        _history(issue, "The tenant picked none of the visit times before they passed.")
        landlord_note(issue, f"The tenant did not pick a visit time; {job.contractor.name} is asked for new times.")
        slots_ask(job, note=f"The tenant of {issue.reference} did not pick any of those times in time.", now=now)
        lapsed += 1
    return lapsed


def visit_text(appointment: Appointment, zone: datetime.tzinfo) -> str:
    return window_text(Window(appointment.starts_at, appointment.ends_at), zone)


def _when_of(appointment: Appointment) -> str:
    return visit_text(appointment, _zone(appointment.job.issue))


def _sides(appointment: Appointment) -> list[Conversation]:
    contractor = appointment.job.contractor
    both = (
        tenant_conversation(appointment.job.issue),
        contractor_conversation(contractor) if contractor.whatsapp else None,
    )
    return [c for c in both if c is not None]


def _after_ask(appointment: Appointment) -> None:
    issue, contractor, pk = appointment.job.issue, appointment.job.contractor, appointment.pk
    when = _when_of(appointment)
    questions = [
        (
            tenant_conversation(issue),
            f"Did {contractor.name} come for {issue.reference} ({when})?",
            [Choice(f"{VISIT_ACTION}:came:{pk}", "Yes"), Choice(f"{VISIT_ACTION}:missed:{pk}", "No")],
        ),
        (
            contractor_conversation(contractor) if contractor.whatsapp else None,
            f"How did the visit for {issue.reference} at {issue.property.address} ({when}) go?",
            [
                Choice(f"{VISIT_ACTION}:fixed:{pk}", "Fixed"),
                Choice(f"{VISIT_ACTION}:again:{pk}", "Another visit"),
                Choice(f"{VISIT_ACTION}:missed:{pk}", "Couldn't get in"),
            ],
        ),
    ]
    for conversation, question, choices in questions:
        if conversation is None:
            continue
        outbound_choice_queue(
            conversation=conversation,
            body=question + "\n" + "\n".join(f"{n}. {c.title}" for n, c in enumerate(choices, 1)),
            choices=choices,
            purpose=VISIT_PURPOSE,
            content_variables={"1": question},
            author=Message.Author.SYSTEM,
        )


def ics_link(appointment: Appointment) -> str:
    token = signing.dumps(appointment.pk, salt=ICS_SALT)
    return f"{settings.PUBLIC_BASE_URL}{reverse('appointment-ics', args=[token])}"


def _ics_email(appointment: Appointment, *, to: list[str], subject: str) -> None:
    email = EmailMessage(
        subject=email_subject(subject),
        body=f"{subject}\nThe calendar entry is attached.",
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=to,
    )
    email.attach(f"visit-{appointment.pk}.ics", visit_ics(appointment), "text/calendar")
    transaction.on_commit(email.send, robust=True)


def _history(issue: Issue, body: str) -> None:
    IssueUpdate.objects.create(issue=issue, author=IssueUpdate.Author.SYSTEM, body=body)
