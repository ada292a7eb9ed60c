from django.apps import AppConfig


class OrchestrationConfig(AppConfig):
    name = "orchestration"
    verbose_name = "Turn engine"

    def ready(self) -> None:
        from django.db.models.signals import post_save, pre_delete

        from conversations.signals import transcript_done
        from emergencies.alerts import alert_dismissed
        from orchestration.emergency_reports import on_alert_dismissed
        from orchestration.services import on_tenant_deleted, on_tenant_saved
        from orchestration.voice_notes import on_transcript_done
        from properties.models import Tenant

        alert_dismissed.connect(on_alert_dismissed, dispatch_uid="emergency-report-dismissed")
        # A tenant's number changed, or the tenant deleted: who writes from the old number is asked afresh.
        post_save.connect(on_tenant_saved, sender=Tenant, dispatch_uid="conversations-unlink-tenant-saved")
        pre_delete.connect(on_tenant_deleted, sender=Tenant, dispatch_uid="conversations-unlink-tenant-deleted")
        transcript_done.connect(on_transcript_done, dispatch_uid="voice-note-late-transcript")
