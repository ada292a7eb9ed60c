"""The dashboard page: a thin admin view. It decides whose figures the user
sees, asks ``figures.dashboard_figures`` for them and ``charts`` to draw them."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from dashboard import charts
from dashboard.figures import dashboard_figures
from properties.models import Organization
from properties.scoping import user_organization_ids
from properties.working_time import zone_get


def dashboard_view(request: HttpRequest) -> HttpResponse:
    """The figures of the user's organizations (a superuser: all), or of the
    one chosen in the page's select among them. An organization the user is
    not a member of is ignored, never shown; a user with no organization sees
    an empty dashboard. Weeks are in the organizations' time zone when those shown
    share one, the project's otherwise."""
    user = request.user
    allowed = None if user.is_superuser else user_organization_ids(user)
    organizations = list(
        (Organization.objects.all() if allowed is None else Organization.objects.filter(pk__in=allowed)).order_by(
            "name", "pk"
        )
    )
    chosen = request.GET.get("organization", "")
    selected = next((o for o in organizations if str(o.pk) == chosen), None)
    shown = [selected] if selected else organizations
    zones = {o.timezone for o in shown}
    figures = dashboard_figures(
        organization_ids=[selected.pk] if selected else allowed,
        zone=zone_get(zones.pop()) if len(zones) == 1 else timezone.get_default_timezone(),
    )
    context = {
        **admin.site.each_context(request),
        "title": "Dashboard",
        "figures": figures,
        "organizations": organizations,
        "selected": selected,
        "charts": {
            "open_by_age": charts.open_by_age_chart(figures.open_by_age),
            "durations": [(d, charts.durations_chart(d)) for d in figures.durations],
            "deadlines": charts.deadlines_chart(figures.deadlines),
            "by_property": charts.breakdown_chart(figures.by_property, chart_id="chart-by-property"),
            "by_category": charts.breakdown_chart(figures.by_category, chart_id="chart-by-category"),
            "by_contractor": charts.breakdown_chart(
                figures.by_contractor, chart_id="chart-by-contractor", what="jobs offered"
            ),
            "ratings": charts.ratings_chart(figures.ratings),
        },
    }
    return TemplateResponse(request, "admin/dashboard.html", context)
