"""How the dashboard's tables write its figures (the charts use the same helpers)."""

from django import template

from dashboard import charts

register = template.Library()


@register.filter
def duration(value):
    """A timedelta as '45 min', '5.2 h' or '3.5 days'; an en dash for none."""
    return charts.duration_text(value)


@register.filter
def percent(value):
    return charts.percent_text(value)


@register.filter
def decimal(value, places=1):
    return "–" if value is None else charts.number(value, int(places))
