"""An issue status change reaches the tenant through the real outbound path: a
Celery worker sends it as text inside WhatsApp's 24-hour window and as the
configured ``issue_update`` template outside it."""

import datetime

import pytest
from django.utils import timezone

from conftest import wait_for
from conversations.models import Message
from issues.status import issue_status_change
from properties.tests.factories import IssueFactory, UserFactory
from properties.tests.persona import ConversationFactory


def sent(message_id: int) -> Message | None:
    message = Message.objects.get(pk=message_id)
    return message if message.status not in {"pending", "sending"} else None


@pytest.mark.worker
def test_tenant_notification_is_text_inside_the_window_and_a_template_outside(celery_worker_factory):
    worker = celery_worker_factory(WHATSAPP_TEMPLATES="issue_update=HXissueupdate,generic=HXgeneric").start()
    recent = ConversationFactory(last_inbound_at=timezone.now() - datetime.timedelta(hours=2))
    stale = ConversationFactory(last_inbound_at=timezone.now() - datetime.timedelta(days=3))
    landlord = UserFactory()
    updates = [
        issue_status_change(
            issue=IssueFactory(organization=c.organization, conversation=c), status="acknowledged", actor=landlord
        )
        for c in (recent, stale)
    ]
    inside, outside = (
        Message.objects.get(conversation=c, direction="outbound", author="landlord") for c in (recent, stale)
    )
    inside = wait_for(lambda: sent(inside.pk), timeout=60, message=f"the text to be sent\n{worker.log_path}")
    outside = wait_for(lambda: sent(outside.pk), timeout=60, message=f"the template to be sent\n{worker.log_path}")
    assert (inside.status, inside.template_sid) == ("sent", "")
    assert (outside.status, outside.template_sid) == ("sent", "HXissueupdate")
    assert outside.template_variables == {"1": outside.body}
    assert all(str(m.pk) in u.body for m, u in zip((inside, outside), updates, strict=True))
