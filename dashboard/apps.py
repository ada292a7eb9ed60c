from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = "The agency's day"

    def ready(self) -> None:
        from django.contrib import admin
        from django.urls import path

        from dashboard.views import dashboard_view

        # The admin opens on the agency's day, above the usual list of sections.
        admin.site.index_template = "admin/agency_day.html"

        # The dashboard is one of the admin site's own pages (/admin/dashboard/,
        # "admin:dashboard"): admin_view gives it the admin's login redirect,
        # staff check and no-cache headers, and config (the bottom layer) never
        # imports this app. It goes before the site's own URLs, whose catch-all
        # would otherwise answer it.
        if getattr(admin.site, "dashboard_registered", False):
            return
        admin.site.dashboard_registered = True  # type: ignore[attr-defined]
        site_urls = admin.site.get_urls

        def get_urls():
            return [path("dashboard/", admin.site.admin_view(dashboard_view), name="dashboard"), *site_urls()]

        admin.site.get_urls = get_urls  # type: ignore[method-assign]
