"""The measure that matters: how many repairs run from report to booked
visit with no landlord action.

``simulate`` runs ``tenants`` reports of one organization (``auto_dispatch``
on) through the real flows: each tenant's message is a signed Twilio webhook
posted to the real view, processed by the worker's own task function
(``inbound_process``, called in this process rather than by a Celery worker),
answered by the scripted model (a queued ``ask_for_photo`` then
``create_issue``; emergencies are caught by the product's own detection).
Scripted contractors answer through the same webhook: they accept, decline
or stay silent at the given rates, tap or type their times, and after the
visit say Fixed (or, at ``missed_visit``, Couldn't get in). Tenants pick the
first time offered, confirm the visit and answer Yes to "Is it fixed?".
Beat's jobs (lapsed offers, deadline clocks, reminders) run every
``BEAT_MINUTES`` of simulated time. A scripted landlord looks at the admin's
home page every ``landlord_every`` minutes and makes safe each open
emergency it shows, ``landlord_delay`` minutes after first seeing it: an
emergency the home page does not show is never made safe.

Time is simulated: the caller passes a ``clock`` with ``move_to`` (for
instance ``time_machine.travel(..., tick=False)``).

The report: the share of routine reports booked with no landlord action,
hours from first message to booking (median, p90), deadline clocks per
urgency and kind (met in time, missed, running), messages sent per repair,
and whether every case that needs a person was on the home page.
"""

from __future__ import annotations

import datetime
import functools
import heapq
import itertools
import random
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from conversations.models import Message
from conversations.testing.signing import WEBHOOK_PATH, inbound_params, twilio_signature
from issues.appointments import appointments_check
from issues.deadlines import clock_meet, clocks_check
from issues.dispatch import jobs_expire
from issues.models import Appointment, ClockKind, Issue, IssueClock, IssueUpdate, Job
from llm.scripted import scripted_clear, scripted_queue
from orchestration.pipeline import inbound_process
from properties.models import Contractor, Membership, Organization, Property, Tenancy, Tenant, WhatsAppNumber

BEAT_MINUTES = 15
ORG_NUMBER = "+14155550999"
REPORTS = [  # (category, urgency, where, what the tenant writes, the model's title)
    ("plumbing", "routine", "kitchen", "the kitchen tap has been dripping for a week", "Dripping kitchen tap"),
    ("plumbing", "routine", "bathroom", "the toilet keeps running after flushing", "Toilet cistern keeps running"),
    ("electrical", "routine", "bedroom", "two sockets in the bedroom stopped working", "Bedroom sockets not working"),
    (
        "heating",
        "urgent",
        "living room",
        "no heating in the living room since yesterday, radiator is cold",
        "No heating",
    ),
    ("appliances", "routine", "kitchen", "the oven door hinge in the kitchen is broken", "Oven door hinge broken"),
    ("structural", "routine", "bathroom", "the bathroom window won't close properly", "Bathroom window will not close"),
]
EMERGENCY = "I can smell gas in the kitchen, it's really strong"
PAGE_REFERENCE = re.compile(r"R\d{4}-[A-Z0-9]{6}")


class Clock(Protocol):
    def move_to(self, destination: datetime.datetime) -> None: ...


@dataclass
class Setup:
    tenants: int = 40
    emergency_share: float = 0.1
    accept: float = 0.8  # a contractor's answer to an offer: accept, decline, or (the rest) silence
    decline: float = 0.1
    typed_times: float = 0.3  # a contractor types times rather than tapping
    missed_visit: float = 0.05
    contractors_per_trade: int = 2
    report_every: int = 20  # minutes between reports
    reply_after: int = 30  # typical minutes a contractor or tenant takes to answer (a quarter to 3x this)
    landlord_every: int = 60
    landlord_delay: int = 60  # minutes from an emergency on the home page to it made safe
    days: int = 10
    seed: int = 1


@dataclass
class Result:
    routine: int = 0
    zero_touch: int = 0
    booking_hours: list[float] = field(default_factory=list)
    clocks: dict[str, dict[str, int]] = field(default_factory=dict)  # "urgency clock" -> met / missed / running
    messages: int = 0
    issues: int = 0
    need_a_person: int = 0
    surfaced: int = 0
    unsurfaced: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        hours = sorted(self.booking_hours)
        p90 = hours[max(0, int(len(hours) * 0.9 + 0.5) - 1)] if hours else 0.0
        share = self.zero_touch / self.routine if self.routine else 0.0
        lines = [
            f"routine reports booked with no landlord action: {self.zero_touch}/{self.routine} ({share:.0%})",
            f"first message to booking: median {statistics.median(hours) if hours else 0:.1f} h, p90 {p90:.1f} h",
            f"messages sent per repair: {self.messages / self.issues if self.issues else 0:.1f}",
            f"cases needing a person on the home page: {self.surfaced}/{self.need_a_person}",
        ]
        for urgency, counts in sorted(self.clocks.items()):
            lines.append(
                f"{urgency} clocks: {counts['met']} met in time, {counts['missed']} missed, {counts['running']} running"
            )  # urgency: "emergency made safe", "routine resolved", ...
        return lines


class Simulation:
    def __init__(self, setup: Setup, *, clock: Clock, start: datetime.datetime):
        self.setup, self.clock, self.now = setup, clock, start
        self.end = start + datetime.timedelta(days=setup.days)
        self.random = random.Random(setup.seed)
        self.events: list[tuple[datetime.datetime, int, Callable[[], None]]] = []
        self.order = itertools.count()
        self.client = Client()
        self.seen_outbound = 0
        self.emergencies_seen: dict[str, datetime.datetime] = {}
        self.surfaced: set[str] = set()
        self.missed: dict[str, bool] = {}  # appointment id -> whether the visit does not happen

    # -- the world
    def organization_make(self) -> Organization:
        organization = Organization.objects.create(
            name="Simulated Lettings",
            slug=f"simulated-{self.setup.seed}-{Organization.objects.count()}",
            timezone="Europe/London",
            auto_dispatch=True,
            contact_whatsapp="+447700700000",
            notification_email="office@simulated.example",
        )
        WhatsAppNumber.objects.create(organization=organization, number=ORG_NUMBER)
        self.tenants = []
        for n in range(self.setup.tenants):
            home = Property.objects.create(
                organization=organization,
                code=f"SIM-{n}",
                address=f"{n + 1} Simulation Street, Leeds",
                postcode="LS1 4AB",
            )
            tenant = Tenant.objects.create(organization=organization, name=f"Tenant {n}", phone=f"+4477008{n:05d}")
            Tenancy.objects.create(tenant=tenant, property=home, start_date=datetime.date(2025, 1, 1))
            self.tenants.append(tenant)
        trades = sorted({report[0] for report in REPORTS})
        for t, trade in enumerate(trades):
            for k in range(self.setup.contractors_per_trade):
                Contractor.objects.create(
                    organization=organization,
                    name=f"{trade.title()} {k + 1}",
                    trades=[trade],
                    areas=["LS1"],
                    whatsapp=f"+4477009{t:02d}{k:03d}",
                )
        self.landlord = get_user_model().objects.create_user(
            username=f"landlord-{organization.slug}", password=None, is_staff=True
        )
        Membership.objects.create(user=self.landlord, organization=organization)
        self.client.force_login(self.landlord)  # the webhook ignores the session
        self.organization = organization
        return organization

    def at(self, minutes: float, action: Callable[[], None]) -> None:
        heapq.heappush(self.events, (self.now + datetime.timedelta(minutes=minutes), next(self.order), action))

    def _later(self) -> float:
        return self.setup.reply_after * self.random.uniform(0.25, 3.0)

    def say(self, phone: str, text: str, extra: dict[str, str] | None = None) -> None:
        """A signed webhook, as Twilio posts it, then the worker's processing."""
        params = inbound_params(phone=phone, to=ORG_NUMBER, body=text, extra=extra)
        url = f"{settings.PUBLIC_BASE_URL}{WEBHOOK_PATH}"
        signature = twilio_signature(auth_token=settings.TWILIO_AUTH_TOKEN, url=url, params=params)
        response = self.client.post(WEBHOOK_PATH, params, HTTP_X_TWILIO_SIGNATURE=signature)
        if response.status_code != 200:
            raise RuntimeError(f"the webhook answered {response.status_code}")
        inbound_process(message_id=Message.objects.get(provider_sid=params["MessageSid"]).pk)

    def tap(self, phone: str, choice: dict[str, str]) -> None:
        self.say(phone, choice["title"], {"ButtonPayload": choice["payload"], "ButtonText": choice["title"]})

    # -- the people
    def report(self, n: int) -> None:
        tenant = self.tenants[n]
        if self.random.random() < self.setup.emergency_share:
            scripted_queue(phone=tenant.phone, calls=[{"tool": "respond", "input": {"message": "Please get out now."}}])
            self.say(tenant.phone, EMERGENCY)
            return
        category, urgency, where, text, title = REPORTS[n % len(REPORTS)]
        call = {
            "tool": "create_issue",
            "input": {
                "title": title,
                "description": text,
                "category": category,
                "urgency": urgency,
                "location": where,
                "photo": "declined",
                "message": "Thanks, I've logged this with your landlord.",
            },
        }
        ask = {
            "tool": "ask_for_photo",
            "input": {"message": "Could you send a photo of it?", "problem": title, "location": where},
        }
        scripted_queue(phone=tenant.phone, calls=[ask, call])
        self.say(tenant.phone, text)
        self.at(self._later(), lambda: self.say(tenant.phone, "sorry can't take a photo right now"))

    def react(self) -> None:
        """Schedule each scripted person's answer to what was just sent."""
        sent = list(
            Message.objects.filter(direction=Message.Direction.OUTBOUND, id__gt=self.seen_outbound)
            .select_related("conversation")
            .order_by("id")
        )
        if sent:
            self.seen_outbound = sent[-1].pk
        for message in sent:
            purpose = (message.raw_payload or {}).get("purpose", "")
            phone = message.conversation.phone if message.conversation else ""
            choices = (message.raw_payload or {}).get("choices") or []
            if purpose == "job_offer":
                self._offer_answer(phone, choices)
            elif purpose == "appointment_slots" and choices:
                self._times_answer(phone, message, choices)
            elif purpose == "appointment_offer":
                self._tap_later(phone, choices[0])
            elif purpose == "appointment" and choices:  # after the visit: Yes / No, or Fixed / ... / Couldn't get in
                missed = self.missed.setdefault(choices[0]["payload"].rsplit(":", 1)[-1], self._roll_missed())
                self._tap_later(phone, choices[-1] if missed else choices[0])
            elif purpose == "issue_fixed":
                self._tap_later(phone, choices[0])  # Yes, it's fixed

    def _roll_missed(self) -> bool:
        return self.random.random() < self.setup.missed_visit

    def _tap_later(self, phone: str, choice: dict[str, str]) -> None:
        self.at(self._later(), lambda: self.tap(phone, choice))

    def _offer_answer(self, phone: str, choices: list[dict[str, str]]) -> None:
        roll = self.random.random()
        if roll < self.setup.accept:
            self.at(self._later(), lambda: self.tap(phone, choices[0]))
        elif roll < self.setup.accept + self.setup.decline:
            self.at(self._later(), lambda: self.tap(phone, choices[1]))
        # else silent: beat lapses the offer

    def _times_answer(self, phone: str, message: Message, choices: list[dict[str, str]]) -> None:
        send = [c for c in choices if c["payload"].startswith("slot:send:")]
        if send:  # the list again after a first pick: send what is proposed
            self.at(5, lambda: self.tap(phone, send[0]))
        elif self.random.random() < self.setup.typed_times:
            typed = " or ".join(c["title"].split("-")[0] for c in choices[1:3])  # "Thu 26 Nov 12:00 or Fri ..."
            self.at(self._later(), lambda: self.say(phone, f"can do {typed}"))
        else:
            self.at(self._later(), lambda: self.tap(phone, choices[0]))

    def landlord_look(self) -> None:
        """The landlord's home page: make safe each emergency it shows."""
        page = self.client.get("/admin/").content.decode()
        shown = set(PAGE_REFERENCE.findall(page))
        self.surfaced |= shown
        open_emergencies = Issue.objects.filter(
            organization=self.organization,
            urgency=Issue.Urgency.EMERGENCY,
            clocks__kind=ClockKind.MADE_SAFE,
            clocks__met_at__isnull=True,
        ).values_list("reference", flat=True)
        for reference in open_emergencies:
            if reference not in shown:
                continue
            first = self.emergencies_seen.setdefault(reference, self.now)
            if self.now - first >= datetime.timedelta(minutes=self.setup.landlord_delay):
                clock_meet(issue=Issue.objects.get(reference=reference), kind=ClockKind.MADE_SAFE, actor=self.landlord)
        self.at(self.setup.landlord_every, self.landlord_look)

    def beat(self) -> None:
        jobs_expire()
        clocks_check()
        appointments_check()
        self.at(BEAT_MINUTES, self.beat)

    # -- the run
    def run(self) -> Result:
        self.organization_make()
        for n in range(self.setup.tenants):
            self.at(n * self.setup.report_every, functools.partial(self.report, n))
        self.at(BEAT_MINUTES, self.beat)
        self.at(self.setup.landlord_every, self.landlord_look)
        while self.events:
            moment, _, action = heapq.heappop(self.events)
            if moment > self.end:
                break
            self.now = moment
            self.clock.move_to(moment)
            action()
            self.react()
        for tenant in self.tenants:
            scripted_clear(phone=tenant.phone)
        self.landlord_look()  # what needs a person now, as the home page shows it
        return self.result()

    def result(self) -> Result:
        result = Result()
        issues = Issue.objects.filter(organization=self.organization)
        result.issues = issues.count()
        result.messages = Message.objects.filter(
            organization=self.organization, direction=Message.Direction.OUTBOUND
        ).count()
        landlord_touched = set(
            IssueUpdate.objects.filter(issue__organization=self.organization, user__isnull=False).values_list(
                "issue_id", flat=True
            )
        ) | set(
            Job.objects.filter(issue__organization=self.organization, offered_by__isnull=False).values_list(
                "issue_id", flat=True
            )
        )
        for issue in issues.exclude(urgency=Issue.Urgency.EMERGENCY):
            result.routine += 1
            booked = Appointment.objects.filter(job__issue=issue, booked_at__isnull=False).order_by("booked_at").first()
            if booked is not None and booked.booked_at is not None and issue.pk not in landlord_touched:
                result.zero_touch += 1
                first = Message.objects.filter(conversation=issue.conversation, direction="inbound").earliest("id")
                result.booking_hours.append((booked.booked_at - first.created_at).total_seconds() / 3600)
            elif issue.is_open():
                result.need_a_person += 1
                self._surfaced(result, issue.reference)
        for clock in IssueClock.objects.filter(issue__organization=self.organization).select_related("issue"):
            key = f"{clock.issue.urgency} {clock.get_kind_display().lower()}"
            counts = result.clocks.setdefault(key, {"met": 0, "missed": 0, "running": 0})
            if clock.met_at is not None and clock.met_at <= clock.due_at:
                counts["met"] += 1
            elif clock.met_at is not None or clock.due_at <= self.now:
                counts["missed"] += 1
            else:
                counts["running"] += 1
        for issue in issues.filter(urgency=Issue.Urgency.EMERGENCY):
            result.need_a_person += 1
            self._surfaced(result, issue.reference)
        return result

    def _surfaced(self, result: Result, reference: str) -> None:
        if reference in self.surfaced:
            result.surfaced += 1
        else:
            result.unsurfaced.append(reference)


def simulate(setup: Setup, *, clock: Clock, start: datetime.datetime) -> Result:
    return Simulation(setup, clock=clock, start=start).run()
