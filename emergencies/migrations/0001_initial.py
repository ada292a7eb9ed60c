"""EmergencyRule, SafetyMessage and EmergencyAlert move here from ``orchestration``.

State only: the tables keep their names (``orchestration_emergencyrule`` ...)
and their rows, seeded defaults included; ``orchestration.0006`` removes the
models from the old app's state and moves their content types here."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('conversations', '0003_conversation_language'),
        ('properties', '0003_whatsapp_number_e164'),
        ('orchestration', '0005_emergency_alert_one_per_message'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='EmergencyAlert',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('source', models.CharField(choices=[('keyword', 'Keyword rule'), ('model', 'Raised by the model')], default='keyword', max_length=16)),
                        ('category', models.CharField(choices=[('gas', 'Gas'), ('fire_smoke', 'Fire or smoke'), ('carbon_monoxide', 'Carbon monoxide'), ('flooding', 'Flooding'), ('electrical', 'Electrical danger'), ('no_heat_vulnerable', 'No heat, vulnerable occupant'), ('security', 'Security (break-in, cannot lock)'), ('sewage', 'Sewage'), ('structural', 'Structural danger')], max_length=32)),
                        ('matched_rules', models.JSONField(blank=True, default=list)),
                        ('safety_reply', models.TextField(blank=True)),
                        ('status', models.CharField(choices=[('pending', 'Awaiting validation'), ('confirmed', 'Confirmed'), ('dismissed', 'Dismissed (false alarm)'), ('validation_failed', 'Validation failed (treated as emergency)')], default='pending', max_length=24)),
                        ('validation_reasoning', models.TextField(blank=True)),
                        ('validated_at', models.DateTimeField(blank=True, null=True)),
                        ('landlord_notified_at', models.DateTimeField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='emergency_alerts', to='conversations.conversation')),
                        ('message', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='emergency_alerts', to='conversations.message')),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='emergency_alerts', to='properties.organization')),
                    ],
                    options={
                        'db_table': 'orchestration_emergencyalert',
                        'ordering': ['-created_at'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('category__in', ['gas', 'fire_smoke', 'carbon_monoxide', 'flooding', 'electrical', 'no_heat_vulnerable', 'security', 'sewage', 'structural'])), name='emergencyalert_category_valid'), models.CheckConstraint(condition=models.Q(('status__in', ['pending', 'confirmed', 'dismissed', 'validation_failed'])), name='emergencyalert_status_valid'), models.CheckConstraint(condition=models.Q(('source__in', ['keyword', 'model'])), name='emergencyalert_source_valid'), models.UniqueConstraint(fields=('message',), name='emergencyalert_one_per_message')],
                    },
                ),
                migrations.CreateModel(
                    name='EmergencyRule',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('country', models.CharField(blank=True, help_text='Empty: every country.', max_length=2)),
                        ('language', models.CharField(default='en', max_length=8)),
                        ('phrase', models.CharField(help_text="Whole words or a phrase, matched at word boundaries on normalised text (case and accents folded, punctuation dropped, repeated letters squeezed): 'gas leak' hits 'GAAS LEAK!!', never 'gasket'.", max_length=500)),
                        ('is_pattern', models.BooleanField(default=False, help_text="Treat the phrase as a Python regular expression. It runs on normalised text, so write it in lower case, without accents or punctuation, and with no letter twice in a row ('roten eg' for 'rotten egg'); use \\b for word boundaries.")),
                        ('category', models.CharField(choices=[('gas', 'Gas'), ('fire_smoke', 'Fire or smoke'), ('carbon_monoxide', 'Carbon monoxide'), ('flooding', 'Flooding'), ('electrical', 'Electrical danger'), ('no_heat_vulnerable', 'No heat, vulnerable occupant'), ('security', 'Security (break-in, cannot lock)'), ('sewage', 'Sewage'), ('structural', 'Structural danger')], max_length=32)),
                        ('enabled', models.BooleanField(default=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('organization', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='emergency_rules', to='properties.organization')),
                    ],
                    options={
                        'db_table': 'orchestration_emergencyrule',
                        'ordering': ['category', 'language', 'phrase'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('category__in', ['gas', 'fire_smoke', 'carbon_monoxide', 'flooding', 'electrical', 'no_heat_vulnerable', 'security', 'sewage', 'structural'])), name='emergencyrule_category_valid'), models.UniqueConstraint(fields=('organization', 'country', 'language', 'phrase'), name='emergencyrule_unique_phrase', nulls_distinct=False)],
                    },
                ),
                migrations.CreateModel(
                    name='SafetyMessage',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('country', models.CharField(max_length=2)),
                        ('category', models.CharField(choices=[('gas', 'Gas'), ('fire_smoke', 'Fire or smoke'), ('carbon_monoxide', 'Carbon monoxide'), ('flooding', 'Flooding'), ('electrical', 'Electrical danger'), ('no_heat_vulnerable', 'No heat, vulnerable occupant'), ('security', 'Security (break-in, cannot lock)'), ('sewage', 'Sewage'), ('structural', 'Structural danger')], max_length=32)),
                        ('language', models.CharField(db_default='en', default='en', help_text='ISO 639-1 code. A tenant whose message hit a rule in this language gets this text; without one in their language, the English text.', max_length=8)),
                        ('body', models.TextField()),
                        ('organization', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='safety_messages', to='properties.organization')),
                    ],
                    options={
                        'db_table': 'orchestration_safetymessage',
                        'ordering': ['country', 'category', 'language'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('category__in', ['gas', 'fire_smoke', 'carbon_monoxide', 'flooding', 'electrical', 'no_heat_vulnerable', 'security', 'sewage', 'structural'])), name='safetymessage_category_valid'), models.UniqueConstraint(fields=('organization', 'country', 'category', 'language'), name='safetymessage_unique', nulls_distinct=False)],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
