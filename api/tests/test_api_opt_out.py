"""The API shows a conversation's opt-out (STOP) state."""

import pytest
from django.utils import timezone

pytestmark = pytest.mark.django_db


def test_a_conversation_shows_when_the_tenant_opted_out(alice_api, bob_api, worlds):
    alice, bob = worlds
    detail = alice_api.get(f"/api/v1/conversations/{alice.conversation.pk}/").json()
    assert detail["opted_out_at"] is None
    alice.conversation.opted_out_at = timezone.now()
    alice.conversation.save(update_fields=["opted_out_at"])
    detail = alice_api.get(f"/api/v1/conversations/{alice.conversation.pk}/").json()
    assert detail["opted_out_at"] is not None
    [listed] = alice_api.get("/api/v1/conversations/").json()["results"]
    assert listed["opted_out_at"] == detail["opted_out_at"]
    # Another organization neither sees it nor has its own conversation touched.
    assert bob_api.get(f"/api/v1/conversations/{alice.conversation.pk}/").status_code == 404
    [bobs] = bob_api.get("/api/v1/conversations/").json()["results"]
    assert bobs["id"] == bob.conversation.pk and bobs["opted_out_at"] is None
