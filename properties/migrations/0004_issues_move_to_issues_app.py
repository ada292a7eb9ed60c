"""Issue, IssueUpdate and IssuePhoto now live in the ``issues`` app.

State only: no table or row changes. Their content types (and with them the
permissions and admin log entries) move to ``issues``; backwards moves them back."""

from django.db import migrations


SOURCE = "properties"
TARGET = "issues"
MODELS = ['issue', 'issueupdate', 'issuephoto']


def _content_types_move(apps, schema_editor, *, source, target):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label=source, model__in=MODELS).update(app_label=target)


def content_types_forward(apps, schema_editor):
    _content_types_move(apps, schema_editor, source=SOURCE, target=TARGET)


def content_types_backward(apps, schema_editor):
    _content_types_move(apps, schema_editor, source=TARGET, target=SOURCE)


class Migration(migrations.Migration):

    dependencies = [
        ('properties', '0003_whatsapp_number_e164'),
        ('issues', '0001_initial'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='issuephoto',
                    name='issue',
                ),
                migrations.RemoveField(
                    model_name='issueupdate',
                    name='issue',
                ),
                migrations.RemoveField(
                    model_name='issuephoto',
                    name='media',
                ),
                migrations.RemoveField(
                    model_name='issueupdate',
                    name='user',
                ),
                migrations.DeleteModel(
                    name='Issue',
                ),
                migrations.DeleteModel(
                    name='IssuePhoto',
                ),
                migrations.DeleteModel(
                    name='IssueUpdate',
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_forward, content_types_backward),
    ]
