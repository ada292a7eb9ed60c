"""Issues that beat kept resolved for an owed clock were marked ``none`` ("no
answer to 'Is it fixed?'") without being closed, so the tenant's late answer
was refused and nothing ever closed them. Beat now leaves the question open
while a clock is owed (``issues.fix_check.fix_unanswered_close``): open it
again on those rows, the only resolved ones with ``none``."""

from django.db import migrations


def reopen_question(apps, schema_editor):
    Issue = apps.get_model("issues", "Issue")
    Issue.objects.filter(status="resolved", fix_answer="none").update(fix_answer="")


class Migration(migrations.Migration):
    dependencies = [("issues", "0008_issueupdate_conversation")]

    operations = [migrations.RunPython(reopen_question, migrations.RunPython.noop)]
