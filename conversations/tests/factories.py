import factory
from django.utils import timezone

from conversations.models import Conversation, Media, Message
from properties.tests.factories import OrganizationFactory


class ConversationFactory(factory.django.DjangoModelFactory[Conversation]):
    class Meta:
        model = Conversation

    organization = factory.SubFactory(OrganizationFactory)
    # A range no test names: in +447700900nnn the sequence reached fixtures' own numbers (+447700900123).
    phone = factory.Sequence(lambda n: f"+4477004{n:05d}")
    whatsapp_id = factory.LazyAttribute(lambda o: f"whatsapp:{o.phone}")
    last_inbound_at = factory.LazyFunction(timezone.now)


class MessageFactory(factory.django.DjangoModelFactory[Message]):
    class Meta:
        model = Message

    conversation = factory.SubFactory(ConversationFactory)
    organization = factory.SelfAttribute("conversation.organization")
    direction = Message.Direction.INBOUND
    author = Message.Author.TENANT
    body = "My kitchen tap is leaking"
    provider_sid = factory.Sequence(lambda n: f"SM{n:032d}")
    from_address = factory.LazyAttribute(lambda o: o.conversation.whatsapp_id)
    to_address = "whatsapp:+14155550001"
    status = Message.Status.RECEIVED


class MediaFactory(factory.django.DjangoModelFactory[Media]):
    class Meta:
        model = Media

    message = factory.SubFactory(MessageFactory, body="")
    index = 0
    provider_url = "https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1"
    content_type = "image/jpeg"
