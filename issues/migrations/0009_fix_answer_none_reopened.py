"""Issues that beat kept resolved for an owed clock were marked ``none`` ("no
answer to 'Is it fixed?'") without being closed, so the tenant's late answer
was refused and nothing ever closed them. Beat now leaves the question open
while a clock is owed (``issues.fix_check.fix_unanswered_close``): open it
again on the resolved ones marked ``none`` whose question was asked for their
current resolution (one resolved again without a question keeps its answer)."""

from django.db import migrations, models


def reopen_question(apps, schema_editor):
    Issue = apps.get_model("issues", "Issue")
    asked_for_this_resolution = Issue.objects.filter(fix_asked_at__gte=models.F("resolved_at"))
    asked_for_this_resolution.filter(status="resolved", fix_answer="none").update(fix_answer="")


class Migration(migrations.Migration):
    dependencies = [("issues", "0008_issueupdate_conversation")]

    operations = [migrations.RunPython(reopen_question, migrations.RunPython.noop)]
