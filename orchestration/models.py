"""What the turn engine records: one Turn trace per model turn."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models


class Turn(models.Model):
    """The trace of one turn: what the model saw, chose and cost, and what changed."""

    conversation = models.ForeignKey("conversations.Conversation", on_delete=models.CASCADE, related_name="turns")
    message_ids = ArrayField(models.BigIntegerField(), default=list, help_text="Inbound messages handled in this turn.")
    backend = models.CharField(max_length=16, blank=True)
    model = models.CharField(max_length=100, blank=True)
    prompt_version = models.CharField(max_length=32, blank=True)
    tools_offered = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    # [{"name", "input", "result", "is_error", "rejection"}] in the order the model made them.
    tool_calls = models.JSONField(default=list, blank=True)
    gating_rejections = models.PositiveSmallIntegerField(default=0)
    # [{"chunk_id", "document", "heading", "vector_rank", "keyword_rank", "score"}]
    retrieval_hits = models.JSONField(default=list, blank=True)
    identity_before = models.CharField(max_length=16, blank=True)
    identity_after = models.CharField(max_length=16, blank=True)
    gathering_before = models.CharField(max_length=24, blank=True)
    gathering_after = models.CharField(max_length=24, blank=True)
    latency_total_ms = models.PositiveIntegerField(null=True, blank=True)
    latency_model_ms = models.PositiveIntegerField(null=True, blank=True)
    latency_retrieval_ms = models.PositiveIntegerField(null=True, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cache_read_tokens = models.PositiveIntegerField(default=0)
    cache_write_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=10, decimal_places=6, default=0)
    # Photos shown to the model in this turn, and their share of input_tokens
    # (estimated from their pixel sizes as the API counts them).
    images_sent = models.PositiveSmallIntegerField(default=0, db_default=0)
    image_tokens = models.PositiveIntegerField(default=0, db_default=0)
    outcome = models.CharField(max_length=32, blank=True, help_text="e.g. tool, fallback, flag_off, paused")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation", "created_at", "id"]
        indexes = [models.Index(fields=["conversation", "created_at"], name="turn_conversation_created")]

    def __str__(self) -> str:
        return f"turn {self.pk} of {self.conversation_id}"
