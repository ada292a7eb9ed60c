"""Results of scheduled evaluations and the judge's verdicts, for the admin."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class EvalRun(models.Model):
    class Kind(models.TextChoices):
        GOLDEN = "golden", "Golden scenarios"
        RETRIEVAL = "retrieval", "Retrieval quality"
        JUDGE = "judge", "LLM-as-judge"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    ok = models.BooleanField(null=True, help_text="Did the run complete (and, for golden runs, pass)?")
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=["golden", "retrieval", "judge"]), name="evalrun_kind_valid")
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.started_at:%Y-%m-%d %H:%M}"


class JudgeVerdict(models.Model):
    """One binary question about one conversation: did this failure happen?"""

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="verdicts")
    conversation = models.ForeignKey(
        "conversations.Conversation", on_delete=models.CASCADE, related_name="judge_verdicts"
    )
    question = models.CharField(max_length=64)
    failed = models.BooleanField(help_text="True when the judge found this failure in the conversation.")
    reasoning = models.TextField(blank=True)
    model = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "conversation", "question"]
        constraints = [models.UniqueConstraint(fields=["run", "conversation", "question"], name="judgeverdict_unique")]

    def __str__(self) -> str:
        return f"{self.question}: {'failed' if self.failed else 'ok'}"
