"""``manage.py judge_conversations [--sample N] [--since DATE] [--json]``

Tier 3: a judge model answers one binary question per failure mode for a
sample of stored conversations; verdicts are stored (admin: Evals) and the
failure rate per question printed. Live only: it needs ANTHROPIC_API_KEY."""

from __future__ import annotations

import json
from datetime import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from evals.judge import JUDGE_NEEDS_CLAUDE, QUESTIONS, conversations_judge, judge_available


class Command(BaseCommand):
    help = "Ask a judge model about a sample of real conversations."

    def add_arguments(self, parser):
        parser.add_argument("--sample", type=int, default=50)
        parser.add_argument("--since", help="only conversations active since this date (YYYY-MM-DD)")
        parser.add_argument("--seed", type=int, help="make the sample repeatable")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, sample, since, seed, **options):
        if not judge_available():
            raise CommandError(f"judge_conversations: {JUDGE_NEEDS_CLAUDE}")
        since_at = None
        if since:
            try:
                since_at = timezone.make_aware(datetime.strptime(since, "%Y-%m-%d"))
            except ValueError as exc:
                raise CommandError("--since must be YYYY-MM-DD") from exc
        run = conversations_judge(sample=sample, since=since_at, seed=seed)
        if not run.ok:
            raise CommandError(f"{run.error} (run {run.pk} keeps the verdicts given so far)")
        if options["json"]:
            self.stdout.write(json.dumps({"run": run.pk, **run.summary}, indent=2))
            return
        self.stdout.write(f"judged {run.summary['conversations']} conversation(s) (run {run.pk})")
        for key, rate in run.summary["failure_rate"].items():
            shown = "n/a" if rate is None else f"{rate:.0%}"
            self.stdout.write(f"  {shown:>5}  {key}: {QUESTIONS[key]}")
