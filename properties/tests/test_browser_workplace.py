"""A landlord's morning in a real browser: headless Chromium (Debian's
``chromium`` package) driven by Playwright against the live test server.

Alice logs in, sees only her issues with the emergency highlighted, resolves
one with the list action (the tenant's WhatsApp notification is recorded),
opens the emergency's conversation, takes over from the assistant and writes
to the tenant herself. Screenshots go to ``test-output/<test name>/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from conversations.models import Conversation, Message
from issues.models import Issue
from properties.tests.persona import PASSWORD, alice_and_bob

HIGHLIGHT = "rgb(255, 240, 240)"  # #fff0f0 in workplace/admin.css


@pytest.fixture
def output_dir(request) -> Path:
    path = Path(settings.BASE_DIR) / "test-output" / request.node.name
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.browser
def test_landlord_resolves_an_issue_and_takes_over_a_conversation(live_server, browser_page, output_dir):
    alice, bob = alice_and_bob()
    page = browser_page

    # Log in.
    page.goto(f"{live_server.url}/admin/login/?next=/admin/issues/issue/")
    page.fill("#id_username", alice.user.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#result_list")

    # Only Alice's issues; the open emergency is first and highlighted.
    rows = page.locator("#result_list tbody tr")
    assert rows.count() == 2
    body = page.inner_text("#result_list")
    assert alice.emergency.reference in body
    assert alice.routine.reference in body
    assert bob.emergency.reference not in page.content()
    first = rows.nth(0)
    assert alice.emergency.reference in first.inner_text()
    assert "EMERGENCY" in first.inner_text()
    background = first.locator("td").first.evaluate("el => getComputedStyle(el).backgroundColor")
    assert background == HIGHLIGHT
    assert rows.nth(1).locator("td").first.evaluate("el => getComputedStyle(el).backgroundColor") != HIGHLIGHT
    # The photo thumbnail is a real image served by the scoped media view.
    thumbnail = first.locator("img.thumb")
    assert thumbnail.evaluate("img => img.complete && img.naturalWidth") == 1
    page.screenshot(path=str(output_dir / "issue-list.png"), full_page=True)

    # Resolve the routine issue with the list action.
    page.check(f"input[name=_selected_action][value='{alice.routine.pk}']")
    page.select_option("select[name=action]", "resolve")
    page.click("button[name=index]")
    page.wait_for_selector("ul.messagelist")
    assert "tenant notified" in page.inner_text("ul.messagelist")
    routine = Issue.objects.get(pk=alice.routine.pk)
    assert routine.status == "resolved"
    notification = Message.objects.get(conversation=alice.conversation, author="landlord")
    assert notification.raw_payload["purpose"] == "issue_fixed"  # "Is it fixed?" with Yes / No
    assert alice.routine.reference in notification.body and "Is it fixed?" in notification.body
    assert routine.updates.filter(author="landlord", user=alice.user).exists()

    # Open the emergency, then its conversation.
    page.click(f"text={alice.emergency.reference}")
    page.click("text=Open the WhatsApp conversation")
    page.wait_for_selector("#transcript")
    assert "your landlord has marked it as fixed. Is it fixed?" in page.inner_text("#transcript")
    assert page.inner_text("#handled-by") == "the assistant"

    # Take over, then write to the tenant.
    page.click("#take-over")
    page.wait_for_selector("#hand-back")
    assert "assistant paused" in page.inner_text("#handled-by")
    assert Conversation.objects.get(pk=alice.conversation.pk).bot_paused is True

    text = "Hello, this is Alice. A plumber will call you within the hour."
    page.fill("#send-message textarea[name=body]", text)
    page.click("#send-message input[type=submit]")
    page.wait_for_selector("ul.messagelist")
    assert "Message queued for sending" in page.inner_text("ul.messagelist")
    assert text in page.inner_text("#transcript")
    page.screenshot(path=str(output_dir / "conversation.png"), full_page=True)

    sent = Message.objects.get(conversation=alice.conversation, body=text)
    assert (sent.direction, sent.author, sent.status) == ("outbound", "landlord", "pending")
    assert sent.raw_payload["sent_by_user_id"] == alice.user.pk
    assert (output_dir / "issue-list.png").stat().st_size > 0
    assert (output_dir / "conversation.png").stat().st_size > 0
