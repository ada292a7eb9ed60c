"""Give every conversation that has alerts the time of its latest one, so the
turn engine can skip looking for an emergency report where none can stand."""

from django.db import migrations
from django.db.models import Max, OuterRef, Subquery


def backfill(apps, schema_editor):
    Conversation = apps.get_model("conversations", "Conversation")
    EmergencyAlert = apps.get_model("emergencies", "EmergencyAlert")
    latest = (
        EmergencyAlert.objects.filter(conversation=OuterRef("pk"))
        .values("conversation")
        .annotate(latest=Max("created_at"))
        .values("latest")
    )
    alerted = Conversation.objects.filter(pk__in=EmergencyAlert.objects.values("conversation_id"))
    alerted.update(emergency_alerted_at=Subquery(latest))


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0008_conversation_emergency_alerted_at"),
        ("emergencies", "0005_reseed_rule_parity"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
