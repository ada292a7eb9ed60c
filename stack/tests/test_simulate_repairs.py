"""The zero-touch simulation, small: tenants report through the signed
webhook, scripted contractors answer, beat and a scripted landlord run on a
frozen clock. What it reports must follow from how the contractors behave."""

from __future__ import annotations

import datetime

import pytest
import time_machine

from issues.models import Appointment, Job
from stack.simulate_repairs import Setup, simulate

MONDAY = datetime.datetime(2026, 11, 30, 8, 0, tzinfo=datetime.UTC)


@pytest.fixture(autouse=True)
def _quiet(settings):
    settings.INBOUND_COALESCE_SECONDS = 0
    settings.EMERGENCY_CLASSIFIER = "off"  # the rules alone find the gas smell


def run(**changes):
    with time_machine.travel(MONDAY, tick=False) as clock:
        return simulate(Setup(tenants=8, days=4, seed=3, **changes), clock=clock, start=MONDAY)


@pytest.mark.django_db
def test_cooperating_contractors_book_every_routine_repair_and_emergencies_are_made_safe_in_time():
    result = run(accept=1.0, decline=0.0, emergency_share=0.25, typed_times=0.5, missed_visit=0.0)
    assert result.routine > 0 and result.zero_touch == result.routine
    assert len(result.booking_hours) == result.routine and all(h > 0 for h in result.booking_hours)
    made_safe = result.clocks["emergency made safe"]
    assert made_safe["missed"] == 0 and made_safe["met"] > 0
    assert result.clocks["routine resolved"]["met"] > 0  # Fixed, then the tenant's Yes
    assert result.need_a_person == result.surfaced and not result.unsurfaced  # the emergencies
    assert Appointment.objects.filter(booked_at__isnull=False).count() == result.routine


@pytest.mark.django_db
def test_silent_contractors_leave_every_repair_to_a_person_and_the_home_page_shows_each():
    result = run(accept=0.0, decline=0.0, emergency_share=0.0)
    assert result.zero_touch == 0 and result.routine == 8
    assert not Job.objects.filter(state__in=["offered", "accepted"]).exists()  # all lapsed, up to the limit
    assert result.need_a_person == 8 and result.unsurfaced == []
    assert "routine reports booked with no landlord action: 0/8 (0%)" in result.lines()
