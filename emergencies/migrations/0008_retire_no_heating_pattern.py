"""Retire the built-in pattern "no heating" then a baby within 40 characters,
which took "no heating problems since the repair, the baby is warm now" for an
emergency. The no-heat patterns (emergencies/no_heat_rules.py) match all it
did, within 80 characters and either order, and leave "no heating problems",
"issues", "pressure" and "bills" alone. Built-in rules are otherwise never
changed by a release; this one is removed (nothing refers to a rule's row)
and does not come back: seeding adds only what ``default_rules`` lists."""

from django.db import migrations

RETIRED = r"\bno (heating|heat|hot water)\b.{0,40}\b(baby|newborn|elderly|pregnant|disabled|oxygen)\b"


def retire(apps, schema_editor):
    EmergencyRule = apps.get_model("emergencies", "EmergencyRule")
    EmergencyRule.objects.filter(organization=None, is_pattern=True, phrase=RETIRED).delete()


class Migration(migrations.Migration):
    dependencies = [("emergencies", "0007_reseed_no_heat_people")]

    operations = [migrations.RunPython(retire, migrations.RunPython.noop)]
