"""The dashboard's charts as server-rendered SVG: no JavaScript, nothing
fetched from elsewhere.

Pure functions: figures in, a safe SVG string out. Every piece of text that
reaches the SVG (a property's name, a label, a tooltip) goes through
``escape``; numbers are formatted here. Each chart is an ``<svg role="img">``
named by its ``<title>`` and ``<desc>`` (``aria-labelledby``), and each bar or
point carries its own ``<title>`` with the figure, which browsers show as a
tooltip; the page puts the same numbers in a table beside it.

Drawn elements have classes the tests count: ``bar`` (a rectangle per non-zero
value) and ``point`` (a circle per value of a line). A chart with nothing to
draw says "No data yet" instead of drawing empty axes.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from dashboard.figures import Breakdown, Deadlines, OpenByAge, Ratings, WeeklyDurations

WIDTH = 640
PLOT_HEIGHT = 180
TOP = 34  # room for the legend
BOTTOM = 30  # room for the category labels
LEFT = 48  # room for the scale
RIGHT = 12
BAR_ROW = 24  # one row of a horizontal bar chart
LABEL_WIDTH = 190  # a horizontal bar's label
LABEL_CHARS = 28

URGENCY_COLORS = {"emergency": "#c0392b", "urgent": "#e69a28", "routine": "#4a78a8"}
MEDIAN_COLOR = "#205067"
P90_COLOR = "#d9822b"
BAR_COLOR = "#4a78a8"
RATING_COLORS = {1: "#c0392b", 2: "#e67e22", 3: "#d4b106", 4: "#7cb342", 5: "#2e7d32"}
NO_DATA = "No data yet"


@dataclass(frozen=True)
class Series:
    label: str
    values: Sequence[float | None]
    color: str
    texts: Sequence[str] | None = None  # each value's tooltip; default: the label, category and value


@dataclass(frozen=True)
class Bar:
    label: str
    value: float | None
    text: str  # the figure written beside the bar, and its tooltip
    color: str = BAR_COLOR


# --- helpers ---


def _e(value: object) -> str:
    return str(escape(str(value)))


def _n(value: float) -> str:
    """A coordinate: at most one decimal, no trailing zeros."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def number(value: float, decimals: int = 1) -> str:
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 or 10 times a power of ten that is at least ``value``."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power * (1 + 1e-9):
            return step * power
    return 10 * power


def scale_top(value: float, *, whole: bool = False) -> float:
    """Where a scale of four round steps ends, at or above ``value``; with
    ``whole`` (counts) each step is a whole number."""
    step = nice_ceiling(value / 4)
    if whole:
        step = max(1.0, math.ceil(step))
    return 4 * step


def shorten(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def duration_unit(values: Iterable[datetime.timedelta | None]) -> tuple[str, float]:
    """The unit that suits the largest of ``values``: (name, seconds in it)."""
    longest = max((v.total_seconds() for v in values if v is not None), default=0.0)
    if longest < 2 * 3600:
        return "min", 60.0
    if longest < 72 * 3600:
        return "h", 3600.0
    return "days", 86400.0


def duration_text(value: datetime.timedelta | None, unit: tuple[str, float] | None = None) -> str:
    """'45 min', '5.2 h', '3.5 days' (in ``unit``, default the one that suits
    the value); an en dash for no value."""
    if value is None:
        return "–"
    name, seconds = unit or duration_unit([value])
    return f"{number(value.total_seconds() / seconds)} {name}"


def percent_text(value: float | None) -> str:
    return "–" if value is None else f"{number(value)}%"


def _svg(chart_id: str, title: str, description: str, height: float, body: str) -> SafeString:
    ident = _e(chart_id)
    return mark_safe(  # noqa: S308 - every piece of text above went through _e
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{ident}" class="chart" role="img" '
        f'aria-labelledby="{ident}-title {ident}-desc" viewBox="0 0 {WIDTH} {_n(height)}" '
        f'width="{WIDTH}" height="{_n(height)}" font-family="sans-serif" font-size="11">'
        f'<title id="{ident}-title">{_e(title)}</title><desc id="{ident}-desc">{_e(description)}</desc>'
        f"{body}</svg>"
    )


def _no_data(chart_id: str, title: str, description: str) -> SafeString:
    height = 60
    body = (
        f'<text class="no-data" x="{WIDTH / 2:g}" y="{height / 2 + 4:g}" text-anchor="middle" '
        f'fill="#777" font-size="13">{NO_DATA}</text>'
    )
    return _svg(chart_id, title, f"{description} {NO_DATA}.", height, body)


def _legend(series: Sequence[Series | tuple[str, str]]) -> str:
    parts = []
    x = float(LEFT)
    for item in series:
        label, color = (item.label, item.color) if isinstance(item, Series) else item
        parts.append(
            f'<g class="legend-item"><rect x="{_n(x)}" y="8" width="10" height="10" fill="{_e(color)}"/>'
            f'<text x="{_n(x + 14)}" y="17">{_e(label)}</text></g>'
        )
        x += 28 + 6.5 * len(label)
    return "".join(parts)


def _scale(top: float, unit: str) -> str:
    """Horizontal grid lines and their values at 0, 1/4 ... 4/4 of ``top``."""
    parts = []
    for step in range(5):
        value = top * step / 4
        y = TOP + PLOT_HEIGHT - PLOT_HEIGHT * step / 4
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{_n(y)}" y2="{_n(y)}" stroke="#e3e3e3"/>'
            f'<text x="{LEFT - 6}" y="{_n(y + 4)}" text-anchor="end" fill="#555">{_e(number(value))}</text>'
        )
    parts.append(
        f'<text x="4" y="{TOP - 8}" fill="#555">{_e(unit)}</text>' if unit else "",
    )
    return "".join(parts)


def _category_labels(categories: Sequence[str], slot: float) -> str:
    return "".join(
        f'<text class="category" x="{_n(LEFT + slot * (n + 0.5))}" y="{TOP + PLOT_HEIGHT + 16}" '
        f'text-anchor="middle" fill="#333">{_e(shorten(label, 16))}</text>'
        for n, label in enumerate(categories)
    )


# --- the three kinds of chart ---


def stacked_bars(
    *, chart_id: str, title: str, description: str, categories: Sequence[str], series: Sequence[Series], unit: str
) -> SafeString:
    """One column per category, each series stacked on the one before; a
    zero draws nothing."""
    totals = [sum(s.values[n] or 0 for s in series) for n in range(len(categories))]
    if not categories or not any(totals):
        return _no_data(chart_id, title, description)
    top = scale_top(max(totals), whole=True)
    slot = (WIDTH - LEFT - RIGHT) / len(categories)
    width = min(slot * 0.6, 80)
    parts = [_legend(series) if len(series) > 1 else "", _scale(top, unit)]
    for n, category in enumerate(categories):
        base = float(TOP + PLOT_HEIGHT)
        x = LEFT + slot * n + (slot - width) / 2
        for s in series:
            value = s.values[n] or 0
            if value <= 0:
                continue
            height = PLOT_HEIGHT * value / top
            base -= height
            text = s.texts[n] if s.texts else f"{category}, {s.label}: {number(value)}"
            parts.append(
                f'<rect class="bar" x="{_n(x)}" y="{_n(base)}" width="{_n(width)}" height="{_n(height)}" '
                f'fill="{_e(s.color)}"><title>{_e(text)}</title></rect>'
            )
        if len(series) > 1 and totals[n]:
            parts.append(
                f'<text class="total" x="{_n(x + width / 2)}" y="{_n(base - 4)}" text-anchor="middle" '
                f'fill="#333">{_e(number(totals[n]))}</text>'
            )
    parts.append(_category_labels(categories, slot))
    return _svg(chart_id, title, description, TOP + PLOT_HEIGHT + BOTTOM, "".join(parts))


def line_chart(
    *, chart_id: str, title: str, description: str, categories: Sequence[str], series: Sequence[Series], unit: str
) -> SafeString:
    """A point per value and lines between neighbouring values; a missing
    value (None) leaves a gap."""
    values = [v for s in series for v in s.values if v is not None]
    if not categories or not values:
        return _no_data(chart_id, title, description)
    top = scale_top(max(values))
    slot = (WIDTH - LEFT - RIGHT) / len(categories)
    parts = [_legend(series), _scale(top, unit)]
    for s in series:
        points: list[tuple[float, float] | None] = []
        for n, value in enumerate(s.values):
            if value is None:
                points.append(None)
                continue
            points.append((LEFT + slot * (n + 0.5), TOP + PLOT_HEIGHT - PLOT_HEIGHT * value / top))
        run: list[tuple[float, float]] = []
        for point in [*points, None]:
            if point is not None:
                run.append(point)
                continue
            if len(run) > 1:
                coordinates = " ".join(f"{_n(x)},{_n(y)}" for x, y in run)
                parts.append(
                    f'<polyline class="line" points="{coordinates}" fill="none" stroke="{_e(s.color)}" '
                    f'stroke-width="2"/>'
                )
            run = []
        for n, point in enumerate(points):
            if point is None:
                continue
            value = s.values[n]
            assert value is not None
            text = s.texts[n] if s.texts else f"{s.label}, {categories[n]}: {number(value)} {unit}".rstrip()
            parts.append(
                f'<circle class="point" cx="{_n(point[0])}" cy="{_n(point[1])}" r="4" fill="{_e(s.color)}">'
                f"<title>{_e(text)}</title></circle>"
            )
    parts.append(_category_labels(categories, slot))
    return _svg(chart_id, title, description, TOP + PLOT_HEIGHT + BOTTOM, "".join(parts))


def horizontal_bars(
    *, chart_id: str, title: str, description: str, bars: Sequence[Bar], maximum: float | None = None
) -> SafeString:
    """One row per bar: the label, the bar, the figure. A bar with no value
    (None) shows its text and no bar; ``maximum`` is the scale's end (default:
    the largest value)."""
    values = [b.value for b in bars if b.value is not None]
    if not bars or not values:
        return _no_data(chart_id, title, description)
    top = maximum if maximum else nice_ceiling(max(values))
    plot = WIDTH - LABEL_WIDTH - RIGHT - 60
    parts = []
    for n, bar in enumerate(bars):
        y = 8 + n * BAR_ROW
        parts.append(
            f'<text class="label" x="{LABEL_WIDTH - 8}" y="{y + 13}" text-anchor="end" fill="#333">'
            f"<title>{_e(bar.label)}</title>{_e(shorten(bar.label))}</text>"
        )
        width = 0.0
        if bar.value is not None and bar.value > 0:
            width = plot * min(bar.value, top) / top
            parts.append(
                f'<rect class="bar" x="{LABEL_WIDTH}" y="{y}" width="{_n(width)}" height="{BAR_ROW - 8}" '
                f'fill="{_e(bar.color)}"><title>{_e(bar.label)}: {_e(bar.text)}</title></rect>'
            )
        parts.append(f'<text class="figure" x="{_n(LABEL_WIDTH + width + 6)}" y="{y + 13}">{_e(bar.text)}</text>')
    return _svg(chart_id, title, description, 16 + len(bars) * BAR_ROW, "".join(parts))


# --- the dashboard's charts, from its figures ---


def open_by_age_chart(figures: OpenByAge) -> SafeString:
    series = [
        Series(label, [float(c) for c in counts], URGENCY_COLORS.get(value, BAR_COLOR))
        for value, label, counts in figures.series()
    ]
    return stacked_bars(
        chart_id="chart-open-by-age",
        title="Open issues by age and urgency",
        description=f"{figures.total} open issues, by how long ago they were reported, stacked by urgency.",
        categories=figures.buckets,
        series=series,
        unit="issues",
    )


def durations_chart(figures: WeeklyDurations) -> SafeString:
    scale = duration_unit([v for w in figures.weeks for v in (w.median, w.p90)])
    unit, seconds = scale
    labels = [f"{w.start:%-d %b}" for w in figures.weeks]

    def values(which: str) -> list[float | None]:
        found = [getattr(w, which) for w in figures.weeks]
        return [v.total_seconds() / seconds if v is not None else None for v in found]

    def texts(which: str, name: str) -> list[str]:
        return [
            f"Week of {w.start:%-d %b %Y}: {name} {duration_text(getattr(w, which), scale)} ({w.count} in all)"
            for w in figures.weeks
        ]

    return line_chart(
        chart_id=f"chart-{figures.key}",
        title=f"{figures.title}, median and 90th percentile per week",
        description=f"{figures.title} ({figures.measure}), in {unit}, per week over {len(figures.weeks)} weeks; "
        f"{figures.count} in all.",
        categories=labels,
        series=[
            Series("median", values("median"), MEDIAN_COLOR, texts("median", "median")),
            Series("90th percentile", values("p90"), P90_COLOR, texts("p90", "90th percentile")),
        ],
        unit=unit,
    )


def deadlines_chart(figures: Deadlines) -> SafeString:
    rows = [*figures.kinds, figures.overall] if figures.kinds else []
    bars = [
        Bar(
            row.label,
            row.percent,
            f"{percent_text(row.percent)} ({row.inside} of {row.decided})",
            "#205067" if row is rows[-1] else BAR_COLOR,
        )
        for row in rows
    ]
    return horizontal_bars(
        chart_id="chart-deadlines",
        title="Deadlines met in time",
        description="Percentage of deadline clocks met by their due time, among those met or past due, "
        "per kind of deadline and overall.",
        bars=bars,
        maximum=100,
    )


def ratings_chart(figures: Ratings) -> SafeString:
    average = "" if figures.average is None else f", average {number(figures.average, 2)}"
    return stacked_bars(
        chart_id="chart-ratings",
        title="Tenant ratings",
        description=f"How many issues tenants rated 1 (poor) to 5 (excellent): {figures.total} ratings{average}.",
        categories=[str(k) for k in figures.counts],
        series=[
            Series(
                "ratings",
                [float(n) for n in figures.counts.values()],
                BAR_COLOR,
                [f"Rated {k}: {n}" for k, n in figures.counts.items()],
            )
        ],
        unit="ratings",
    )


def breakdown_chart(figures: Breakdown, *, chart_id: str, what: str = "issues reported") -> SafeString:
    """The breakdown's rows as bars of ``reported`` (jobs offered, for contractors)."""
    return horizontal_bars(
        chart_id=chart_id,
        title=f"{figures.title}: {what}",
        description=f"{what.capitalize()} in the period, {figures.title.lower()}, the busiest first.",
        bars=[Bar(row.label, float(row.reported), number(row.reported)) for row in figures.rows if row.reported],
    )
