from django.apps import AppConfig


class OrchestrationConfig(AppConfig):
    name = "orchestration"
    verbose_name = "Turn engine and emergencies"

    def ready(self) -> None:
        from conversations.signals import inbound_stored
        from orchestration.emergencies.receiver import on_inbound_stored

        inbound_stored.connect(on_inbound_stored, dispatch_uid="emergency-keywords")
