from django.apps import AppConfig


class EmergenciesConfig(AppConfig):
    name = "emergencies"
    verbose_name = "Emergencies"

    def ready(self) -> None:
        from config.health import health_report_register
        from conversations.signals import inbound_stored
        from emergencies.classifier import classifier_status
        from emergencies.receiver import on_inbound_stored

        inbound_stored.connect(on_inbound_stored, dispatch_uid="emergency-keywords")
        health_report_register("emergency_classifier", classifier_status)
