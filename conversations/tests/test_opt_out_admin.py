"""The landlord sees a tenant's opt-out (STOP) in the admin: the conversation
list and page, and the tenant's page (derived from their conversations)."""

import pytest
from django.urls import reverse
from django.utils import timezone

from conversations.outbound import outbound_text_queue
from properties.tests.persona import alice_and_bob

pytestmark = pytest.mark.django_db


@pytest.fixture
def worlds(client):
    alice, bob = alice_and_bob()
    client.force_login(alice.user)
    return alice, bob


def test_the_conversation_list_and_page_show_the_opt_out(client, worlds):
    alice, _ = worlds
    listed = client.get(reverse("admin:conversations_conversation_changelist")).content.decode()
    assert "opted out" not in listed
    alice.conversation.opted_out_at = timezone.now()
    alice.conversation.save(update_fields=["opted_out_at"])
    listed = client.get(reverse("admin:conversations_conversation_changelist")).content.decode()
    assert "opted out" in listed
    # An update refused for the opt-out shows in the transcript with the reason.
    [refused] = outbound_text_queue(conversation=alice.conversation, body="Plumber on Tuesday", purpose="issue_update")
    page = client.get(reverse("admin:conversations_conversation_change", args=[alice.conversation.pk]))
    html = page.content.decode()
    assert 'id="opted-out"' in html
    assert f'id="send-error-{refused.pk}">not delivered (opted_out): not sent: the tenant opted out' in html


def test_the_tenant_page_shows_the_opt_out_of_their_conversation(client, worlds):
    alice, bob = worlds
    url = reverse("admin:properties_tenant_change", args=[alice.tenant.pk])
    assert "opted out since" not in client.get(url).content.decode()
    # Another organization's conversation with a tenant opted out says nothing about Alice's tenant.
    bob.conversation.opted_out_at = timezone.now()
    bob.conversation.save(update_fields=["opted_out_at"])
    assert "opted out since" not in client.get(url).content.decode()
    alice.conversation.opted_out_at = timezone.now()
    alice.conversation.save(update_fields=["opted_out_at"])
    html = client.get(url).content.decode()
    assert "WhatsApp messages" in html and "opted out since" in html
