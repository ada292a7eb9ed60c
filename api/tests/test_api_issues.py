import datetime

import pytest
from django.utils import timezone

from conversations.models import Message
from issues.models import Issue
from properties.tests.factories import IssueFactory

pytestmark = pytest.mark.django_db

TOMORROW = (timezone.now().date() + datetime.timedelta(days=1)).isoformat()


def test_list_is_paginated_and_nested(alice_api, worlds):
    alice, _ = worlds
    body = alice_api.get("/api/v1/issues/").json()
    assert body["count"] == 2
    assert {"next", "previous", "results"} <= body.keys()
    first = body["results"][0]
    assert first["reference"] == alice.routine.reference  # newest first
    assert first["property"] == {
        "id": alice.property.pk,
        "code": alice.property.code,
        "address": alice.property.address,
    }
    assert first["tenant"]["name"] == alice.tenant.name
    emergency = body["results"][1]
    assert emergency["photos"] == [
        {"media_id": alice.media.pk, "content_type": "image/png", "download_state": "downloaded"}
    ]


def test_filters_and_ordering(alice_api, worlds):
    alice, _ = worlds
    Issue.objects.filter(pk=alice.routine.pk).update(status="resolved")

    def refs(**params):
        return [i["reference"] for i in alice_api.get("/api/v1/issues/", params).json()["results"]]

    assert refs(urgency="emergency") == [alice.emergency.reference]
    assert refs(status=["open", "resolved"], ordering="reference") == [
        alice.emergency.reference,
        alice.routine.reference,
    ]
    assert refs(open="true") == [alice.emergency.reference]
    assert refs(open="false") == [alice.routine.reference]
    assert refs(q="door handle") == [alice.routine.reference]
    assert refs(q=alice.emergency.reference.lower()) == [alice.emergency.reference]
    assert refs(property=alice.property.pk, ordering="-reference") == [
        alice.routine.reference,
        alice.emergency.reference,
    ]
    assert refs(created_after=(timezone.now() + datetime.timedelta(hours=1)).isoformat()) == []


def test_urgency_and_status_order_by_meaning_not_spelling(alice_api, worlds):
    alice, _ = worlds
    urgent = IssueFactory(organization=alice.organization, property=alice.property, urgency="urgent", status="closed")
    Issue.objects.filter(pk=alice.routine.pk).update(status="scheduled")

    def refs(ordering):
        return [i["reference"] for i in alice_api.get("/api/v1/issues/", {"ordering": ordering}).json()["results"]]

    by_severity = [alice.emergency.reference, urgent.reference, alice.routine.reference]
    assert refs("-urgency") == by_severity
    assert refs("urgency") == by_severity[::-1]
    assert refs("status") == [alice.emergency.reference, alice.routine.reference, urgent.reference]  # open first


def test_an_unknown_query_parameter_is_a_400_naming_it(alice_api, worlds):
    response = alice_api.get("/api/v1/issues/", {"stauts": "open"})
    assert response.status_code == 400
    [message] = response.json()["error"]["fields"]["stauts"]
    assert "no parameter 'stauts'" in message and "status" in message
    assert alice_api.get("/api/v1/issues/export.csv", {"organisation": "1"}).status_code == 400
    assert alice_api.get("/api/v1/contractors/", {"nmae": "x"}).status_code == 400
    assert alice_api.get("/api/v1/issues/", {"page": 1, "page_size": 5, "ordering": "-created_at"}).status_code == 200
    # Each list takes what its paginator reads: a cursor list refuses page, a page list refuses cursor.
    assert alice_api.get("/api/v1/issues/", {"cursor": "abc"}).status_code == 400
    assert alice_api.get("/api/v1/issues/export.csv", {"page": 2}).status_code == 400
    assert alice_api.get("/api/v1/audit-events/", {"page": 2}).status_code == 400
    messages = f"/api/v1/conversations/{worlds[0].conversation.pk}/messages/"
    assert alice_api.get(messages, {"page_size": 2}).status_code == 200
    assert alice_api.get(messages, {"ordering": "-created_at"}).status_code == 400


def test_every_list_narrows_to_one_organization(worlds):
    from api.tests.conftest import token_client
    from properties.tests.factories import MembershipFactory

    alice, bob = worlds
    MembershipFactory(user=alice.user, organization=bob.organization)  # a member of both agencies
    api = token_client(alice.user)
    for path in ["issues", "conversations", "documents", "properties", "tenants", "tenancies", "contractors"]:
        everything = api.get(f"/api/v1/{path}/").json()["count"]
        alices = api.get(f"/api/v1/{path}/", {"organization": alice.organization.pk}).json()["count"]
        bobs = api.get(f"/api/v1/{path}/", {"organization": bob.organization.pk}).json()["count"]
        assert alices and bobs and alices + bobs == everything, path
    rows = api.get("/api/v1/issues/export.csv", {"organization": bob.organization.pk})
    text = b"".join(rows.streaming_content).decode()
    assert alice.emergency.reference not in text and bob.emergency.reference in text


def test_page_size_is_bounded(alice_api, worlds):
    alice, _ = worlds
    for _ in range(5):
        IssueFactory(organization=alice.organization, property=alice.property)
    body = alice_api.get("/api/v1/issues/", {"page_size": 3}).json()
    assert len(body["results"]) == 3
    assert body["count"] == 7
    assert "page=2" in body["next"]


def test_bad_filter_or_ordering_is_a_clear_400(alice_api):
    response = alice_api.get("/api/v1/issues/", {"status": "broken"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert "status" in response.json()["error"]["fields"]
    response = alice_api.get("/api/v1/issues/", {"ordering": "password"})
    assert response.status_code == 400
    assert "Cannot order by password" in response.json()["error"]["fields"]["ordering"][0]


def test_yes_no_and_id_parameters_take_what_people_write_and_refuse_the_rest(alice_api, worlds):
    """?open=1 used to be dropped silently (the whole list came back), and an id
    such as -1e5000 cost the worker seconds and then a 500."""
    alice, _ = worlds
    Issue.objects.filter(pk=alice.routine.pk).update(status="resolved")

    def refs(**params):
        return [i["reference"] for i in alice_api.get("/api/v1/issues/", params).json()["results"]]

    assert refs(open="1") == refs(open="yes") == refs(open="True") == [alice.emergency.reference]
    assert refs(open="0") == refs(open="no") == [alice.routine.reference]
    for params in ({"open": "maybe"}, {"property": "-1e5000"}, {"organization": "1.5"}, {"tenant": "9" * 20}):
        response = alice_api.get("/api/v1/issues/", params)
        assert response.status_code == 400, params
        [name] = params
        assert name in response.json()["error"]["fields"], params
    assert (
        "takes an id" in alice_api.get("/api/v1/conversations/", {"tenant": "x"}).json()["error"]["fields"]["tenant"][0]
    )
    assert refs(property=alice.property.pk, ordering="reference") == sorted(refs(property=str(alice.property.pk)))


def test_a_page_or_cursor_that_is_not_one_is_a_400_and_a_page_past_the_last_a_404(alice_api, worlds):
    """DRF answered 404 for both, which reads as "no such list"."""
    response = alice_api.get("/api/v1/issues/", {"page": "abc"})
    assert response.status_code == 400 and "whole number" in response.json()["error"]["fields"]["page"][0]
    assert alice_api.get("/api/v1/issues/", {"page": "999"}).status_code == 404
    assert alice_api.get("/api/v1/issues/", {"page": "last"}).status_code == 200
    messages = f"/api/v1/conversations/{worlds[0].conversation.pk}/messages/"
    response = alice_api.get(messages, {"cursor": "xyz"})
    assert response.status_code == 400 and "next or previous link" in response.json()["error"]["fields"]["cursor"][0]
    assert alice_api.get("/api/v1/audit-events/", {"cursor": "xyz"}).status_code == 400


def test_rows_that_tie_on_the_chosen_order_come_in_one_order_on_every_page(alice_api, worlds):
    alice, _ = worlds
    for _ in range(6):
        IssueFactory(organization=alice.organization, property=alice.property, status="open")
    pages = [
        [
            i["id"]
            for i in alice_api.get("/api/v1/issues/", {"ordering": "status", "page_size": 3, "page": n}).json()[
                "results"
            ]
        ]
        for n in (1, 2, 3)
    ]
    seen = [pk for page in pages for pk in page]
    assert len(seen) == len(set(seen)) == 8
    assert pages[0] + pages[1] + pages[2] == sorted(
        seen, key=lambda pk: (Issue.objects.get(pk=pk).status != "open", pk)
    )


def test_detail_includes_the_history(alice_api, worlds):
    alice, _ = worlds
    body = alice_api.get(f"/api/v1/issues/{alice.routine.pk}/").json()
    assert body["updates"] == [
        {
            "id": alice.update.pk,
            "author": "tenant",
            "user": None,
            "body": "Still loose.",
            "created_at": body["updates"][0]["created_at"],
        }
    ]


def test_patch_status_uses_the_same_service_as_the_admin(alice_api, worlds):
    alice, _ = worlds
    response = alice_api.patch(
        f"/api/v1/issues/{alice.emergency.pk}/",
        {"status": "scheduled", "scheduled_for": TOMORROW, "note": "Plumber at 9"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "scheduled"
    assert body["scheduled_for"] == TOMORROW
    assert body["updates"][-1]["author"] == "landlord"
    assert body["updates"][-1]["user"] == alice.user.pk
    message = Message.objects.get(conversation=alice.conversation, author="landlord")
    assert message.raw_payload["purpose"] == "issue_update"
    assert "Plumber at 9" in message.body


def test_patch_refusals_are_400_with_reasons_and_change_nothing(alice_api, worlds):
    alice, _ = worlds
    url = f"/api/v1/issues/{alice.emergency.pk}/"
    cases = [
        ({"status": "scheduled"}, "status", "needs a date"),
        ({"status": "fixed"}, "status", "not a valid choice"),
        ({"status": "resolved", "title": "x"}, "title", "Only status"),
        ({}, "status", "required"),
    ]
    for payload, field, text in cases:
        response = alice_api.patch(url, payload, format="json")
        assert response.status_code == 400, payload
        error = response.json()["error"]
        assert error["code"] == "invalid"
        assert text in " ".join(error["fields"][field]), (payload, error)
    alice_api.patch(url, {"status": "resolved"}, format="json")
    response = alice_api.patch(url, {"status": "resolved"}, format="json")
    assert response.status_code == 400
    assert "cannot become resolved" in response.json()["error"]["fields"]["status"][0]
    assert Message.objects.filter(author="landlord").count() == 1


def test_token_is_required(client, worlds):
    response = client.get("/api/v1/issues/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    response = client.get("/api/v1/issues/", HTTP_AUTHORIZATION="Token not-a-real-token")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"
