"""Issue, IssueUpdate and IssuePhoto move here from ``properties``.

State only: the tables keep their names (``properties_issue`` ...) and their
rows; ``properties.0004`` removes the models from the old app's state and
moves their content types (and so their permissions) here."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('conversations', '0003_conversation_language'),
        ('properties', '0003_whatsapp_number_e164'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Issue',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('reference', models.CharField(max_length=32, unique=True)),
                        ('title', models.CharField(max_length=200)),
                        ('description', models.TextField()),
                        ('category', models.CharField(choices=[('plumbing', 'Plumbing and leaks'), ('heating', 'Heating and hot water'), ('electrical', 'Electrical'), ('gas', 'Gas'), ('appliances', 'Appliances'), ('damp_mould', 'Damp and mould'), ('structural', 'Structural, roof, windows and doors'), ('security', 'Locks and security'), ('pests', 'Pests'), ('safety', 'Fire, smoke and CO alarms'), ('exterior', 'Exterior, garden and bins'), ('other', 'Other')], default='other', max_length=16)),
                        ('urgency', models.CharField(choices=[('emergency', 'Emergency'), ('urgent', 'Urgent'), ('routine', 'Routine')], default='routine', max_length=16)),
                        ('location', models.CharField(blank=True, help_text="Where in the property, e.g. 'bathroom ceiling'.", max_length=200)),
                        ('status', models.CharField(choices=[('open', 'Open'), ('acknowledged', 'Acknowledged'), ('scheduled', 'Scheduled'), ('resolved', 'Resolved'), ('closed', 'Closed')], default='open', max_length=16)),
                        ('photo', models.CharField(choices=[('provided', 'Provided'), ('declined', 'Declined'), ('not_needed', 'Not needed')], default='not_needed', max_length=16)),
                        ('scheduled_for', models.DateField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('acknowledged_at', models.DateTimeField(blank=True, null=True)),
                        ('resolved_at', models.DateTimeField(blank=True, null=True)),
                        ('conversation', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='issues', to='conversations.conversation')),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='issues', to='properties.organization')),
                        ('property', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='issues', to='properties.property')),
                        ('tenant', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='issues', to='properties.tenant')),
                    ],
                    options={
                        'db_table': 'properties_issue',
                        'ordering': ['-created_at'],
                    },
                ),
                migrations.CreateModel(
                    name='IssuePhoto',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('issue', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='photos', to='issues.issue')),
                        ('media', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='issue_photos', to='conversations.media')),
                    ],
                    options={
                        'db_table': 'properties_issuephoto',
                    },
                ),
                migrations.CreateModel(
                    name='IssueUpdate',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('author', models.CharField(choices=[('tenant', 'Tenant'), ('landlord', 'Landlord'), ('system', 'System')], max_length=16)),
                        ('body', models.TextField()),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('issue', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='updates', to='issues.issue')),
                        ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'properties_issueupdate',
                        'ordering': ['created_at'],
                    },
                ),
                migrations.AddIndex(
                    model_name='issue',
                    index=models.Index(fields=['organization', 'status', '-created_at'], name='issue_org_status_created'),
                ),
                migrations.AddConstraint(
                    model_name='issue',
                    constraint=models.CheckConstraint(condition=models.Q(('category__in', ['plumbing', 'heating', 'electrical', 'gas', 'appliances', 'damp_mould', 'structural', 'security', 'pests', 'safety', 'exterior', 'other'])), name='issue_category_valid'),
                ),
                migrations.AddConstraint(
                    model_name='issue',
                    constraint=models.CheckConstraint(condition=models.Q(('urgency__in', ['emergency', 'urgent', 'routine'])), name='issue_urgency_valid'),
                ),
                migrations.AddConstraint(
                    model_name='issue',
                    constraint=models.CheckConstraint(condition=models.Q(('status__in', ['open', 'acknowledged', 'scheduled', 'resolved', 'closed'])), name='issue_status_valid'),
                ),
                migrations.AddConstraint(
                    model_name='issue',
                    constraint=models.CheckConstraint(condition=models.Q(('photo__in', ['provided', 'declined', 'not_needed'])), name='issue_photo_valid'),
                ),
                migrations.AddConstraint(
                    model_name='issuephoto',
                    constraint=models.UniqueConstraint(fields=('issue', 'media'), name='issuephoto_unique'),
                ),
                migrations.AddConstraint(
                    model_name='issueupdate',
                    constraint=models.CheckConstraint(condition=models.Q(('author__in', ['tenant', 'landlord', 'system'])), name='issueupdate_author_valid'),
                ),
            ],
            database_operations=[],
        ),
    ]
