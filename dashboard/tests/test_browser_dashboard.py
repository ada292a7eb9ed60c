"""The dashboard in a real browser: headless Chromium (Debian's ``chromium``
package) driven by Playwright against the live test server, started exactly
as ``properties/tests/test_browser_workplace.py`` starts it.

Alice logs in and opens the dashboard from the admin's home page: every chart
is drawn (an SVG with a size on the page), with as many bars and points as her
figures have, none of Bob's. A screenshot goes to pytest's ``tmp_path``, and
to ``$DASHBOARD_SCREENSHOT`` when that is set."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from django.utils import timezone

from dashboard.figures import dashboard_figures
from dashboard.tests.builders import DAY, HOUR, MINUTE, clock_at, issue_at, job_at, note_at
from issues.models import ClockKind, Job
from properties.tests.factories import PropertyFactory
from properties.tests.persona import PASSWORD, alice_and_bob
from properties.working_time import zone_get

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def populate(world) -> None:
    """Eight weeks of an agency's repairs: reported, answered, made safe,
    resolved and rated, with deadlines met and missed, and a contractor."""
    now = timezone.now()
    organization = world.organization
    homes = [world.property, *(PropertyFactory.create(organization=organization, code=f"FLAT-{n}") for n in range(3))]
    categories = ["plumbing", "heating", "electrical", "damp_mould"]
    urgencies = ["routine", "urgent", "emergency", "routine"]
    for n in range(32):
        created = now - (n * 40 % 54 + 1) * DAY - (n % 7) * HOUR
        resolved = created + (3 + n * 5 % 60) * HOUR
        done = resolved < now - HOUR
        issue = issue_at(
            organization,
            property=homes[n % len(homes)],
            created=created,
            urgency=urgencies[n % 4],
            category=categories[n % 4],
            status="closed" if done else "acknowledged",
            acknowledged=created + (1 + n % 9) * HOUR,
            resolved=resolved if done else None,
            rating=(n % 5) + 1 if done and n % 3 else None,
        )
        if n % 4 == 0:
            note_at(issue, created + (n % 3 + 1) * 20 * MINUTE)
        due = created + 48 * HOUR
        clock_at(issue, started=created, due=due, met=resolved if done else None, missed=due if not done else None)
        if issue.urgency == "emergency":
            clock_at(issue, ClockKind.MADE_SAFE, started=created, due=created + DAY, met=created + (2 + n % 30) * HOUR)
        if n % 3 == 0:
            job_at(
                issue, world.contractor, offered=created + HOUR, state=Job.State.ACCEPTED, responded=created + 2 * HOUR
            )
    for age in (2 * DAY, 10 * DAY, 40 * DAY):  # open issues of several ages
        issue_at(organization, created=now - age, urgency="urgent")


@pytest.mark.browser
def test_the_dashboard_draws_its_charts(live_server, browser_page, tmp_path):
    alice, bob = alice_and_bob()
    populate(alice)
    populate(bob)
    page = browser_page

    # Log in, then follow the home page's link.
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", alice.user.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.click("text=The dashboard")
    page.wait_for_selector("#dashboard svg.chart")

    # What the page should draw: Alice's own figures.
    figures = dashboard_figures(organization_ids=[alice.organization.pk], zone=zone_get(alice.organization.timezone))
    charts = page.locator("#dashboard svg.chart")
    assert charts.count() == 9
    for n in range(charts.count()):
        box = charts.nth(n).bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 30, charts.nth(n).get_attribute("id")

    open_cells = sum(1 for count in figures.open_by_age.counts.values() if count)
    assert open_cells >= 3
    bars = page.locator("#chart-open-by-age rect.bar")
    assert bars.count() == open_cells
    for n in range(bars.count()):
        box = bars.nth(n).bounding_box()
        assert box is not None and box["height"] > 0 and box["width"] > 0

    resolve = next(d for d in figures.durations if d.key == "resolve")
    weeks_with_figures = sum(1 for week in resolve.weeks if week.count)
    assert weeks_with_figures >= 4
    assert page.locator("#chart-resolve circle.point").count() == 2 * weeks_with_figures

    rated = sum(1 for count in figures.ratings.counts.values() if count)
    assert page.locator("#chart-ratings rect.bar").count() == rated == 5
    assert page.locator("#chart-deadlines rect.bar").count() == len(figures.deadlines.kinds) + 1
    assert page.locator("#chart-by-property rect.bar").count() == len(figures.by_property.rows)
    assert page.locator("#dashboard .no-data").count() == 0

    # Only Alice's agency: none of Bob's homes or his contractor.
    text = page.inner_text("#dashboard")
    assert alice.property.code in text and bob.property.code not in text
    assert bob.contractor.name not in text

    # A chart's tooltip carries its figure.
    first_point = page.locator("#chart-resolve circle.point title").first.text_content() or ""
    assert first_point.startswith("Week of ") and "median" in first_point

    screenshot = tmp_path / "dashboard.png"
    page.screenshot(path=str(screenshot), full_page=True)
    data = screenshot.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 50_000  # a full page of charts, not a blank one
    if target := os.environ.get("DASHBOARD_SCREENSHOT"):
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(screenshot, target)
