"""A photo hazard end to end with a real Celery worker on real Redis: the
signed webhook, the download from the Twilio stub into storage, the turn
showing the photo to Claude (the real anthropic SDK against its stub), the
emergency issue and alert, and the replies through the real twilio SDK."""

from __future__ import annotations

import json
import uuid

import pytest

from conftest import wait_for
from conversations.models import Media, Message
from emergencies.models import EmergencyAlert
from issues.models import Issue
from orchestration.images import image_tokens
from orchestration.models import Turn
from orchestration.testing.anthropic_stub import request_images, tool_use_response
from orchestration.testing.fixtures import ORG_NUMBER, PHONE
from orchestration.testing.photos import photo_bytes

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_scorched_socket_in_a_photo_is_seen_and_handled_as_one_emergency(
    home, post_inbound, twilio_stub, anthropic_stub, celery_worker_factory
):
    photo = photo_bytes(3000, 2250, scene="socket_scorch")
    path = f"/2010-04-01/Accounts/AC{'1' * 32}/Messages/MM{uuid.uuid4().hex}/Media/ME{uuid.uuid4().hex}"
    twilio_stub.serve_file(path, photo, content_type="image/jpeg")
    anthropic_stub.queue(
        tool_use_response(
            "create_issue",
            {
                "title": "Scorched socket in the hallway",
                "description": "Tenant asked about a mark by the plug in the hallway.",
                "category": "electrical",
                "urgency": "emergency",
                "location": "hallway",
                "photo": "provided",
                "photo_findings": "Black scorch marks around a double socket; the plug in it looks melted.",
                "message": "I can see scorch marks and a melted plug: that socket may be overheating.",
            },
        )
    )
    celery_worker_factory(EMERGENCY_CLASSIFIER="off", INBOUND_COALESCE_SECONDS="1").start()

    response = post_inbound(
        phone=PHONE,
        to=ORG_NUMBER,
        body="what is this mark by the plug?",
        media=[("https://api.twilio.com" + path, "image/jpeg")],
        extra={"MessageType": "image"},
    )
    assert response.status_code == 200
    wait_for(
        lambda: any("melted plug" in form.get("Body", "") for form in twilio_stub.sent), timeout=60, message="reply"
    )

    message = Message.objects.get(provider_sid=response.params["MessageSid"])
    assert Media.objects.get(message=message).download_state == "downloaded"
    [request] = anthropic_stub.requests
    [image] = request_images(request)
    assert (image.source_type, image.format) == ("base64", "JPEG") and max(image.width, image.height) <= 1568
    assert path not in json.dumps(request["json"])
    issue = Issue.objects.get()
    alert = EmergencyAlert.objects.get()
    assert issue.urgency == "emergency" and "scorch marks" in issue.photo_findings and issue.photos.count() == 1
    assert alert.issue_id == issue.pk and alert.source == "model"
    reply = next(form["Body"] for form in twilio_stub.sent if "melted plug" in form.get("Body", ""))
    assert alert.safety_reply in reply and issue.reference in reply
    turn = Turn.objects.get()
    assert (turn.images_sent, turn.image_tokens) == (1, image_tokens(image.width, image.height))
