"""EmergencyRule, SafetyMessage and EmergencyAlert now live in the ``emergencies`` app.

State only: no table or row changes. Their content types (and with them the
permissions and admin log entries) move to ``emergencies``; backwards moves them back."""

from django.db import migrations


SOURCE = "orchestration"
TARGET = "emergencies"
MODELS = ['emergencyrule', 'safetymessage', 'emergencyalert']


def _content_types_move(apps, schema_editor, *, source, target):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label=source, model__in=MODELS).update(app_label=target)


def content_types_forward(apps, schema_editor):
    _content_types_move(apps, schema_editor, source=SOURCE, target=TARGET)


def content_types_backward(apps, schema_editor):
    _content_types_move(apps, schema_editor, source=TARGET, target=SOURCE)


class Migration(migrations.Migration):

    dependencies = [
        ('orchestration', '0005_emergency_alert_one_per_message'),
        ('emergencies', '0001_initial'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='emergencyrule',
                    name='organization',
                ),
                migrations.RemoveField(
                    model_name='safetymessage',
                    name='organization',
                ),
                migrations.DeleteModel(
                    name='EmergencyAlert',
                ),
                migrations.DeleteModel(
                    name='EmergencyRule',
                ),
                migrations.DeleteModel(
                    name='SafetyMessage',
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_forward, content_types_backward),
    ]
