from django.db import migrations


def seed(apps, schema_editor):
    from emergencies.defaults import defaults_seed

    defaults_seed(apps.get_model("orchestration", "EmergencyRule"), apps.get_model("orchestration", "SafetyMessage"))


class Migration(migrations.Migration):
    dependencies = [("orchestration", "0001_initial")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
