from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = "The agency's day"

    def ready(self) -> None:
        from django.contrib import admin

        # The admin opens on the agency's day, above the usual list of sections.
        admin.site.index_template = "admin/agency_day.html"
