"""Deadlines: the clocks an issue runs against, and the policies they come from.

An organization's active ``DeadlinePolicy`` says, per hazard, which clocks run
and how long each has (``DeadlineRule``). An issue's hazard is

- ``emergency`` when its urgency is emergency;
- ``significant`` when it is damp and mould (Awaab's Law's phase 1);
- otherwise its urgency: ``urgent`` or ``routine``.

Clocks start when their start event happens: the report (the issue's
creation) or the investigation (``clock_meet(kind="investigated")``). Each
keeps its due time, computed with ``working_time.deadline_add`` in the
organization's time zone and public holidays; editing the policy does not
move it by itself. Changing an issue's urgency or category re-aims its unmet
clocks under the active policy
(``issue_clocks_sync``); recording the investigation or resolving only starts
the clocks that run from the investigation. A closed issue starts no clock.

A clock is met by the landlord (``clock_meet``, admin button or API), and by
resolving the issue: that meets made safe, investigated, works started and
resolved, and starts the written summary's clock if the investigation had
not been recorded; the summary must still be sent. Reopening restarts the
resolved clock with its old due time. Beat's ``clocks_check`` warns the
manager once before a clock runs out and once when it is missed, by email and
WhatsApp, with a line in the issue's history; the times it did so are on the
clock, so a restart never warns twice.
"""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from issues.landlord import landlord_tell
from issues.models import ClockKind, DeadlinePolicy, DeadlineRule, Hazard, Issue, IssueClock, IssueUpdate
from properties.models import Organization
from properties.working_time import deadline_add, zone_get

logger = logging.getLogger(__name__)

AGENCY_POLICY = "Agency policy"
AWAAB_POLICY = "England social housing (Awaab's Law)"

H, D, W = DeadlineRule.Unit.HOURS, DeadlineRule.Unit.CALENDAR_DAYS, DeadlineRule.Unit.WORKING_DAYS
REPORTED, INVESTIGATED = DeadlineRule.Starts.REPORTED, DeadlineRule.Starts.INVESTIGATED

# (hazard, clock, starts, amount, unit) of the two policies every organization
# gets. Awaab's Law (the Hazards in Social Housing (Prescribed Requirements)
# (England) Regulations 2025, in force 27 October 2025) sets only hazards'
# clocks; its "further works within 12 weeks where 5 working days cannot be
# met" is a judgement the landlord records, not a clock here.
DEFAULT_POLICIES: dict[str, list[tuple[str, str, str, int, str]]] = {
    AGENCY_POLICY: [
        (Hazard.EMERGENCY, ClockKind.MADE_SAFE, REPORTED, 24, H),
        (Hazard.EMERGENCY, ClockKind.RESOLVED, REPORTED, 7, D),
        (Hazard.SIGNIFICANT, ClockKind.INVESTIGATED, REPORTED, 10, W),
        (Hazard.SIGNIFICANT, ClockKind.RESOLVED, REPORTED, 20, W),
        (Hazard.URGENT, ClockKind.RESOLVED, REPORTED, 5, W),
        (Hazard.ROUTINE, ClockKind.RESOLVED, REPORTED, 20, W),
    ],
    AWAAB_POLICY: [
        (Hazard.EMERGENCY, ClockKind.INVESTIGATED, REPORTED, 24, H),
        (Hazard.EMERGENCY, ClockKind.MADE_SAFE, REPORTED, 24, H),
        (Hazard.SIGNIFICANT, ClockKind.INVESTIGATED, REPORTED, 10, W),
        (Hazard.SIGNIFICANT, ClockKind.SUMMARY_SENT, INVESTIGATED, 3, W),
        (Hazard.SIGNIFICANT, ClockKind.WORKS_STARTED, INVESTIGATED, 5, W),
    ],
}

# Resolving an issue meets these of its clocks; the written summary is still owed.
MET_BY_RESOLVING = (ClockKind.MADE_SAFE, ClockKind.INVESTIGATED, ClockKind.WORKS_STARTED, ClockKind.RESOLVED)


class ClockError(ValueError):
    """The clock cannot be met as asked; the message says why, for the user."""


def policies_default_create(*, organization: Organization) -> None:
    """Give ``organization`` the two default policies it lacks; the agency
    policy is active unless another policy already is."""
    has_active = DeadlinePolicy.objects.filter(organization=organization, active=True).exists()
    for name, rules in DEFAULT_POLICIES.items():
        policy, created = DeadlinePolicy.objects.get_or_create(
            organization=organization, name=name, defaults={"active": name == AGENCY_POLICY and not has_active}
        )
        if created:
            DeadlineRule.objects.bulk_create(
                DeadlineRule(policy=policy, hazard=h, clock=c, starts=s, amount=a, unit=u) for h, c, s, a, u in rules
            )


def hazard_of(issue: Issue) -> str:
    if issue.urgency == Issue.Urgency.EMERGENCY:
        return Hazard.EMERGENCY
    if issue.category == Issue.Category.DAMP_MOULD:
        return Hazard.SIGNIFICANT
    return Hazard.URGENT if issue.urgency == Issue.Urgency.URGENT else Hazard.ROUTINE


def _rules(issue: Issue) -> list[DeadlineRule]:
    return list(
        DeadlineRule.objects.filter(
            policy__organization_id=issue.organization_id, policy__active=True, hazard=hazard_of(issue)
        ).select_related("policy")
    )


def _due(issue: Issue, rule: DeadlineRule, start: datetime.datetime) -> datetime.datetime:
    organization = issue.organization
    return deadline_add(
        start,
        amount=rule.amount,
        unit=rule.unit,
        zone=zone_get(organization.timezone),
        country=organization.country,
        region=organization.holiday_region,
    )


def _clock_values(issue: Issue, rule: DeadlineRule, start: datetime.datetime) -> dict[str, Any]:
    due = _due(issue, rule, start)
    return {
        "rule": f"{rule} ({rule.policy.name})"[:200],
        "started_at": start,
        "due_at": due,
        # In UTC: a due time in the organization's zone minus hours is wall-clock arithmetic, an hour out
        # across a clock change.
        "warn_at": due.astimezone(datetime.UTC) - datetime.timedelta(hours=rule.policy.warn_before_hours),
    }


def _starts_at(issue: Issue, starts: str, clocks: dict[str, IssueClock]) -> datetime.datetime | None:
    if starts == REPORTED:
        return issue.created_at
    investigated = clocks.get(ClockKind.INVESTIGATED)
    return investigated.met_at if investigated is not None else None


def clocks_from_investigation_start(*, issue: Issue) -> None:
    """Start the clocks that run from the investigation (the written summary,
    works started) that have not started; nothing running is re-aimed, and a
    closed issue starts none (an investigation recorded afterwards)."""
    if issue.status == Issue.Status.CLOSED:
        return
    clocks = {c.kind: c for c in IssueClock.objects.filter(issue=issue)}
    for rule in _rules(issue):
        start = _starts_at(issue, rule.starts, clocks)
        if rule.starts != INVESTIGATED or start is None or rule.clock in clocks:
            continue
        IssueClock.objects.create(
            issue=issue, kind=rule.clock, **_clock_values(issue, rule, start), met_at=_met_already(issue, rule)
        )


def issue_clocks_sync(*, issue: Issue) -> list[IssueClock]:
    """Make the issue's unmet clocks those its hazard's rules call for now:
    start the ones whose start event has happened, re-aim the unmet ones, and
    drop unmet clocks no rule asks for any more (after a change of urgency or
    category). Met clocks are history and never change. Returns the clocks."""
    with transaction.atomic():
        clocks = {c.kind: c for c in IssueClock.objects.select_for_update().filter(issue=issue)}
        wanted = set()
        for rule in _rules(issue):
            start = _starts_at(issue, rule.starts, clocks)
            if start is None:
                continue
            wanted.add(rule.clock)
            existing = clocks.get(rule.clock)
            if existing is None:
                if issue.status == Issue.Status.CLOSED:
                    continue  # a closed issue's clocks are stopped: none starts
                clocks[rule.clock] = IssueClock.objects.create(
                    issue=issue, kind=rule.clock, **_clock_values(issue, rule, start), met_at=_met_already(issue, rule)
                )
            elif existing.met_at is None:
                values = _clock_values(issue, rule, start)
                if existing.due_at != values["due_at"]:
                    values.update(warned_at=None, missed_at=None)
                for name, value in values.items():
                    setattr(existing, name, value)
                existing.save()
        for kind, clock in list(clocks.items()):
            if kind not in wanted and clock.met_at is None:
                clock.delete()
                del clocks[kind]
    return sorted(clocks.values(), key=lambda c: c.due_at)


def _met_already(issue: Issue, rule: DeadlineRule) -> datetime.datetime | None:
    """A clock started on a resolved issue is met already if resolving meets it."""
    if issue.status == Issue.Status.RESOLVED and rule.clock in MET_BY_RESOLVING:
        return issue.resolved_at or timezone.now()
    return None


def clock_meet(
    *, issue: Issue, kind: str, actor: Any = None, at: datetime.datetime | None = None, note: str = ""
) -> IssueClock:
    """Record that ``kind`` was done (now, or ``at``), as ``actor``. Raises
    ClockError when the issue has no such clock, it is met already, or ``at``
    is in the future or before the clock started. Meeting the investigation
    starts the clocks that run from it."""
    now = timezone.now()
    at = at or now
    with transaction.atomic():
        # The issue first, as a status change locks it: never the other way round.
        issue = (
            Issue.objects.select_for_update(of=("self",), no_key=True).select_related("organization").get(pk=issue.pk)
        )
        clock = IssueClock.objects.select_for_update().filter(issue=issue, kind=kind).first()
        label = ClockKind(kind).label.lower() if kind in ClockKind.values else kind
        if clock is None:
            raise ClockError(f"{issue.reference} has no '{label}' deadline.")
        if clock.met_at is not None:
            raise ClockError(f"'{clock.get_kind_display()}' was recorded already, at {_local(issue, clock.met_at)}.")
        if at > now + datetime.timedelta(minutes=1):
            raise ClockError("That time is in the future.")
        if at < clock.started_at:
            raise ClockError(f"That time is before the clock started ({_local(issue, clock.started_at)}).")
        clock.met_at, clock.met_by = at, actor if actor is not None and actor.pk else None
        clock.save(update_fields=["met_at", "met_by"])
        who = (actor.get_username() if actor is not None else "") or "the system"
        body = f"{clock.get_kind_display()} recorded by {who} at {_local(issue, at)}: {_verdict(clock)}."
        if note:
            body += f" Note: {note}"
        IssueUpdate.objects.create(
            issue=issue,
            author=IssueUpdate.Author.LANDLORD if actor is not None else IssueUpdate.Author.SYSTEM,
            user=actor if actor is not None and actor.pk else None,
            body=body,
        )
        if kind == ClockKind.INVESTIGATED:
            clocks_from_investigation_start(issue=issue)
    return clock


def clocks_on_status(*, issue: Issue, status: str, at: datetime.datetime) -> None:
    """A status change's effect on the clocks (called inside the change's
    transaction): resolving meets ``MET_BY_RESOLVING``, reopening runs the
    resolved clock again."""
    if status == Issue.Status.RESOLVED:
        # Resolving means it was investigated: the clocks that run from the
        # investigation (the written summary) start now if they had not.
        IssueClock.objects.filter(issue=issue, kind=ClockKind.INVESTIGATED, met_at__isnull=True).update(met_at=at)
        clocks_from_investigation_start(issue=issue)
        IssueClock.objects.filter(issue=issue, kind__in=MET_BY_RESOLVING, met_at__isnull=True).update(met_at=at)
    elif status == Issue.Status.OPEN:
        IssueClock.objects.filter(issue=issue, kind=ClockKind.RESOLVED).update(met_at=None, met_by=None)


def _local(issue: Issue, moment: datetime.datetime) -> str:
    return f"{moment.astimezone(zone_get(issue.organization.timezone)):%a %d %b %Y %H:%M}"


def _verdict(clock: IssueClock) -> str:
    assert clock.met_at is not None
    if clock.met_at <= clock.due_at:
        return "in time"
    return f"{duration_text(clock.met_at - clock.due_at)} late"


def duration_text(delta: datetime.timedelta) -> str:
    """'3 d', '5 h', '20 min': the largest unit, rounded down, at least 1 min."""
    seconds = max(int(delta.total_seconds()), 60)
    if seconds >= 2 * 86400:
        return f"{seconds // 86400} d"
    if seconds >= 3600:
        return f"{seconds // 3600} h"
    return f"{seconds // 60} min"


class ClockState:
    MET = "met"
    MET_LATE = "met late"
    OVERDUE = "overdue"
    DUE_SOON = "due soon"
    RUNNING = "running"
    STOPPED = "stopped"


def clocks_running(issue: Issue) -> bool:
    """Whether any of the issue's clocks is not met (closing would stop it)."""
    return IssueClock.objects.filter(issue=issue, met_at__isnull=True).exists()


def clock_state(clock: IssueClock, *, now: datetime.datetime, issue_status: str) -> str:
    if clock.met_at is not None:
        return ClockState.MET if clock.met_at <= clock.due_at else ClockState.MET_LATE
    if issue_status == Issue.Status.CLOSED:
        return ClockState.STOPPED
    if clock.due_at <= now:
        return ClockState.OVERDUE
    return ClockState.DUE_SOON if clock.warn_at <= now else ClockState.RUNNING


def clock_summary(clock: IssueClock, *, now: datetime.datetime, issue_status: str) -> str:
    """'due in 3 h', 'overdue 2 d', 'met', 'met 5 h late', 'stopped'."""
    state = clock_state(clock, now=now, issue_status=issue_status)
    if state == ClockState.OVERDUE:
        return f"overdue {duration_text(now - clock.due_at)}"
    if state in (ClockState.DUE_SOON, ClockState.RUNNING):
        return f"due in {duration_text(clock.due_at - now)}"
    if state == ClockState.MET_LATE:
        return f"met {_verdict(clock)}"
    return state


@dataclass
class CheckResult:
    warned: int = 0
    missed: int = 0


def clocks_check(*, now: datetime.datetime | None = None) -> CheckResult:
    """Beat: warn the manager once about each clock about to run out, and
    tell them once about each clock missed. Each notice is recorded on the
    clock in the same transaction that queues it, and rows another worker
    holds are skipped, so nothing is said twice. A clock already missed when
    first seen gets only the missed notice. Closed issues' clocks are stopped."""
    now = now or timezone.now()
    result = CheckResult()
    running = Q(met_at__isnull=True) & ~Q(issue__status=Issue.Status.CLOSED)
    with transaction.atomic():
        missed = list(
            IssueClock.objects.select_for_update(of=("self",), skip_locked=True)
            .select_related("issue__organization", "issue__property")
            .filter(running, missed_at__isnull=True, due_at__lte=now)
        )
        for clock in missed:
            IssueClock.objects.filter(pk=clock.pk).update(missed_at=now, warned_at=clock.warned_at or now)
            what = clock.get_kind_display().lower()
            _manager_tell(clock, f"OVERDUE: {what} was due {_local(clock.issue, clock.due_at)}")
        result.missed = len(missed)
    with transaction.atomic():
        warn = list(
            IssueClock.objects.select_for_update(of=("self",), skip_locked=True)
            .select_related("issue__organization", "issue__property")
            .filter(running, warned_at__isnull=True, warn_at__lte=now, due_at__gt=now)
        )
        for clock in warn:
            IssueClock.objects.filter(pk=clock.pk).update(warned_at=now)
            left = duration_text(clock.due_at - now)
            what = clock.get_kind_display().lower()
            _manager_tell(clock, f"Due in {left}: {what} by {_local(clock.issue, clock.due_at)}")
        result.warned = len(warn)
    if result.warned or result.missed:
        logger.info("deadline clocks: %s warned, %s missed", result.warned, result.missed)
    return result


def _manager_tell(clock: IssueClock, headline: str) -> None:
    issue = clock.issue
    subject = f"[{issue.reference}] {headline}"
    body = f"{headline}.\n{issue.title}\nProperty: {issue.property}\nRule: {clock.rule}"
    landlord_tell(organization=issue.organization, subject=subject, body=body)
    IssueUpdate.objects.create(issue=issue, author=IssueUpdate.Author.SYSTEM, body=f"Manager told: {headline}.")
