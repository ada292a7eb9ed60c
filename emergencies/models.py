"""Emergencies: the rules that spot one in a tenant's words, the safety
message each category and country gets, and the alert raised for each hit.

The tables keep the names they had inside ``orchestration``: the move changed
where the code lives, not the data.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q


class EmergencyCategory(models.TextChoices):
    GAS = "gas", "Gas"
    FIRE_SMOKE = "fire_smoke", "Fire or smoke"
    CARBON_MONOXIDE = "carbon_monoxide", "Carbon monoxide"
    FLOODING = "flooding", "Flooding"
    ELECTRICAL = "electrical", "Electrical danger"
    NO_HEAT_VULNERABLE = "no_heat_vulnerable", "No heat, vulnerable occupant"
    SECURITY = "security", "Security (break-in, cannot lock)"
    SEWAGE = "sewage", "Sewage"
    STRUCTURAL = "structural", "Structural danger"


EMERGENCY_CATEGORIES = [c.value for c in EmergencyCategory]


class EmergencyRule(models.Model):
    """A phrase (or regular expression) that means a possible emergency. Rules
    with no organization are the built-in defaults for every organization in
    that country; an organization's own rules add to them."""

    organization = models.ForeignKey(
        "properties.Organization", on_delete=models.CASCADE, null=True, blank=True, related_name="emergency_rules"
    )
    country = models.CharField(max_length=2, blank=True, help_text="Empty: every country.")
    language = models.CharField(max_length=8, default="en")
    phrase = models.CharField(
        max_length=500,
        help_text="Whole words or a phrase, matched at word boundaries on normalised text (case and accents "
        "folded, punctuation dropped, repeated letters squeezed): 'gas leak' hits 'GAAS LEAK!!', never 'gasket'.",
    )
    is_pattern = models.BooleanField(
        default=False,
        help_text="Treat the phrase as a Python regular expression. It runs on normalised text, so write it in "
        "lower case, without accents or punctuation, and with no letter twice in a row ('roten eg' for "
        "'rotten egg'); use \\b for word boundaries.",
    )
    category = models.CharField(max_length=32, choices=EmergencyCategory.choices)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "orchestration_emergencyrule"
        ordering = ["category", "language", "phrase"]
        constraints = [
            models.CheckConstraint(condition=Q(category__in=EMERGENCY_CATEGORIES), name="emergencyrule_category_valid"),
            models.UniqueConstraint(
                fields=["organization", "country", "language", "phrase"],
                name="emergencyrule_unique_phrase",
                nulls_distinct=False,
            ),
        ]

    def __str__(self) -> str:
        return f"{self.phrase} ({self.category}, {self.language})"

    def clean(self) -> None:
        from emergencies.normalise import rule_problem

        problem = rule_problem(phrase=self.phrase or "", is_pattern=self.is_pattern)
        if problem:
            raise ValidationError({"phrase": problem})


class SafetyMessage(models.Model):
    """The instant reply for an emergency category in a country. Rows with no
    organization are the defaults; an organization may override them."""

    organization = models.ForeignKey(
        "properties.Organization", on_delete=models.CASCADE, null=True, blank=True, related_name="safety_messages"
    )
    country = models.CharField(max_length=2)
    category = models.CharField(max_length=32, choices=EmergencyCategory.choices)
    language = models.CharField(
        max_length=8,
        default="en",
        db_default="en",
        help_text="ISO 639-1 code. A tenant whose message hit a rule in this language gets this text; "
        "without one in their language, the English text.",
    )
    body = models.TextField()

    class Meta:
        db_table = "orchestration_safetymessage"
        ordering = ["country", "category", "language"]
        constraints = [
            models.CheckConstraint(condition=Q(category__in=EMERGENCY_CATEGORIES), name="safetymessage_category_valid"),
            models.UniqueConstraint(
                fields=["organization", "country", "category", "language"],
                name="safetymessage_unique",
                nulls_distinct=False,
            ),
        ]

    def __str__(self) -> str:
        return f"{self.country} {self.category} ({self.language})"


class EmergencyAlert(models.Model):
    class Source(models.TextChoices):
        KEYWORD = "keyword", "Keyword rule"
        CLASSIFIER = "classifier", "Emergency classifier"
        MODEL = "model", "Raised by the model"

    class Status(models.TextChoices):
        PENDING = "pending", "Awaiting validation"
        CONFIRMED = "confirmed", "Confirmed"
        DISMISSED = "dismissed", "Dismissed (false alarm)"
        VALIDATION_FAILED = "validation_failed", "Validation failed (treated as emergency)"

    organization = models.ForeignKey(
        "properties.Organization", on_delete=models.CASCADE, related_name="emergency_alerts"
    )
    conversation = models.ForeignKey(
        "conversations.Conversation", on_delete=models.CASCADE, related_name="emergency_alerts"
    )
    message = models.ForeignKey(
        "conversations.Message", on_delete=models.SET_NULL, null=True, blank=True, related_name="emergency_alerts"
    )
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.KEYWORD)
    category = models.CharField(max_length=32, choices=EmergencyCategory.choices)
    matched_rules = models.JSONField(default=list, blank=True)
    score = models.FloatField(
        null=True, blank=True, help_text="The classifier's emergency probability for the message, when it ran."
    )
    model_version = models.CharField(
        max_length=64, blank=True, default="", db_default="", help_text="The classifier artefact that scored it."
    )
    safety_reply = models.TextField(blank=True)
    # The repair issue this emergency is recorded as. Declared by name: the
    # emergencies app never imports issues (siblings); orchestration sets it.
    issue = models.ForeignKey(
        "issues.Issue", on_delete=models.SET_NULL, null=True, blank=True, related_name="emergency_alerts"
    )
    status = models.CharField(max_length=24, choices=Status.choices, default=Status.PENDING)
    validation_reasoning = models.TextField(blank=True)
    validated_at = models.DateTimeField(null=True, blank=True)
    landlord_notified_at = models.DateTimeField(null=True, blank=True)
    # The sweeper's lease on its lost work (the model check, the landlord's
    # email): queued again only once SWEEP_LEASE_SECONDS have passed, at most
    # SWEEP_MAX_REQUEUES times (conversations.sweeper.lease_take).
    queued_at = models.DateTimeField(null=True, blank=True)
    requeues = models.PositiveSmallIntegerField(default=0, db_default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "orchestration_emergencyalert"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(category__in=EMERGENCY_CATEGORIES), name="emergencyalert_category_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "confirmed", "dismissed", "validation_failed"]),
                name="emergencyalert_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(source__in=["keyword", "classifier", "model"]), name="emergencyalert_source_valid"
            ),
            # Two deliveries of one message (Twilio retries a slow answer) raise one alert.
            models.UniqueConstraint(fields=["message"], name="emergencyalert_one_per_message"),
        ]

    def __str__(self) -> str:
        return f"{self.category} alert {self.pk}"

    @property
    def trigger(self) -> str:
        """What raised the alert, in words for a landlord: the rule's phrase (a
        pattern by its category), or the classifier's category and score."""
        if self.source == self.Source.CLASSIFIER:
            score = f" ({self.score:.0%} likely an emergency)" if self.score is not None else ""
            return f"Classifier: {self.get_category_display().lower()}{score}, model {self.model_version or '?'}"
        if self.source == self.Source.MODEL:
            return "The assistant, from the conversation"
        phrases = [
            f"{'your' if rule.get('own') else 'a built-in'} pattern for "
            f"{rule.get('category', self.category).replace('_', ' ')}"
            if rule.get("pattern") or "\\b" in rule.get("phrase", "")
            else f"“{rule.get('phrase', '')}”"
            for rule in self.matched_rules
            if isinstance(rule, dict)
        ]
        score = f"; classifier {self.score:.0%}" if self.score is not None else ""
        return f"Keyword rule {', '.join(dict.fromkeys(phrases)) or '(deleted)'}{score}"

    @property
    def is_emergency(self) -> bool:
        """Fail safe: only an explicit dismissal stands the alert down."""
        return self.status != self.Status.DISMISSED
