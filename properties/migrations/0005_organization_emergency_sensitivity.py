# The classifier stage of emergency detection (docs/emergencies.md).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('properties', '0004_issues_move_to_issues_app'),
    ]

    operations = [
        migrations.AddField(
            model_name='organization',
            name='emergency_sensitivity',
            field=models.CharField(choices=[('high', 'High: alert on weaker signs'), ('standard', 'Standard'), ('low', 'Low: fewer false alarms')], db_default='standard', default='standard', help_text='How readily the emergency classifier raises an alert (docs/emergencies.md). Keyword rules of your own always raise one.', max_length=16),
        ),
        migrations.AddConstraint(
            model_name='organization',
            constraint=models.CheckConstraint(condition=models.Q(('emergency_sensitivity__in', ['high', 'standard', 'low'])), name='organization_emergency_sensitivity_valid'),
        ),
    ]
