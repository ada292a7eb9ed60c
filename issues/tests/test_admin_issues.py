"""The landlord's issue list: what it shows, its actions, and its query budget."""

import datetime

import pytest
from django.contrib.admin import helpers
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from conversations.models import Message
from issues.models import Issue, IssuePhoto, IssueUpdate
from properties.tests.factories import IssueFactory
from properties.tests.persona import MediaFactory, MessageFactory, alice_and_bob

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:issues_issue_changelist"
TOMORROW = timezone.now().date() + datetime.timedelta(days=1)


@pytest.fixture
def alice(client):
    alice, _ = alice_and_bob()
    client.force_login(alice.user)
    return alice


def action(client, name, issues, **extra):
    return client.post(
        reverse(CHANGELIST),
        {"action": name, helpers.ACTION_CHECKBOX_NAME: [i.pk for i in issues], **extra},
        follow=True,
    )


def outbound_to(conversation):
    return list(Message.objects.filter(conversation=conversation, direction="outbound", author="landlord"))


def test_list_shows_what_a_landlord_scans_with_open_emergencies_first(client, alice):
    response = client.get(reverse(CHANGELIST))
    assert response.status_code == 200
    rows = list(response.context["cl"].result_list)
    assert [i.reference for i in rows] == [alice.emergency.reference, alice.routine.reference]
    html = response.content.decode()
    assert 'class="badge urgency-emergency attention"' in html
    assert ">EMERGENCY<" in html
    assert alice.property.code in html
    assert escape(alice.tenant.name) in html
    assert "Plumbing and leaks" in html
    assert "1 min" in html  # age
    media_url = reverse("admin:conversations_media_file", args=[alice.media.pk])
    assert f'src="{media_url}"' in html
    assert "workplace/admin.css" in html


def test_resolved_emergency_is_no_longer_highlighted(client, alice):
    Issue.objects.filter(pk=alice.emergency.pk).update(status="resolved")
    html = client.get(reverse(CHANGELIST)).content.decode()
    assert "urgency-emergency" in html
    assert "attention" not in html.split('id="result_list"')[1]


def test_acknowledge_action_records_and_notifies(client, alice):
    response = action(client, "acknowledge", [alice.emergency])
    assert "tenant notified" in response.content.decode()
    alice.emergency.refresh_from_db()
    assert alice.emergency.status == "acknowledged"
    update = alice.emergency.updates.get()
    assert update.author == IssueUpdate.Author.LANDLORD
    assert update.user == alice.user
    [message] = outbound_to(alice.conversation)
    assert message.raw_payload["purpose"] == "issue_update"
    assert alice.emergency.reference in message.body


def test_resolve_action_reports_refusals_and_never_notifies_twice(client, alice):
    action(client, "resolve", [alice.routine])
    response = action(client, "resolve", [alice.emergency, alice.routine])
    html = response.content.decode()
    assert alice.emergency.reference in html
    assert "cannot become resolved" in html
    assert Issue.objects.filter(status="resolved", organization=alice.organization).count() == 2
    assert len(outbound_to(alice.conversation)) == 2


def test_schedule_action_asks_for_a_date_on_an_intermediate_page(client, alice):
    response = action(client, "schedule", [alice.emergency, alice.routine])
    assert response.status_code == 200
    assert response.templates[0].name == "admin/issues/issue/schedule.html"
    assert b'name="scheduled_for"' in response.content
    assert not Issue.objects.filter(status="scheduled").exists()

    response = action(client, "schedule", [alice.emergency], apply="1", scheduled_for="")
    assert response.templates[0].name == "admin/issues/issue/schedule.html"
    assert b"This field is required" in response.content
    assert not Issue.objects.filter(status="scheduled").exists()

    response = action(
        client, "schedule", [alice.emergency, alice.routine], apply="1", scheduled_for=TOMORROW.isoformat(), note="AM"
    )
    assert response.templates[0].name == "admin/change_list.html"
    mine = Issue.objects.filter(organization=alice.organization)
    assert set(mine.values_list("status", "scheduled_for")) == {("scheduled", TOMORROW)}
    messages = outbound_to(alice.conversation)
    assert len(messages) == 2
    assert all(TOMORROW.strftime("%B") in m.body and "AM" in m.body for m in messages)


def test_status_page_changes_one_issue(client, alice):
    url = reverse("admin:issues_issue_status", args=[alice.routine.pk])
    page = client.get(url, {"to": "resolved"})
    assert page.status_code == 200
    choices = [value for value, _ in page.context["form"].fields["status"].choices]
    assert choices == ["acknowledged", "scheduled", "resolved", "closed"]
    assert page.context["form"].initial == {"status": "resolved"}

    response = client.post(url, {"status": "scheduled", "scheduled_for": ""})
    assert response.status_code == 200
    assert "needs a date" in str(response.context["form"].errors)

    response = client.post(url, {"status": "resolved", "note": "New handle fitted."})
    assert response.status_code == 302
    alice.routine.refresh_from_db()
    assert alice.routine.status == "resolved"
    assert "New handle fitted." in outbound_to(alice.conversation)[0].body

    # From resolved, "resolved" is no longer on offer.
    response = client.post(url, {"status": "resolved"})
    assert response.status_code == 200
    assert "Select a valid choice" in str(response.context["form"].errors)


def test_change_page_offers_the_status_moves_and_keeps_status_read_only(client, alice):
    url = reverse("admin:issues_issue_change", args=[alice.routine.pk])
    page = client.get(url)
    html = page.content.decode()
    assert reverse("admin:issues_issue_status", args=[alice.routine.pk]) + "?to=resolved" in html
    assert "status" not in page.context["adminform"].form.fields
    data = {
        "title": "Renamed",
        "description": alice.routine.description,
        "location": "",
        "urgency": "urgent",
        "category": "structural",
        "photo": "not_needed",
        "property": alice.property.pk,
        "tenant": alice.tenant.pk,
        "status": "resolved",  # ignored: read-only
        "updates-TOTAL_FORMS": "1",
        "updates-INITIAL_FORMS": "0",
        "updates-0-body": "Called the tenant, fitting next week.",
        "photos-TOTAL_FORMS": "0",
        "photos-INITIAL_FORMS": "0",
    }
    # The existing update (tenant follow-up) is shown read-only, not posted.
    data["updates-INITIAL_FORMS"] = "0"
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    alice.routine.refresh_from_db()
    assert (alice.routine.title, alice.routine.urgency, alice.routine.status) == ("Renamed", "urgent", "open")
    note = alice.routine.updates.get(body__startswith="Called")
    assert (note.author, note.user) == ("landlord", alice.user)


def test_media_file_is_served_as_an_image_and_other_types_download(client, alice):
    response = client.get(reverse("admin:conversations_media_file", args=[alice.media.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content).startswith(b"\x89PNG")

    html_media = MediaFactory(message=alice.inbound, index=1, content_type="text/html")
    response = client.get(reverse("admin:conversations_media_file", args=[html_media.pk]))
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"].startswith("attachment")


def issues_with_photos(world, count):
    for n in range(count):
        issue = IssueFactory(organization=world.organization, property=world.property, tenant=world.tenant)
        message = MessageFactory(conversation=world.conversation)
        IssuePhoto.objects.create(issue=issue, media=MediaFactory(message=message))
        IssuePhoto.objects.create(issue=issue, media=MediaFactory(message=message, index=1))
        if n % 3 == 0:
            Issue.objects.filter(pk=issue.pk).update(urgency="emergency")


def changelist_queries(client):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse(CHANGELIST))
    assert response.status_code == 200
    return len(queries), len(response.context["cl"].result_list)


ISSUE_LIST_QUERY_BUDGET = 14


def test_issue_list_query_count_stays_flat_as_issues_grow(client, alice, django_assert_max_num_queries):
    issues_with_photos(alice, 3)
    small, shown_small = changelist_queries(client)
    issues_with_photos(alice, 30)
    large, shown_large = changelist_queries(client)
    print(f"issue list: {small} queries for {shown_small} rows, {large} queries for {shown_large} rows")
    assert shown_large == 35
    assert large == small
    with django_assert_max_num_queries(ISSUE_LIST_QUERY_BUDGET):
        client.get(reverse(CHANGELIST))
