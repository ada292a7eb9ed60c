"""Seed the built-in patterns for no heating where someone vulnerable lives,
the person told by who they are (emergencies/no_heat_rules.py). Seeding only
adds what is missing; a rule a landlord disabled stays disabled."""

from django.db import migrations


def seed(apps, schema_editor):
    from emergencies.defaults import defaults_seed

    defaults_seed(apps.get_model("emergencies", "EmergencyRule"), apps.get_model("emergencies", "SafetyMessage"))


class Migration(migrations.Migration):
    dependencies = [("emergencies", "0006_backfill_conversation_emergency_alerted_at")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
