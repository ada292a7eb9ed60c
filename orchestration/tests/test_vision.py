"""Photos the model can see: the tenant's photos travel from Twilio (a local
stub) through the real download into our storage, and from there to Claude
(the real anthropic SDK against the local stub) as resized base64 JPEG image
blocks; what the model says about them is stored on the issue, and a hazard it
sees takes the emergency path."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Sequence

import pytest
from django.core import mail
from django.urls import reverse

from conversations.media import media_download
from conversations.models import Media, Message
from emergencies.models import EmergencyAlert
from issues.models import Issue
from orchestration.images import MAX_IMAGE_PIXELS, image_tokens
from orchestration.models import Turn
from orchestration.pipeline import inbound_process
from orchestration.testing.anthropic_stub import request_images, request_text, tool_use_response
from orchestration.testing.fixtures import ORG_NUMBER, PHONE
from orchestration.testing.photos import photo_bytes

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _quiet(settings):
    settings.EMERGENCY_CLASSIFIER = "off"
    settings.INBOUND_COALESCE_SECONDS = 0
    settings.VISION_ENABLED = True
    settings.VISION_MAX_EDGE_PIXELS = 1568
    settings.VISION_JPEG_QUALITY = 85
    settings.VISION_MAX_IMAGES_PER_TURN = 4


@pytest.fixture
def tenant_sends(post_inbound, twilio_stub, settings):
    """The tenant sends words and photos over the real webhook; Twilio (the
    stub) serves each photo at a media URL; the real download stores it
    (unless ``download=False``: still downloading); then the turn runs."""
    settings.WHATSAPP_SENDER = "console"  # replies are stored; nothing needs to reach Twilio

    def send(
        text: str = "", photos: Sequence[tuple[bytes, str]] = (), *, download: bool = True, phone: str = PHONE
    ) -> list[str]:
        media = []
        for body, content_type in photos:
            path = f"/2010-04-01/Accounts/AC{'1' * 32}/Messages/MM{uuid.uuid4().hex}/Media/ME{uuid.uuid4().hex}"
            twilio_stub.serve_file(path, body, content_type=content_type)
            media.append((settings.TWILIO_API_BASE_URL + path, content_type))
        before = max(Message.objects.filter(direction="outbound").values_list("id", flat=True), default=0)
        response = post_inbound(phone=phone, to=ORG_NUMBER, body=text, media=media)
        assert response.status_code == 200
        message = Message.objects.get(provider_sid=response.params["MessageSid"])
        if download:
            for item in message.media.all():
                downloaded = media_download(media_id=item.pk)
                assert downloaded is not None and downloaded.download_state == Media.DownloadState.DOWNLOADED
        inbound_process(message_id=message.pk)
        return list(
            Message.objects.filter(direction="outbound", id__gt=before, conversation=message.conversation)
            .order_by("id")
            .values_list("body", flat=True)
        )

    return send


def _request_json(request) -> str:
    return json.dumps(request["json"])


def test_a_photo_reaches_claude_as_a_resized_base64_jpeg_never_a_twilio_url(home, tenant_sends, anthropic_stub):
    anthropic_stub.queue(
        tool_use_response("ask_for_details", {"question": "I can see water on the wall. Is the socket wet?"})
    )
    big = photo_bytes(4032, 3024, fmt="PNG", scene="socket_water")  # a phone's 12 MP, as PNG
    [reply] = tenant_sends("look at this, kitchen wall", [(big, "image/png")])
    assert reply == "I can see water on the wall. Is the socket wet?"

    [request] = anthropic_stub.requests
    [image] = request_images(request)
    assert (image.source_type, image.media_type, image.format) == ("base64", "image/jpeg", "JPEG")
    assert max(image.width, image.height) <= 1568 and image.width * image.height <= MAX_IMAGE_PIXELS
    assert abs(image.width / image.height - 4 / 3) < 0.01  # the aspect ratio kept
    assert image.size < len(big) and image.size < 5 * 1024 * 1024
    # The photo comes from our storage: no Twilio media URL anywhere in the request.
    assert "/Media/ME" not in _request_json(request) and "twilio" not in _request_json(request).lower()
    content = request["json"]["messages"][0]["content"]
    assert [b["type"] for b in content] == ["text", "image", "text"]  # the label, the photo, then the context
    text = request_text(request)
    # The note sits with the context's notes, not after the tenant's message where it would read as their words.
    assert text.index("You can see the tenant's 1 photo(s) above") < text.index("New message(s) from the tenant:")
    assert "[sent 1 photo(s)]" in request_text(request)

    turn = Turn.objects.get()
    assert turn.images_sent == 1
    assert turn.image_tokens == image_tokens(image.width, image.height) == math.ceil(image.width * image.height / 750)


def test_a_heic_photo_is_converted_to_jpeg(home, tenant_sends, anthropic_stub):
    anthropic_stub.queue(tool_use_response("ask_for_details", {"question": "Where is that?"}))
    heic = photo_bytes(800, 600, fmt="HEIF", scene="ceiling_stain")
    assert heic[4:12] in (b"ftypheic", b"ftypmif1", b"ftypheix")  # really HEIF, as an iPhone sends it
    tenant_sends("", [(heic, "image/heic")])
    [image] = request_images(anthropic_stub.requests[0])
    assert (image.format, image.width, image.height) == ("JPEG", 800, 600)  # small enough: not resized


def test_a_sideways_phone_photo_is_turned_upright(home, tenant_sends, anthropic_stub):
    anthropic_stub.queue(tool_use_response("ask_for_details", {"question": "Which room?"}))
    tenant_sends("", [(photo_bytes(600, 400, exif_orientation=6), "image/jpeg")])  # EXIF: rotate 90
    [image] = request_images(anthropic_stub.requests[0])
    assert (image.width, image.height) == (400, 600)


@pytest.mark.parametrize("switch", ["organization", "setting"])
def test_vision_off_sends_only_the_words(home, tenant_sends, anthropic_stub, settings, switch):
    if switch == "organization":
        home.vision_enabled = False
        home.save(update_fields=["vision_enabled"])
    else:
        settings.VISION_ENABLED = False
    anthropic_stub.queue(tool_use_response("ask_for_details", {"question": "What does the photo show?"}))
    tenant_sends("", [(photo_bytes(), "image/jpeg")])
    [request] = anthropic_stub.requests
    assert request_images(request) == []
    content = request["json"]["messages"][0]["content"]
    assert isinstance(content, str) and "[sent 1 photo(s)]" in content and "photo(s) above" not in content
    turn = Turn.objects.get()
    assert (turn.images_sent, turn.image_tokens) == (0, 0)


def test_a_photo_still_downloading_is_not_sent_and_the_model_is_told(home, tenant_sends, anthropic_stub):
    anthropic_stub.queue(tool_use_response("ask_for_details", {"question": "What is it of?"}))
    tenant_sends("here", [(photo_bytes(), "image/jpeg")], download=False)
    [request] = anthropic_stub.requests
    assert request_images(request) == []
    assert "1 photo(s) still downloading, not shown to you" in request_text(request)
    assert Turn.objects.get().images_sent == 0


def test_a_file_that_is_not_an_image_is_skipped_with_a_note(home, tenant_sends, anthropic_stub):
    anthropic_stub.queue(tool_use_response("ask_for_details", {"question": "What is it of?"}))
    tenant_sends("", [(b"\xff\xd8\xff\xe0 not really a jpeg" * 20, "image/jpeg")])
    [request] = anthropic_stub.requests
    assert request_images(request) == []
    assert "1 photo(s) not shown to you (a file that could not be read as an image" in request_text(request)


def test_only_the_newest_photos_go_in_one_turn(home, tenant_sends, anthropic_stub, settings):
    settings.VISION_MAX_IMAGES_PER_TURN = 2
    anthropic_stub.queue(tool_use_response("ask_for_details", {"question": "Which room?"}))
    colors = [(250, 0, 0), (0, 250, 0), (0, 0, 250)]
    tenant_sends("", [(photo_bytes(300, 300, color=c), "image/jpeg") for c in colors])
    images = request_images(anthropic_stub.requests[0])
    assert len(images) == 2
    import io

    from PIL import Image

    firsts = [Image.open(io.BytesIO(i.data)).convert("RGB").getpixel((150, 150)) for i in images]
    assert [max(range(3), key=lambda k: p[k]) for p in firsts] == [1, 2]  # green then blue: the newest two
    assert "1 older photo(s) of this report are not shown" in request_text(anthropic_stub.requests[0])


def test_the_reports_photos_are_seen_again_at_create_issue_and_findings_reach_the_landlord(
    home, tenant_sends, anthropic_stub, django_capture_on_commit_callbacks, admin_client
):
    anthropic_stub.queue(
        tool_use_response("ask_for_details", {"question": "I can see a brown stain. Is it still dripping?"}),
        tool_use_response(
            "create_issue",
            {
                "title": "Water stain on bathroom ceiling",
                "description": "Brown stain on the bathroom ceiling, dripping since last night.",
                "category": "plumbing",
                "urgency": "urgent",
                "location": "bathroom ceiling",
                "photo": "provided",
                "photo_findings": "Brown water stain about 40 cm across in the middle of the ceiling, darker centre.",
                "message": "Thanks, I've logged it.",
            },
        ),
    )
    tenant_sends("the bathroom ceiling", [(photo_bytes(1600, 1200, scene="ceiling_stain"), "image/jpeg")])
    with django_capture_on_commit_callbacks(execute=True):
        replies = tenant_sends("yes, it drips when the flat upstairs showers")
    first, second = anthropic_stub.requests
    assert len(request_images(first)) == 1
    # No new photo in the second turn, but an issue may be created: the report's photo is shown again.
    [again] = request_images(second)
    assert (again.width, again.height) == (request_images(first)[0].width, request_images(first)[0].height)

    issue = Issue.objects.get()
    assert issue.photo_findings.startswith("Brown water stain about 40 cm")
    assert issue.photos.count() == 1
    assert any(issue.reference in r for r in replies)
    [email] = [m for m in mail.outbox if issue.reference in m.subject]
    assert "Seen in the tenant's photos: Brown water stain" in email.body
    page = admin_client.get(reverse("admin:issues_issue_change", args=[issue.pk]))
    assert page.status_code == 200 and "Brown water stain about 40 cm" in page.content.decode()
    turns = list(Turn.objects.order_by("id"))
    assert [t.images_sent for t in turns] == [1, 1]
    listing = admin_client.get(reverse("admin:orchestration_turn_changelist"))
    assert f"1 ({turns[0].image_tokens} tokens)" in listing.content.decode()


def test_a_hazard_seen_in_a_photo_makes_one_emergency_issue_and_one_alert(home, tenant_sends, anthropic_stub):
    anthropic_stub.queue(
        tool_use_response(
            "create_issue",
            {
                "title": "Water running onto a double socket",
                "description": "Tenant sent a photo of the kitchen wall asking what the marks are.",
                "category": "electrical",
                "urgency": "emergency",
                "location": "kitchen wall",
                "photo": "provided",
                "photo_findings": "Water running down the wall onto a double socket; scorch mark beside it.",
                "message": "I can see water running onto the socket and a scorch mark.",
            },
        ),
        tool_use_response("respond", {"message": "Keep away from it; the agency is on its way."}),
    )
    replies = tenant_sends(
        "what's this on the wall next to the fridge?", [(photo_bytes(scene="socket_water"), "image/jpeg")]
    )
    issue = Issue.objects.get()
    alert = EmergencyAlert.objects.get()
    assert (issue.urgency, issue.category, issue.photo) == ("emergency", "electrical", "provided")
    assert "scorch mark" in issue.photo_findings and issue.photos.count() == 1
    assert (alert.source, alert.category, alert.issue_id) == ("model", "electrical", issue.pk)
    assert alert.safety_reply and alert.safety_reply in replies[-1]  # the safety advice, with the reply
    assert "I can see water running onto the socket" in replies[-1] and issue.reference in replies[-1]

    tenant_sends("ok, I've switched it off at the fuse box")  # the next turn adds nothing
    assert Issue.objects.count() == 1 and EmergencyAlert.objects.count() == 1


def test_a_hazard_in_a_photo_from_an_unknown_number_alerts_at_once_and_files_one_issue_on_confirmation(
    home, tenant_sends, anthropic_stub
):
    unknown = "+447700900999"
    anthropic_stub.queue(
        tool_use_response(
            "escalate",
            {
                "reason": "Photo shows black soot around the boiler flue: possible carbon monoxide.",
                "message": "That soot can be a sign of carbon monoxide. What is your address?",
                "emergency_category": "carbon_monoxide",
            },
        ),
        tool_use_response("find_property", {"address": "Flat 1, 12 Harbour Street, Leeds"}),
        tool_use_response("confirm_property", {"confirmed": True}),
        tool_use_response(
            "create_issue",
            {
                "title": "Soot around the boiler flue",
                "description": "Tenant sent a photo of the boiler.",
                "category": "safety",
                "urgency": "emergency",
                "location": "boiler cupboard",
                "photo": "provided",
                "photo_findings": "Heavy black soot around the top of the boiler and the flue pipe.",
                "message": "Please keep the boiler off until the engineer has checked it.",
            },
        ),
    )
    first = tenant_sends("is this normal?", [(photo_bytes(scene="boiler_soot"), "image/jpeg")], phone=unknown)
    alert = EmergencyAlert.objects.get()
    assert (alert.source, alert.category, alert.issue_id) == ("model", "carbon_monoxide", None)
    assert alert.safety_reply and alert.safety_reply in first[-1]
    tenant_sends("Flat 1, 12 Harbour Street, Leeds", phone=unknown)
    tenant_sends("yes", phone=unknown)
    issue = Issue.objects.get()
    assert issue.urgency == "emergency" and issue.photo_findings.startswith("Heavy black soot")
    assert EmergencyAlert.objects.get().issue_id == issue.pk
    assert issue.photos.count() == 1
    # After the confirmation the model decided with the report's photo in front of it.
    assert len(request_images(anthropic_stub.requests[-1])) == 1


def test_the_scripted_model_reads_the_words_of_a_turn_with_photos(home, tenant_sends, settings):
    """The golden scenarios and the demo run the scripted model: it takes the
    content list (photos and the context) and answers from the words."""
    settings.LLM_BACKEND = "scripted"
    [reply] = tenant_sends("", [(photo_bytes(), "image/jpeg")])
    assert "what does it show" in reply.lower() or "where" in reply.lower()
    turn = Turn.objects.get()
    assert turn.images_sent == 1 and turn.image_tokens > 0 and turn.model.startswith("scripted")
