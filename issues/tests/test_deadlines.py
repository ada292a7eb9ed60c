"""Deadline clocks on frozen clocks: started with the report or the
investigation, met by the landlord or by resolving, warned about once and
reported missed once."""

import datetime
import os
import subprocess
import sys
import zoneinfo
from pathlib import Path

import pytest
import time_machine
from django.core import mail
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from conversations.models import Message
from issues.deadlines import (
    AGENCY_POLICY,
    AWAAB_POLICY,
    ClockError,
    clock_meet,
    clock_summary,
    clocks_check,
    issue_clocks_sync,
)
from issues.models import DeadlinePolicy, Issue, IssueClock, IssueUpdate
from issues.status import issue_status_change
from properties.tests.factories import IssueFactory, OrganizationFactory, UserFactory

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db

LONDON = zoneinfo.ZoneInfo("Europe/London")
# Friday 18 December 2026, 16:00 in London: a weekend and Christmas ahead.
REPORTED = datetime.datetime(2026, 12, 18, 16, 0, tzinfo=LONDON)


def local(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime.datetime:
    return datetime.datetime(year, month, day, hour, minute, second, tzinfo=LONDON)


@pytest.fixture
def organization():
    return OrganizationFactory(notification_email="lettings@example.com", contact_whatsapp="+447700900111")


def awaab(organization):
    DeadlinePolicy.objects.filter(organization=organization).update(active=False)
    DeadlinePolicy.objects.filter(organization=organization, name=AWAAB_POLICY).update(active=True)


def report(organization, **fields):
    with time_machine.travel(REPORTED, tick=False):
        issue = IssueFactory(organization=organization, **fields)
        issue_clocks_sync(issue=issue)
    return issue


def clocks(issue):
    return {c.kind: c for c in IssueClock.objects.filter(issue=issue)}


def test_a_new_organization_gets_the_agency_policy_active_and_the_awaab_policy_to_choose(organization):
    policies = {p.name: p for p in DeadlinePolicy.objects.filter(organization=organization)}
    assert set(policies) == {AGENCY_POLICY, AWAAB_POLICY}
    assert policies[AGENCY_POLICY].active and not policies[AWAAB_POLICY].active
    assert policies[AWAAB_POLICY].rules.count() == 5
    with pytest.raises(IntegrityError), transaction.atomic():
        DeadlinePolicy.objects.filter(pk=policies[AWAAB_POLICY].pk).update(active=True)


def test_an_emergency_hazard_under_awaab_must_be_made_safe_in_24_calendar_hours(organization):
    awaab(organization)
    issue = report(organization, urgency="emergency", category="heating")
    running = clocks(issue)
    assert set(running) == {"made_safe", "investigated"}
    assert running["made_safe"].due_at == local(2026, 12, 19, 16, 0)  # a Saturday: hours, not working days


def test_a_damp_hazard_is_investigated_in_10_working_days_then_summary_and_works_run_from_the_investigation(
    organization,
):
    awaab(organization)
    issue = report(organization, urgency="routine", category="damp_mould")
    assert set(clocks(issue)) == {"investigated"}
    # Fri 18 Dec: Mon 21 .. Thu 24 (4), Tue 29 .. Thu 31 (7), Mon 4 .. Wed 6 Jan (10).
    assert clocks(issue)["investigated"].due_at == local(2027, 1, 6, 23, 59, 59)

    with time_machine.travel(local(2027, 1, 5, 11, 0), tick=False):
        clock_meet(issue=issue, kind="investigated", actor=UserFactory(username="sam"))
    running = clocks(issue)
    assert running["investigated"].met_at == local(2027, 1, 5, 11, 0)
    assert running["summary_sent"].due_at == local(2027, 1, 8, 23, 59, 59)  # Tue + 3 working days
    assert running["works_started"].due_at == local(2027, 1, 12, 23, 59, 59)  # Tue + 5, over a weekend
    line = IssueUpdate.objects.filter(issue=issue).latest("id")
    assert line.body.startswith("Investigated recorded by sam") and "in time" in line.body


def test_the_agency_policy_runs_a_routine_repair_to_20_working_days(organization):
    issue = report(organization, urgency="routine", category="plumbing")
    assert set(clocks(issue)) == {"resolved"}
    assert clocks(issue)["resolved"].due_at == local(2027, 1, 20, 23, 59, 59)


def test_the_warning_comes_its_hours_before_the_due_time_across_a_clock_change(organization):
    """Due on Monday 29 March 2027 in London, two days after the clocks went
    forward: a 48-hour warning comes 48 real hours before (wall-clock
    arithmetic made it 47)."""
    from issues.models import DeadlineRule

    DeadlinePolicy.objects.filter(organization=organization, active=True).update(warn_before_hours=48)
    DeadlineRule.objects.filter(policy__organization=organization, policy__active=True).update(
        unit="calendar_days", amount=2
    )
    with time_machine.travel(local(2027, 3, 27, 10), tick=False):
        issue = IssueFactory(organization=organization, urgency="routine", category="plumbing")
        issue_clocks_sync(issue=issue)
    clock = clocks(issue)["resolved"]
    assert clock.due_at == local(2027, 3, 29, 23, 59, 59)
    assert clock.due_at - clock.warn_at == datetime.timedelta(hours=48)  # read back in UTC: real hours


def test_a_change_of_urgency_re_aims_unmet_clocks_and_drops_those_no_rule_asks_for(organization):
    issue = report(organization, urgency="routine", category="plumbing")
    Issue.objects.filter(pk=issue.pk).update(urgency="emergency")
    issue.refresh_from_db()
    with time_machine.travel(REPORTED + datetime.timedelta(hours=1), tick=False):
        issue_clocks_sync(issue=issue)
    running = clocks(issue)
    assert set(running) == {"made_safe", "resolved"}
    assert running["made_safe"].due_at == local(2026, 12, 19, 16, 0)  # from the report, not from the change
    assert running["resolved"].due_at == local(2026, 12, 25, 23, 59, 59)  # 7 calendar days


def test_resolving_meets_the_work_clocks_but_the_written_summary_is_still_owed_and_reopening_restarts(organization):
    awaab(organization)
    issue = report(organization, urgency="routine", category="damp_mould")
    with time_machine.travel(local(2026, 12, 21, 9, 0), tick=False):
        clock_meet(issue=issue, kind="investigated")
        issue_status_change(issue=issue, status="resolved")
    running = clocks(issue)
    assert running["works_started"].met_at is not None
    assert running["summary_sent"].met_at is None

    DeadlinePolicy.objects.filter(organization=organization).update(active=False)
    DeadlinePolicy.objects.filter(organization=organization, name=AGENCY_POLICY).update(active=True)
    agency_issue = report(organization, urgency="urgent", category="plumbing")
    with time_machine.travel(local(2026, 12, 21, 9, 0), tick=False):
        issue_status_change(issue=agency_issue, status="resolved")
    assert clocks(agency_issue)["resolved"].met_at is not None
    with time_machine.travel(local(2026, 12, 22, 9, 0), tick=False):
        issue_status_change(issue=agency_issue, status="open")
    assert clocks(agency_issue)["resolved"].met_at is None


def test_a_clock_is_met_once_never_in_the_future_and_only_if_the_issue_has_it(organization):
    issue = report(organization, urgency="routine", category="plumbing")
    with time_machine.travel(local(2026, 12, 21, 9, 0), tick=False):
        with pytest.raises(ClockError, match="no 'made safe' deadline"):
            clock_meet(issue=issue, kind="made_safe")
        with pytest.raises(ClockError, match="in the future"):
            clock_meet(issue=issue, kind="resolved", at=local(2026, 12, 22, 9, 0))
        with pytest.raises(ClockError, match="before the clock started"):
            clock_meet(issue=issue, kind="resolved", at=local(2026, 12, 1, 9, 0))
        clock_meet(issue=issue, kind="resolved")
        with pytest.raises(ClockError, match="recorded already"):
            clock_meet(issue=issue, kind="resolved")


def test_the_manager_is_warned_once_before_the_clock_runs_out_and_told_once_when_it_is_missed(
    organization, django_capture_on_commit_callbacks
):
    awaab(organization)
    issue = report(organization, urgency="emergency", category="gas")
    due = local(2026, 12, 19, 16, 0)

    with time_machine.travel(due - datetime.timedelta(hours=5), tick=False):
        assert clocks_check().warned == 0  # warn_before_hours is 4
    with time_machine.travel(due - datetime.timedelta(hours=3), tick=False):
        with django_capture_on_commit_callbacks(execute=True):
            result = clocks_check()
        assert (result.warned, result.missed) == (2, 0)
        assert clock_summary(
            clocks(issue)["made_safe"], now=due - datetime.timedelta(hours=3), issue_status="open"
        ) == ("due in 3 h")
        assert clocks_check().warned == 0  # once
    texts = Message.objects.filter(to_address="whatsapp:+447700900111", raw_payload__purpose="landlord_alert")
    assert {m.body.split("]")[1].strip() for m in texts} == {
        "Due in 3 h: made safe by Sat 19 Dec 2026 16:00",
        "Due in 3 h: investigated by Sat 19 Dec 2026 16:00",
    }
    assert len(mail.outbox) == 2 and mail.outbox[0].to == ["lettings@example.com"]

    with time_machine.travel(due + datetime.timedelta(minutes=10), tick=False):
        clock_meet(issue=issue, kind="investigated", at=due - datetime.timedelta(hours=1))
        result = clocks_check()
        assert (result.warned, result.missed) == (0, 1)
        assert clocks_check().missed == 0
    assert texts.all().count() == 3
    assert texts.all().latest("id").body.endswith("OVERDUE: made safe was due Sat 19 Dec 2026 16:00")
    history = list(
        IssueUpdate.objects.filter(issue=issue, body__startswith="Manager told").values_list("body", flat=True)
    )
    assert len(history) == 3


def test_a_clock_first_seen_after_its_due_time_gets_only_the_missed_notice_and_closed_issues_none(organization):
    issue = report(organization, urgency="routine", category="plumbing")
    closed = report(organization, urgency="routine", category="plumbing")
    Issue.objects.filter(pk=closed.pk).update(status="closed")
    with time_machine.travel(local(2027, 2, 1, 9, 0), tick=False):
        result = clocks_check()
    assert (result.warned, result.missed) == (0, 1)
    clock = clocks(issue)["resolved"]
    assert clock.missed_at is not None and clock.warned_at is not None
    assert clocks(closed)["resolved"].missed_at is None


def test_resolving_before_the_investigation_is_recorded_still_starts_the_written_summarys_clock(organization):
    awaab(organization)
    issue = report(organization, urgency="routine", category="damp_mould")
    with time_machine.travel(local(2026, 12, 21, 9, 0), tick=False):
        issue_status_change(issue=issue, status="resolved")
    running = clocks(issue)
    assert running["investigated"].met_at == local(2026, 12, 21, 9, 0)
    assert running["works_started"].met_at == local(2026, 12, 21, 9, 0)
    assert running["summary_sent"].met_at is None
    assert running["summary_sent"].due_at == local(2026, 12, 24, 23, 59, 59)  # Mon + 3 working days


def test_a_closed_issue_starts_no_clock_when_its_urgency_changes(organization):
    issue = report(organization, urgency="routine", category="plumbing")
    Issue.objects.filter(pk=issue.pk).update(status="closed", urgency="emergency")
    issue.refresh_from_db()
    issue_clocks_sync(issue=issue)
    assert set(clocks(issue)) == {"resolved"}  # the old unmet one stays as history; no made-safe clock starts


def test_closing_with_a_deadline_still_owed_says_so_in_the_history(organization):
    awaab(organization)
    issue = report(organization, urgency="routine", category="damp_mould")
    with time_machine.travel(local(2027, 1, 5, 11, 0), tick=False):
        clock_meet(issue=issue, kind="investigated", actor=UserFactory())  # the written summary is owed from now
        issue_status_change(issue=issue, status="closed", actor=UserFactory())
    line = IssueUpdate.objects.filter(issue=issue).latest("id").body
    assert "Closed with deadlines not met, which stop now: Written summary sent (due 08 Jan 2027 23:59)" in line


def test_an_investigation_recorded_on_a_closed_issue_starts_no_clock(organization):
    awaab(organization)
    issue = report(organization, urgency="routine", category="damp_mould")
    issue_status_change(issue=issue, status="closed", actor=UserFactory())
    with time_machine.travel(local(2027, 1, 5, 11, 0), tick=False):
        clock_meet(issue=issue, kind="investigated", actor=UserFactory(username="sam"))  # filled in afterwards
    assert set(clocks(issue)) == {"investigated"}  # no written summary or works owed on a closed issue


def test_an_unknown_time_zone_is_refused_by_the_form(organization):
    organization.timezone = "America/New York"  # read as UTC, every deadline would be hours out
    with pytest.raises(ValidationError, match="Unknown time zone"):
        organization.full_clean()
    organization.timezone = "America/New_York"
    organization.full_clean()


def test_an_unknown_holiday_region_is_refused_by_the_form_and_never_breaks_a_report(organization):
    organization.holiday_region = "XX"
    with pytest.raises(ValidationError, match="No public holidays"):
        organization.full_clean()
    organization.save()  # set some other way: deadlines fall back to the country's own holidays
    issue = report(organization, urgency="routine", category="plumbing")
    assert clocks(issue)["resolved"].due_at is not None


def test_the_default_policies_receiver_outlives_a_garbage_collection_in_a_fresh_process():
    """Held weakly, the receiver was gone with DEBUG off, as in production (the
    simulation's organization got no policies); with DEBUG on, as in tests,
    something happened to keep it alive."""
    check = (
        "import gc, django; django.setup(); gc.collect();"
        "from django.db.models.signals import post_save; from properties.models import Organization;"
        "print(any(getattr(r, '__name__', '') == '_policies' for r in post_save._live_receivers(Organization)[0]))"
    )
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": "postgres://unused/unused",
        "DJANGO_DEBUG": "false",
    }
    out = subprocess.run([sys.executable, "-c", check], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "True"
