from django.apps import AppConfig


class EmergenciesConfig(AppConfig):
    name = "emergencies"
    verbose_name = "Emergencies"

    def ready(self) -> None:
        from conversations.signals import inbound_stored
        from emergencies.receiver import on_inbound_stored

        inbound_stored.connect(on_inbound_stored, dispatch_uid="emergency-keywords")
