"""Seed the built-in rules added for parity across languages (a CO alarm, a
break-in and an electric shock named in every language, as English names
them). Seeding only adds what is missing; a rule a landlord disabled stays
disabled."""

from django.db import migrations


def seed(apps, schema_editor):
    from emergencies.defaults import defaults_seed

    defaults_seed(apps.get_model("emergencies", "EmergencyRule"), apps.get_model("emergencies", "SafetyMessage"))


class Migration(migrations.Migration):
    dependencies = [("emergencies", "0004_alert_sweep_lease")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
