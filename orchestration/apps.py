from django.apps import AppConfig


class OrchestrationConfig(AppConfig):
    name = "orchestration"
    verbose_name = "Turn engine"

    def ready(self) -> None:
        from conversations.signals import transcript_done
        from emergencies.alerts import alert_dismissed
        from orchestration.emergency_reports import on_alert_dismissed
        from orchestration.voice_notes import on_transcript_done

        alert_dismissed.connect(on_alert_dismissed, dispatch_uid="emergency-report-dismissed")
        transcript_done.connect(on_transcript_done, dispatch_uid="voice-note-late-transcript")
