# The classifier stage of emergency detection (docs/emergencies.md).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0003_conversation_language'),
        ('emergencies', '0001_initial'),
        ('properties', '0005_organization_emergency_sensitivity'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='emergencyalert',
            name='emergencyalert_source_valid',
        ),
        migrations.AddField(
            model_name='emergencyalert',
            name='model_version',
            field=models.CharField(blank=True, db_default='', default='', help_text='The classifier artefact that scored it.', max_length=64),
        ),
        migrations.AddField(
            model_name='emergencyalert',
            name='score',
            field=models.FloatField(blank=True, help_text="The classifier's emergency probability for the message, when it ran.", null=True),
        ),
        migrations.AlterField(
            model_name='emergencyalert',
            name='source',
            field=models.CharField(choices=[('keyword', 'Keyword rule'), ('classifier', 'Emergency classifier'), ('model', 'Raised by the model')], default='keyword', max_length=16),
        ),
        migrations.AddConstraint(
            model_name='emergencyalert',
            constraint=models.CheckConstraint(condition=models.Q(('source__in', ['keyword', 'classifier', 'model'])), name='emergencyalert_source_valid'),
        ),
    ]
