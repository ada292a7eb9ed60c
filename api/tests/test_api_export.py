"""Issues as CSV: streamed, filtered like the list, the caller's own only."""

import csv
import io

import pytest
from django.contrib.admin import helpers
from django.urls import reverse

from issues.models import Issue, IssueClock

pytestmark = pytest.mark.django_db


def rows(response) -> list[dict[str, str]]:
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


def test_the_export_streams_each_issue_with_its_clocks_and_verdict(alice_api, worlds):
    alice, _ = worlds
    Issue.objects.filter(pk=alice.routine.pk).update(fix_answer="yes", rating=4)
    response = alice_api.get("/api/v1/issues/export.csv")
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    exported = {r["reference"]: r for r in rows(response)}
    assert set(exported) == {alice.emergency.reference, alice.routine.reference}  # never Bob's
    made_safe = IssueClock.objects.get(issue=alice.emergency, kind="made_safe")
    assert exported[alice.emergency.reference]["made_safe_due"] == made_safe.due_at.isoformat()
    assert (exported[alice.routine.reference]["is_it_fixed"], exported[alice.routine.reference]["rating"]) == (
        "yes",
        "4",
    )


def test_a_title_a_spreadsheet_would_run_as_a_formula_is_kept_as_text(alice_api, worlds):
    alice, _ = worlds
    Issue.objects.filter(pk=alice.routine.pk).update(title='=HYPERLINK("http://x.example","leak")')
    exported = {r["reference"]: r for r in rows(alice_api.get("/api/v1/issues/export.csv"))}
    assert exported[alice.routine.reference]["title"] == """'=HYPERLINK("http://x.example","leak")"""


def test_the_lists_filters_apply_and_a_bad_one_is_refused(alice_api, worlds):
    alice, _ = worlds
    only = rows(alice_api.get("/api/v1/issues/export.csv", {"urgency": "emergency"}))
    assert [r["reference"] for r in only] == [alice.emergency.reference]
    assert alice_api.get("/api/v1/issues/export.csv", {"urgency": "someday"}).status_code == 400


def test_the_admin_action_exports_the_selected_issues(client, worlds):
    alice, _ = worlds
    client.force_login(alice.user)
    response = client.post(
        reverse("admin:issues_issue_changelist"),
        {"action": "export_csv", helpers.ACTION_CHECKBOX_NAME: [alice.routine.pk]},
    )
    assert [r["reference"] for r in rows(response)] == [alice.routine.reference]
