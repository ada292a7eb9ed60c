from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class EmergenciesConfig(AppConfig):
    name = "emergencies"
    verbose_name = "Emergencies"

    def ready(self) -> None:
        from config.health import health_report_register
        from conversations.signals import inbound_stored
        from emergencies.classifier import classifier_status
        from emergencies.matching import versions
        from emergencies.models import EmergencyRule
        from emergencies.receiver import on_inbound_stored

        # A rule saved or deleted in this process applies to its next message.
        post_save.connect(versions.clear, sender=EmergencyRule, dispatch_uid="emergency-rule-versions-save")
        post_delete.connect(versions.clear, sender=EmergencyRule, dispatch_uid="emergency-rule-versions-delete")

        inbound_stored.connect(on_inbound_stored, dispatch_uid="emergency-keywords")
        health_report_register("emergency_classifier", classifier_status)
