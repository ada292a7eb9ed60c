"""What the assistant saw in the photos, on the issue: stored when it is
created, added when the same problem is reported again, and told to the
landlord."""

from __future__ import annotations

import pytest
from django.core import mail

from conversations.tests.factories import ConversationFactory
from issues.models import IssueUpdate
from issues.services import issue_create
from properties.tests.factories import OrganizationFactory, PropertyFactory

pytestmark = pytest.mark.django_db

REPORT = {
    "title": "Water stain on the bathroom ceiling",
    "description": "Brown stain on the bathroom ceiling, dripping after showers upstairs.",
    "category": "plumbing",
    "urgency": "urgent",
    "location": "bathroom ceiling",
    "photo": "provided",
}


@pytest.fixture
def conversation():
    organization = OrganizationFactory(notification_email="office@example.com")
    home = PropertyFactory(organization=organization)
    return ConversationFactory(organization=organization, property=home)


def test_findings_are_stored_and_reach_the_landlords_email(conversation, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        issue, created = issue_create(conversation=conversation, **REPORT, photo_findings="  Stain 40 cm across.  ")
    assert created and issue.photo_findings == "Stain 40 cm across."
    [email] = mail.outbox
    assert "Seen in the tenant's photos: Stain 40 cm across." in email.body


def test_no_findings_no_line(conversation, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        issue, _ = issue_create(conversation=conversation, **REPORT)
    assert issue.photo_findings == "" and "Seen in" not in mail.outbox[0].body


def test_the_same_problem_reported_again_adds_its_findings_once(conversation):
    issue, _ = issue_create(conversation=conversation, **REPORT, photo_findings="Stain 40 cm across.")
    again, created = issue_create(conversation=conversation, **REPORT, photo_findings="Plaster bulging in the middle.")
    assert again.pk == issue.pk and not created
    again.refresh_from_db()
    assert again.photo_findings == "Stain 40 cm across.\nPlaster bulging in the middle."
    assert "Seen in the photos: Plaster bulging" in IssueUpdate.objects.get(issue=issue).body
    issue_create(conversation=conversation, **REPORT, photo_findings="Plaster bulging in the middle.")
    again.refresh_from_db()
    assert again.photo_findings.count("Plaster bulging") == 1
