from django.apps import AppConfig


class PrivacyConfig(AppConfig):
    name = "privacy"
    verbose_name = "Data protection"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from conversations.signals import inbound_stored
        from orchestration.signals import data_request_asked
        from privacy.audit import auditlog_register
        from privacy.receiver import on_data_request_asked, on_inbound_stored

        inbound_stored.connect(on_inbound_stored, dispatch_uid="privacy-data-requests")
        data_request_asked.connect(on_data_request_asked, dispatch_uid="privacy-data-requests-model")
        auditlog_register()
