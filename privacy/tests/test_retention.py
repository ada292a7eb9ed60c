"""Retention with a frozen clock (``now=``): what goes, what stays, dry runs,
idempotence, an open issue holding its conversation, and isolation."""

from __future__ import annotations

import datetime
import os

import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command

from conversations.models import Conversation, Message
from issues.models import Issue
from orchestration.models import Turn
from privacy.models import AuditEvent, RetentionPolicy, RetentionRun
from privacy.retention import RETAINED, months_before, retention_apply
from properties.tests.factories import IssueFactory
from properties.tests.persona import ConversationFactory, MediaFactory, MessageFactory, TurnFactory, alice_and_bob

pytestmark = pytest.mark.django_db

NOW = datetime.datetime(2029, 6, 15, 12, 0, tzinfo=datetime.UTC)


def aged(conversation: Conversation, *, months: int, body: str, with_file: bool = True) -> Message:
    """A conversation whose only message is ``months`` old."""
    message = MessageFactory.create(conversation=conversation, body=body, raw_payload={"Body": body})
    if with_file:
        MediaFactory.create(
            message=message,
            content_type="audio/ogg",
            transcript=f"{body} said",
            transcription_state="done",
            file=ContentFile(b"OggS", name="v.ogg"),
        )
    TurnFactory.create(conversation=conversation, message_ids=[message.pk])
    Message.objects.filter(pk=message.pk).update(created_at=months_before(NOW, months))
    Conversation.objects.filter(pk=conversation.pk).update(created_at=months_before(NOW, months))
    return message


@pytest.fixture
def world(db, settings):
    settings.EMERGENCY_CLASSIFIER = "off"
    alice, bob = alice_and_bob()
    org = alice.organization
    old = ConversationFactory.create(organization=org)
    middle = ConversationFactory.create(organization=org)
    recent = ConversationFactory.create(organization=org)
    held = ConversationFactory.create(organization=org)
    bob_old = ConversationFactory.create(organization=bob.organization)
    messages = {
        "old": aged(old, months=30, body="old words"),
        "middle": aged(middle, months=18, body="middle words"),
        "recent": aged(recent, months=3, body="recent words"),
        "held": aged(held, months=30, body="held words"),
        "bob_old": aged(bob_old, months=30, body="bob old words"),
    }
    IssueFactory.create(organization=org, property=alice.property, conversation=held, status="open")
    RetentionPolicy.objects.create(organization=org, message_content_months=24, media_months=12)
    return alice, bob, messages


def content(message: Message) -> tuple[str, bool, str]:
    message.refresh_from_db()
    media = message.media.get()
    return message.body, bool(media.file), media.transcript


def test_content_goes_after_its_months_media_sooner_and_an_open_issue_holds_it(
    world, django_capture_on_commit_callbacks
):
    alice, bob, messages = world
    old_file = messages["old"].media.get().file.path
    with django_capture_on_commit_callbacks(execute=True):
        report = retention_apply(now=NOW)
    assert content(messages["old"]) == (RETAINED, False, "")
    assert not os.path.exists(old_file)
    assert content(messages["middle"]) == ("middle words", False, "middle words said")  # files only (12 months)
    assert content(messages["recent"]) == ("recent words", True, "recent words said")
    assert content(messages["held"]) == ("held words", True, "held words said")  # an open issue
    assert content(messages["bob_old"]) == ("bob old words", True, "bob old words said")  # Bob has no policy
    assert Message.objects.get(pk=messages["old"].pk).raw_payload == {}
    assert Turn.objects.get(conversation=messages["old"].conversation).tool_calls[0].get("erased")
    counts = report.organizations[alice.organization.pk]
    assert counts["conversations.Message.body"] == 1 and counts["conversations.Media.file"] == 2
    assert bob.organization.pk not in report.organizations
    run = RetentionRun.objects.get(organization=alice.organization, dry_run=False)
    assert run.counts == counts and run.ran_at == NOW
    assert AuditEvent.objects.filter(action="retention", organization_id=alice.organization.pk).count() == 1


def test_a_dry_run_counts_exactly_and_changes_nothing_and_a_second_run_does_nothing(
    world, django_capture_on_commit_callbacks
):
    alice, _, messages = world
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        dry = retention_apply(now=NOW, dry_run=True)
    assert callbacks == []  # no file deletion waits for a commit
    assert content(messages["old"]) == ("old words", True, "old words said")
    assert os.path.exists(messages["old"].media.get().file.path)
    wet = retention_apply(now=NOW)
    assert dry.organizations == wet.organizations
    again = retention_apply(now=NOW)
    assert again.organizations[alice.organization.pk] == {}
    assert AuditEvent.objects.filter(action="retention").count() == 1


def test_a_resolved_issue_restarts_the_clock(world):
    alice, _, messages = world
    conversation = messages["old"].conversation
    IssueFactory.create(
        organization=alice.organization,
        property=alice.property,
        conversation=conversation,
        status=Issue.Status.RESOLVED,
        resolved_at=months_before(NOW, 6),
    )
    retention_apply(now=NOW)
    assert content(messages["old"]) == ("old words", True, "old words said")
    # Two years after the resolution, it goes.
    retention_apply(now=NOW + datetime.timedelta(days=19 * 31))
    assert content(messages["old"])[0] == RETAINED


def test_no_policy_keeps_everything(world):
    _, _, messages = world
    RetentionPolicy.objects.all().delete()
    assert retention_apply(now=NOW).organizations == {}
    assert content(messages["old"]) == ("old words", True, "old words said")


def test_the_command_runs_dry(world, settings, capsys):
    """The daily task by hand: the policies, the unrouted messages and the
    media files no row names, each counted dry and then done."""
    _, _, messages = world
    folder = os.path.join(settings.MEDIA_ROOT, "whatsapp", "2020", "02")
    os.makedirs(folder, exist_ok=True)
    lost = os.path.join(folder, "lost.ogg")
    with open(lost, "wb") as handle:
        handle.write(b"OggS")
    two_days_ago = (datetime.datetime.now() - datetime.timedelta(days=2)).timestamp()
    os.utime(lost, (two_days_ago, two_days_ago))
    call_command("apply_retention", "--dry-run", "--now", NOW.isoformat())
    out = capsys.readouterr().out
    assert "Alice Lettings: would remove" in out and "Message.body 1" in out
    assert "Media files no row names: would remove 1" in out
    assert content(messages["old"])[0] == "old words" and os.path.exists(lost)
    call_command("apply_retention", "--now", "2029-06-15T12:00")  # no zone: UTC
    assert content(messages["old"])[0] == RETAINED
    assert "Media files no row names: removed 1" in capsys.readouterr().out
    assert not os.path.exists(lost)


def test_the_command_refuses_a_date_it_cannot_read(world):
    with pytest.raises(CommandError, match="--now must be an ISO date-time such as 2027-01-31T09:00, not '15/06/2029'"):
        call_command("apply_retention", "--now", "15/06/2029")


def test_months_before_keeps_the_calendar():
    assert months_before(datetime.datetime(2029, 3, 31, tzinfo=datetime.UTC), 1).day == 28
    assert months_before(datetime.datetime(2029, 1, 15, tzinfo=datetime.UTC), 24).year == 2027


def test_the_beat_task_applies_the_policies_and_reports_totals(world, settings):
    from config.celery import app
    from config.tasks import PRIVACY_RETENTION_APPLY
    from privacy.tasks import retention_apply_task

    assert settings.CELERY_BEAT_SCHEDULE["privacy-retention"]["task"] == PRIVACY_RETENTION_APPLY
    assert app.tasks[PRIVACY_RETENTION_APPLY].name == retention_apply_task.name
    from django.utils import timezone

    _, _, messages = world
    old = messages["old"].conversation
    long_ago = months_before(timezone.now(), 30)  # the task runs as of the real clock
    Message.objects.filter(conversation=old).update(created_at=long_ago)
    Conversation.objects.filter(pk=old.pk).update(created_at=long_ago)
    totals = retention_apply_task()
    assert totals["conversations.Message.body"] >= 1
    assert content(messages["old"])[0] == RETAINED
    assert retention_apply_task() == {}


def test_a_message_that_comes_in_during_the_run_keeps_its_conversation(world, monkeypatch):
    import privacy.retention as retention

    _, _, messages = world
    conversation = messages["old"].conversation
    listed = retention._batches

    def new_message_after_the_list(ids):
        # The tenant writes again between the list of expired conversations and its batch.
        fresh = MessageFactory.create(conversation=conversation, body="the leak is back")
        Message.objects.filter(pk=fresh.pk).update(created_at=NOW)
        return listed(ids)

    monkeypatch.setattr(retention, "_batches", new_message_after_the_list)
    retention_apply(now=NOW)
    assert content(messages["old"]) == ("old words", True, "old words said")  # active again: nothing goes
    assert Message.objects.get(conversation=conversation, body="the leak is back")


def test_one_organizations_failure_does_not_stop_the_others(world):
    alice, bob, messages = world
    RetentionPolicy.objects.create(organization=bob.organization, message_content_months=24, media_months=12)
    # Saved before the form's limit existed: before year 1, which the calendar refuses.
    RetentionPolicy.objects.filter(organization=alice.organization).update(message_content_months=30000)
    report = retention_apply(now=NOW)
    assert report.failed == [alice.organization.pk]
    assert RetentionRun.objects.filter(organization=alice.organization).exists()  # the attempt is on record
    assert content(messages["bob_old"]) == (RETAINED, False, "")
    with pytest.raises(Exception, match="failed for organization"):
        call_command("apply_retention", now=NOW.isoformat())


def test_a_policy_over_a_century_is_refused_by_the_form(world):
    from django.core.exceptions import ValidationError

    alice, _, _ = world
    policy = RetentionPolicy.objects.get(organization=alice.organization)
    policy.message_content_months = 1201
    with pytest.raises(ValidationError, match="1200"):
        policy.full_clean()


def test_files_no_row_names_are_deleted_after_a_grace(world, settings, django_capture_on_commit_callbacks):
    """A file whose deletion was lost (a worker died after the erasure
    committed) is found by the daily sweep; a file just written by a download
    whose row is not committed yet is left alone."""
    from privacy.media_orphans import media_orphans_delete

    _, _, messages = world
    kept = messages["recent"].media.get().file
    folder = os.path.join(settings.MEDIA_ROOT, "whatsapp", "2020", "01")
    os.makedirs(folder, exist_ok=True)
    lost, fresh = os.path.join(folder, "lost.ogg"), os.path.join(folder, "fresh.ogg")
    for path in (lost, fresh):
        with open(path, "wb") as handle:
            handle.write(b"OggS tenant voice")
    two_days_ago = (datetime.datetime.now() - datetime.timedelta(days=2)).timestamp()
    os.utime(lost, (two_days_ago, two_days_ago))
    os.utime(kept.path, (two_days_ago, two_days_ago))

    assert media_orphans_delete(dry_run=True) == ["whatsapp/2020/01/lost.ogg"]
    assert os.path.exists(lost)
    assert media_orphans_delete() == ["whatsapp/2020/01/lost.ogg"]
    assert not os.path.exists(lost) and os.path.exists(fresh) and os.path.exists(kept.path)


def test_unrouted_messages_go_after_their_days_and_routed_ones_stay(world, settings, capsys):
    from privacy.retention import unrouted_messages_delete

    settings.UNROUTED_MESSAGE_RETENTION_DAYS = 30
    _, _, messages = world
    old = MessageFactory.create(conversation=None, organization=None, body="to a number nobody owns", status="received")
    fresh = MessageFactory.create(conversation=None, organization=None, body="yesterday", status="received")
    Message.objects.filter(pk=old.pk).update(created_at=NOW - datetime.timedelta(days=31))
    Message.objects.filter(pk=fresh.pk).update(created_at=NOW - datetime.timedelta(days=29))
    # A routed message as old, whose organization has no policy, is not the unrouted rule's to take.
    RetentionPolicy.objects.all().delete()

    call_command("apply_retention", "--dry-run", "--now", NOW.isoformat())
    assert "Unrouted messages: would remove 1" in capsys.readouterr().out
    assert Message.objects.filter(pk=old.pk).exists()

    assert unrouted_messages_delete(now=NOW) == 1
    assert not Message.objects.filter(pk=old.pk).exists()
    assert Message.objects.filter(pk=fresh.pk).exists()
    assert content(messages["old"])[0] == "old words"

    settings.UNROUTED_MESSAGE_RETENTION_DAYS = 0  # keeps them
    Message.objects.filter(pk=fresh.pk).update(created_at=NOW - datetime.timedelta(days=400))
    assert unrouted_messages_delete(now=NOW) == 0
    assert Message.objects.filter(pk=fresh.pk).exists()


def test_photos_kept_longer_than_the_words_stay_after_the_words_go(world, django_capture_on_commit_callbacks):
    """media_months longer than message_content_months: the words go at their
    months, the files at theirs (the words' redaction used to take the files too)."""
    alice, _, messages = world
    RetentionPolicy.objects.filter(organization=alice.organization).update(message_content_months=12, media_months=36)
    with django_capture_on_commit_callbacks(execute=True):
        retention_apply(now=NOW)
    assert content(messages["middle"]) == (RETAINED, True, "")  # 18 months: the words only
    assert os.path.exists(messages["middle"].media.get().file.path)
    assert content(messages["old"]) == (RETAINED, True, "")  # 30 months: under 36
    with django_capture_on_commit_callbacks(execute=True):
        retention_apply(now=NOW + datetime.timedelta(days=366))
    assert content(messages["old"]) == (RETAINED, False, "")  # past 36 months now
    assert content(messages["middle"])[1] is True
