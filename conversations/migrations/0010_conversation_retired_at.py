"""One live conversation per number (``conversations.number_change``).

The unique key on (organization, phone) becomes a partial one over the
conversations not retired, and the conversations already tied to a tenant
whose number has changed since are retired now, as a change from today on
would retire them.

Deploying: web processes of the release before cannot record a message
against the partial key (their upsert names the columns without its
condition): stop them before this migration runs (docs/operations.md).
Rolling back past it fails once a number has a retired and a live conversation.
"""

from django.db import migrations, models
from django.db.models import F
from django.utils import timezone


def retire_numbers_changed_already(apps, schema_editor):
    Conversation = apps.get_model("conversations", "Conversation")
    changed = Conversation.objects.filter(tenant__isnull=False, retired_at__isnull=True).exclude(
        phone=F("tenant__phone")
    )
    changed.update(retired_at=timezone.now())


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0009_message_twiml_reply'),
        ('properties', '0009_auto_dispatch'),
    ]

    operations = [
        migrations.AddField(
            model_name='conversation',
            name='retired_at',
            field=models.DateTimeField(blank=True, help_text="When this number stopped being the tenant's; empty while it is.", null=True),
        ),
        migrations.AddConstraint(
            model_name='conversation',
            constraint=models.UniqueConstraint(condition=models.Q(('retired_at__isnull', True)), fields=('organization', 'phone'), name='conversation_unique_live_phone_per_org'),
        ),
        migrations.RemoveConstraint(
            model_name='conversation',
            name='conversation_unique_phone_per_org',
        ),
        migrations.RunPython(retire_numbers_changed_already, migrations.RunPython.noop),
    ]
