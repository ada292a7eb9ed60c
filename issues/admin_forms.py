"""Forms behind the issue status pages of the admin."""

from __future__ import annotations

from typing import Any

from django import forms

from issues.models import Issue
from issues.status import NOTE_MAX_CHARS


class ScheduleForm(forms.Form):
    """The intermediate page of the 'schedule' action."""

    scheduled_for = forms.DateField(label="Repair date", widget=forms.DateInput(attrs={"type": "date"}))
    note = forms.CharField(
        label="Note to the tenant (optional)",
        required=False,
        max_length=NOTE_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
    )


class IssueStatusForm(forms.Form):
    """One issue's status page: the moves allowed from its current status."""

    status = forms.ChoiceField(label="New status")
    scheduled_for = forms.DateField(label="Repair date", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    note = forms.CharField(
        label="Note to the tenant (optional)",
        required=False,
        max_length=NOTE_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
    )

    def __init__(self, *args: Any, allowed: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        labels = dict(Issue.Status.choices)
        status = self.fields["status"]
        assert isinstance(status, forms.ChoiceField)
        status.choices = [(value, labels[value]) for value in allowed]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        assert cleaned is not None  # Form.clean returns cleaned_data
        if cleaned.get("status") == Issue.Status.SCHEDULED and not cleaned.get("scheduled_for"):
            self.add_error("scheduled_for", "Scheduling needs a date.")
        if cleaned.get("status") != Issue.Status.SCHEDULED:
            cleaned["scheduled_for"] = None
        return cleaned


class ClockMetForm(forms.Form):
    """Recording that a deadline's work was done."""

    at = forms.DateTimeField(
        label="Done at (blank: now)",
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="In your organization's time zone.",
    )
    note = forms.CharField(
        label="Note for the issue's history (optional)",
        required=False,
        max_length=NOTE_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
    )
