from django.apps import AppConfig


class OrchestrationConfig(AppConfig):
    name = "orchestration"
    verbose_name = "Turn engine"

    def ready(self) -> None:
        from emergencies.alerts import alert_dismissed
        from orchestration.emergency_reports import on_alert_dismissed

        alert_dismissed.connect(on_alert_dismissed, dispatch_uid="emergency-report-dismissed")
