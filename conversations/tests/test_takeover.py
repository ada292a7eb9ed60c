import pytest

from conversations.models import Conversation, Message
from conversations.takeover import (
    LANDLORD_MESSAGE_MAX_CHARS,
    ConversationActionError,
    conversation_handback,
    conversation_landlord_message_send,
    conversation_takeover,
)
from properties.tests.factories import UserFactory
from properties.tests.persona import ConversationFactory

pytestmark = pytest.mark.django_db


def test_take_over_and_hand_back_flip_bot_paused_once():
    conversation = ConversationFactory()
    user = UserFactory()
    assert conversation_takeover(conversation=conversation, user=user) is True
    assert Conversation.objects.get(pk=conversation.pk).bot_paused is True
    assert conversation_takeover(conversation=conversation, user=user) is False
    assert conversation_handback(conversation=conversation, user=user) is True
    assert Conversation.objects.get(pk=conversation.pk).bot_paused is False
    assert conversation_handback(conversation=conversation, user=user) is False


def test_landlord_message_is_stored_as_landlord_and_queued_after_commit(django_capture_on_commit_callbacks):
    conversation = ConversationFactory()
    user = UserFactory()
    with django_capture_on_commit_callbacks() as callbacks:
        [message] = conversation_landlord_message_send(conversation=conversation, user=user, body="  On my way.  ")
    assert message.body == "On my way."
    assert message.author == Message.Author.LANDLORD
    assert message.direction == Message.Direction.OUTBOUND
    assert message.status == Message.Status.PENDING
    stored = Message.objects.get(pk=message.pk)
    assert stored.raw_payload == {"purpose": "generic", "sent_by_user_id": user.pk}
    assert len(callbacks) == 1


def test_long_landlord_message_is_split_in_order():
    conversation = ConversationFactory()
    body = " ".join(f"Sentence {i} about the repair." for i in range(120))
    parts = conversation_landlord_message_send(conversation=conversation, user=None, body=body)
    assert len(parts) > 1
    assert " ".join(p.body for p in parts) == body


@pytest.mark.parametrize("body", ["", "   ", "x" * (LANDLORD_MESSAGE_MAX_CHARS + 1)])
def test_empty_or_huge_message_is_refused(body):
    conversation = ConversationFactory()
    with pytest.raises(ConversationActionError):
        conversation_landlord_message_send(conversation=conversation, user=None, body=body)
    assert not Message.objects.exists()
