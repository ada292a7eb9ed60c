"""The charts: well-formed SVG with one bar per non-zero figure and one point
per value, sized by the figures, every label escaped, and "No data yet"
instead of empty axes. No database: the charts are pure functions."""

from __future__ import annotations

import datetime
import xml.etree.ElementTree as ET

import pytest

from dashboard import charts
from dashboard.figures import (
    AGE_BUCKETS,
    URGENCIES,
    Breakdown,
    BreakdownRow,
    DeadlineRow,
    Deadlines,
    OpenByAge,
    Ratings,
    Week,
    WeeklyDurations,
)

SVG = "{http://www.w3.org/2000/svg}"
HOUR = datetime.timedelta(hours=1)


def parse(svg: str) -> ET.Element:
    """The SVG as XML: an unescaped '<' or '&' in a label would not parse."""
    return ET.fromstring(str(svg))  # noqa: S314 - our own output, parsed to check it is well-formed


def elements(root: ET.Element, tag: str, cls: str) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}{tag}") if e.get("class") == cls]


def tooltips(nodes: list[ET.Element]) -> list[str]:
    return [node.find(f"{SVG}title").text or "" for node in nodes]  # type: ignore[union-attr]


def open_by_age(counts: dict[tuple[str, str], int]) -> OpenByAge:
    return OpenByAge(buckets=[label for _, label in AGE_BUCKETS], urgencies=URGENCIES, counts=counts)


def test_open_issues_are_one_stacked_bar_segment_per_non_zero_count():
    counts = {("under 1 day", "emergency"): 2, ("under 1 day", "routine"): 4, ("1-4 weeks", "urgent"): 1}
    root = parse(charts.open_by_age_chart(open_by_age(counts)))
    assert root.get("role") == "img"
    assert root.find(f"{SVG}title").text == "Open issues by age and urgency"
    assert root.get("aria-labelledby") == "chart-open-by-age-title chart-open-by-age-desc"
    bars = elements(root, "rect", "bar")
    assert len(bars) == len(counts)
    # Heights are proportional to the counts, and the segments of a column stack.
    heights = {t: float(b.get("height", 0)) for t, b in zip(tooltips(bars), bars, strict=True)}
    assert heights["under 1 day, Routine: 4"] == pytest.approx(2 * heights["under 1 day, Emergency: 2"])
    assert heights["1-4 weeks, Urgent: 1"] == pytest.approx(heights["under 1 day, Emergency: 2"] / 2)
    emergency, routine = bars[0], bars[1]
    assert float(routine.get("y", 0)) + float(routine.get("height", 0)) == pytest.approx(float(emergency.get("y", 0)))
    assert [t.text for t in elements(root, "text", "total")] == ["6", "1"]
    assert [t.text for t in elements(root, "text", "category")] == [label for _, label in AGE_BUCKETS]


def weekly(values: list[tuple[int, datetime.timedelta | None, datetime.timedelta | None]]) -> WeeklyDurations:
    monday = datetime.date(2026, 11, 2)
    weeks = [Week(monday + datetime.timedelta(weeks=n), c, m, p) for n, (c, m, p) in enumerate(values)]
    return WeeklyDurations(key="resolve", title="Time to resolve", measure="from the report", weeks=weeks)


def test_a_duration_chart_has_a_point_per_weekly_figure_and_breaks_at_empty_weeks():
    figures = weekly([(3, 2 * HOUR, 5 * HOUR), (0, None, None), (2, HOUR, 4 * HOUR), (1, 3 * HOUR, 3 * HOUR)])
    root = parse(charts.durations_chart(figures))
    points = elements(root, "circle", "point")
    assert len(points) == 6  # three weeks with figures x (median, 90th percentile)
    lines = elements(root, "polyline", "line")
    assert [len((line.get("points") or "").split()) for line in lines] == [2, 2]  # weeks 3-4 of each series
    assert "Week of 2 Nov 2026: median 2 h (3 in all)" in tooltips(points)
    assert "Week of 16 Nov 2026: 90th percentile 4 h (2 in all)" in tooltips(points)
    # The scale is in hours here, and a higher value sits higher.
    median_points = {t: float(p.get("cy", 0)) for t, p in zip(tooltips(points), points, strict=True)}
    assert (
        median_points["Week of 2 Nov 2026: median 2 h (3 in all)"]
        < median_points["Week of 16 Nov 2026: median 1 h (2 in all)"]
    )
    assert "in h," in (root.find(f"{SVG}desc").text or "")


def test_the_duration_unit_suits_the_longest_value():
    assert charts.duration_unit([datetime.timedelta(minutes=40), None]) == ("min", 60.0)
    assert charts.duration_unit([30 * HOUR]) == ("h", 3600.0)
    assert charts.duration_unit([5 * 24 * HOUR]) == ("days", 86400.0)
    assert charts.duration_text(90 * HOUR) == "3.8 days"
    assert charts.duration_text(None) == "–"


def test_deadline_bars_are_as_long_as_their_percentage():
    kinds = [DeadlineRow("Made safe", decided=4, inside=4), DeadlineRow("Resolved", decided=4, inside=2)]
    root = parse(charts.deadlines_chart(Deadlines(kinds)))
    bars = elements(root, "rect", "bar")
    assert len(bars) == 3  # two kinds and the overall figure
    widths = [float(b.get("width", 0)) for b in bars]
    assert widths[1] == pytest.approx(widths[0] / 2)
    assert widths[2] == pytest.approx(widths[0] * 6 / 8)
    assert tooltips(bars) == ["Made safe: 100% (4 of 4)", "Resolved: 50% (2 of 4)", "All deadlines: 75% (6 of 8)"]


def test_a_deadline_kind_at_zero_percent_shows_its_figure_but_no_bar():
    root = parse(charts.deadlines_chart(Deadlines([DeadlineRow("Made safe", decided=3, inside=0)])))
    assert elements(root, "rect", "bar") == []
    assert [t.text for t in elements(root, "text", "figure")] == ["0% (0 of 3)", "0% (0 of 3)"]


def test_labels_are_escaped():
    hostile = '<script>alert("x")</script> & Sons'
    rows = [BreakdownRow(label=hostile, reported=3), BreakdownRow(label="Plain", reported=1)]
    svg = str(charts.breakdown_chart(Breakdown("Per property", rows), chart_id='by-property"><script>'))
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg and "&amp; Sons" in svg
    root = parse(svg)  # still well-formed XML
    bars = elements(root, "rect", "bar")
    assert len(bars) == 2
    assert tooltips(bars)[0] == f"{hostile}: 3"  # the parser unescapes: the text is the name itself
    labels = [e for e in root.iter(f"{SVG}text") if e.get("class") == "label"]
    assert labels[0].find(f"{SVG}title").text == hostile


def test_long_labels_are_shortened_on_the_chart_but_whole_in_the_tooltip():
    name = "Flat 12, The Very Long Building Name, Upper Street"
    root = parse(charts.breakdown_chart(Breakdown("Per property", [BreakdownRow(name, reported=2)]), chart_id="p"))
    [label] = [e for e in root.iter(f"{SVG}text") if e.get("class") == "label"]
    assert label.find(f"{SVG}title").text == name
    shown = "".join(label.itertext())[len(name) :]
    assert shown.endswith("…") and len(shown) <= charts.LABEL_CHARS


def test_ratings_are_five_columns_with_their_counts():
    root = parse(charts.ratings_chart(Ratings({1: 1, 2: 0, 3: 2, 4: 0, 5: 6})))
    bars = elements(root, "rect", "bar")
    assert tooltips(bars) == ["Rated 1: 1", "Rated 3: 2", "Rated 5: 6"]
    assert float(bars[2].get("height", 0)) == pytest.approx(3 * float(bars[1].get("height", 0)))
    assert "average 4.11" in (root.find(f"{SVG}desc").text or "")


@pytest.mark.parametrize(
    "svg",
    [
        charts.open_by_age_chart(open_by_age({})),
        charts.durations_chart(weekly([(0, None, None)] * 4)),
        charts.deadlines_chart(Deadlines([])),
        charts.ratings_chart(Ratings(dict.fromkeys(range(1, 6), 0))),
        charts.breakdown_chart(Breakdown("Per property", []), chart_id="empty"),
        charts.line_chart(chart_id="x", title="t", description="d", categories=[], series=[], unit=""),
    ],
)
def test_no_data_draws_no_bars_and_says_so(svg):
    root = parse(svg)
    assert not elements(root, "rect", "bar") and not elements(root, "circle", "point")
    assert [t.text for t in elements(root, "text", "no-data")] == ["No data yet"]


@pytest.mark.parametrize(
    ("value", "expected"), [(0, 1), (0.3, 0.5), (1, 1), (7, 10), (11, 20), (24, 25), (26, 50), (1234, 2000)]
)
def test_the_scale_ends_at_a_round_number(value, expected):
    assert charts.nice_ceiling(value) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("value", "whole", "expected"),
    [(5, True, 8), (2, True, 4), (2, False, 2), (52, False, 80), (100, False, 100), (0, True, 4)],
)
def test_a_scale_has_four_round_steps(value, whole, expected):
    top = charts.scale_top(value, whole=whole)
    assert top == pytest.approx(expected)
    assert top >= value
    if whole:
        assert (top / 4).is_integer()
