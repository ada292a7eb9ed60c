import pytest

from properties.tests.persona import ConversationFactory, MessageFactory

pytestmark = pytest.mark.django_db


def test_conversation_list_and_filters(alice_api, worlds):
    alice, _ = worlds
    body = alice_api.get("/api/v1/conversations/").json()
    assert [c["id"] for c in body["results"]] == [alice.conversation.pk]
    item = body["results"][0]
    assert item["tenant"] == {"id": alice.tenant.pk, "name": alice.tenant.name}
    assert item["identity_status"] == "confirmed"
    assert item["bot_paused"] is False
    assert alice_api.get("/api/v1/conversations/", {"bot_paused": "true"}).json()["count"] == 0
    assert alice_api.get("/api/v1/conversations/", {"gathering_state": "issue_created"}).json()["count"] == 1
    assert alice_api.get("/api/v1/conversations/", {"escalated": "true"}).json()["count"] == 0
    detail = alice_api.get(f"/api/v1/conversations/{alice.conversation.pk}/").json()
    assert detail["phone"] == alice.conversation.phone


def test_a_conversation_nobody_wrote_in_comes_last_in_latest_first(alice_api, worlds):
    alice, _ = worlds
    silent = ConversationFactory(organization=alice.organization, phone="+447700900999", last_inbound_at=None)
    ids = [c["id"] for c in alice_api.get("/api/v1/conversations/").json()["results"]]
    assert ids == [alice.conversation.pk, silent.pk]
    ids = [c["id"] for c in alice_api.get("/api/v1/conversations/", {"ordering": "last_inbound_at"}).json()["results"]]
    assert ids == [alice.conversation.pk, silent.pk]


def test_messages_page_with_a_cursor_in_order_without_counting(alice_api, worlds):
    alice, _ = worlds
    for n in range(5):
        MessageFactory(conversation=alice.conversation, body=f"later {n}")
    url = f"/api/v1/conversations/{alice.conversation.pk}/messages/"
    first = alice_api.get(url, {"page_size": 4}).json()
    assert "count" not in first
    assert first["results"][0]["body"] == alice.inbound.body
    assert first["results"][0]["media"] == [
        {
            "id": alice.media.pk,
            "index": 0,
            "content_type": "image/png",
            "size": None,
            "download_state": "downloaded",
            # A photo: no voice-note fields filled in.
            "duration_seconds": None,
            "transcription_state": "",
            "transcript": "",
            "transcript_language": "",
        }
    ]
    second = alice_api.get(first["next"]).json()
    bodies = [m["body"] for m in first["results"] + second["results"]]
    assert bodies == [alice.inbound.body, alice.outbound.body] + [f"later {n}" for n in range(5)]
    assert second["next"] is None
