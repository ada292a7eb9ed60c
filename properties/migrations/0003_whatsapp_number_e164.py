import re

from django.db import migrations, models


def numbers_normalise(apps, schema_editor):
    """Numbers stored as 'whatsapp:+44...' or with spaces routed no message:
    store them in E.164 before the constraint, and stop with the rows that
    cannot be mended (a local number has no country code to guess)."""
    WhatsAppNumber = apps.get_model("properties", "WhatsAppNumber")
    unfixable = []
    for row in WhatsAppNumber.objects.all():
        cleaned = re.sub(r"[\s\-().]", "", row.number.removeprefix("whatsapp:"))
        if not re.fullmatch(r"\+[1-9][0-9]{6,14}", cleaned):
            unfixable.append(f"{row.pk}: {row.number!r}")
        elif cleaned != row.number:
            row.number = cleaned
            row.save(update_fields=["number"])
    if unfixable:
        raise RuntimeError(
            "WhatsApp numbers that are not E.164 and cannot be mended; correct them (e.g. +447700900000) "
            "and migrate again: " + ", ".join(unfixable)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("properties", "0002_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="whatsappnumber",
            name="number",
            field=models.CharField(help_text="E.164, e.g. +447700900000 (no 'whatsapp:').", max_length=32, unique=True),
        ),
        migrations.RunPython(numbers_normalise, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="whatsappnumber",
            constraint=models.CheckConstraint(
                condition=models.Q(("number__regex", "^\\+[1-9][0-9]{6,14}$")),
                name="whatsapp_number_e164",
                violation_error_message="Use the international format with the country code and no 'whatsapp:', "
                "e.g. +447700900000.",
            ),
        ),
    ]
