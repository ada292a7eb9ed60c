import datetime

import pytest
from django.utils import timezone

from config.tasks import OUTBOUND_SEND
from conversations.models import Conversation, Message
from issues.models import Issue, IssueUpdate
from issues.status import TRANSITIONS, IssueStatusError, issue_status_change
from properties.tests.factories import IssueFactory, TenantFactory, UserFactory
from properties.tests.persona import ConversationFactory

pytestmark = pytest.mark.django_db

TOMORROW = timezone.now().date() + datetime.timedelta(days=1)


@pytest.fixture
def issue():
    conversation = ConversationFactory()
    tenant = TenantFactory(organization=conversation.organization, phone=conversation.phone)
    return IssueFactory(
        organization=conversation.organization, conversation=conversation, tenant=tenant, reference="R-000042"
    )


def outbound(issue):
    return list(Message.objects.filter(direction="outbound", conversation=issue.conversation).order_by("id"))


def test_acknowledge_records_an_update_and_queues_a_whatsapp_text_after_commit(
    issue, django_capture_on_commit_callbacks
):
    landlord = UserFactory()
    with django_capture_on_commit_callbacks() as callbacks:
        update = issue_status_change(issue=issue, status="acknowledged", actor=landlord)

    issue.refresh_from_db()
    assert issue.status == "acknowledged"
    assert issue.acknowledged_at is not None
    assert update.author == IssueUpdate.Author.LANDLORD
    assert update.user == landlord
    assert "open → acknowledged" in update.body
    [message] = outbound(issue)
    assert message.author == Message.Author.LANDLORD
    assert message.raw_payload["purpose"] == "issue_update"
    assert message.status == Message.Status.PENDING
    assert message.to_address == issue.conversation.whatsapp_id
    assert "R-000042" in message.body
    assert f"message {message.pk}" in update.body
    assert len(callbacks) == 1  # outbound_send_queue, after commit


def test_schedule_needs_a_date_not_in_the_past_and_tells_the_tenant_the_date(issue):
    with pytest.raises(IssueStatusError, match="needs a date"):
        issue_status_change(issue=issue, status="scheduled", actor=None)
    with pytest.raises(IssueStatusError, match="in the past"):
        issue_status_change(issue=issue, status="scheduled", scheduled_for=datetime.date(2020, 1, 1))
    assert not outbound(issue)

    update = issue_status_change(issue=issue, status="scheduled", scheduled_for=TOMORROW, note="Plumber: Dave")
    issue.refresh_from_db()
    assert issue.status == "scheduled"
    assert issue.scheduled_for == TOMORROW
    assert update.author == IssueUpdate.Author.SYSTEM
    [message] = outbound(issue)
    assert TOMORROW.strftime("%B") in message.body
    assert "Plumber: Dave" in message.body
    assert message.author == Message.Author.SYSTEM


def test_rescheduling_to_the_same_date_is_refused(issue):
    issue_status_change(issue=issue, status="scheduled", scheduled_for=TOMORROW)
    with pytest.raises(IssueStatusError, match="already scheduled"):
        issue_status_change(issue=issue, status="scheduled", scheduled_for=TOMORROW)
    issue_status_change(issue=issue, status="scheduled", scheduled_for=TOMORROW + datetime.timedelta(days=1))
    assert len(outbound(issue)) == 2


def test_a_second_resolve_is_refused_and_sends_nothing_twice(issue):
    issue_status_change(issue=issue, status="resolved")
    with pytest.raises(IssueStatusError, match="resolved"):
        issue_status_change(issue=issue, status="resolved")
    issue.refresh_from_db()
    assert issue.resolved_at is not None
    assert len(outbound(issue)) == 1
    assert issue.updates.count() == 1


def test_every_transition_in_the_table_is_allowed_and_every_other_refused(issue):
    for before in Issue.Status.values:
        for after in Issue.Status.values:
            Issue.objects.filter(pk=issue.pk).update(status=before, scheduled_for=None)
            issue.refresh_from_db()
            kwargs = {"scheduled_for": TOMORROW} if after == "scheduled" else {}
            if after in TRANSITIONS[before]:
                issue_status_change(issue=issue, status=after, **kwargs)
                issue.refresh_from_db()
                assert issue.status == after, (before, after)
            else:
                with pytest.raises(IssueStatusError):
                    issue_status_change(issue=issue, status=after, **kwargs)
                issue.refresh_from_db()
                assert issue.status == before


def test_closing_is_recorded_but_tells_the_tenant_nothing(issue):
    issue_status_change(issue=issue, status="closed")
    assert not outbound(issue)
    assert issue.updates.get().body.startswith("Status open → closed")


def test_reopening_clears_resolution(issue):
    issue_status_change(issue=issue, status="resolved")
    issue_status_change(issue=issue, status="open")
    issue.refresh_from_db()
    assert issue.resolved_at is None
    assert "reopened" in outbound(issue)[-1].body


def test_issue_without_conversation_notifies_the_tenant_by_phone():
    tenant = TenantFactory()
    issue = IssueFactory(organization=tenant.organization, tenant=tenant)
    issue_status_change(issue=issue, status="acknowledged")
    message = Message.objects.get(direction="outbound")
    assert message.conversation is None
    assert message.to_address == f"whatsapp:{tenant.phone}"
    assert message.organization == tenant.organization


def test_issue_without_conversation_uses_the_tenants_existing_conversation():
    tenant = TenantFactory()
    conversation = ConversationFactory(organization=tenant.organization, phone=tenant.phone)
    issue = IssueFactory(organization=tenant.organization, tenant=tenant)
    issue_status_change(issue=issue, status="acknowledged")
    assert Message.objects.get(direction="outbound").conversation == conversation


def test_issue_with_nobody_to_tell_is_still_recorded_and_says_so():
    issue = IssueFactory()
    update = issue_status_change(issue=issue, status="acknowledged")
    assert "Tenant not notified" in update.body
    assert not Message.objects.exists()


def test_bad_input_is_refused_without_changes(issue):
    with pytest.raises(IssueStatusError, match="Unknown status"):
        issue_status_change(issue=issue, status="fixed")
    with pytest.raises(IssueStatusError, match="Only scheduling"):
        issue_status_change(issue=issue, status="resolved", scheduled_for=TOMORROW)
    with pytest.raises(IssueStatusError, match="longer than"):
        issue_status_change(issue=issue, status="resolved", note="x" * 1001)
    issue.refresh_from_db()
    assert issue.status == "open"
    assert not IssueUpdate.objects.exists()
    assert Conversation.objects.count() == 1


def test_send_task_name_is_the_channel_contract():
    assert OUTBOUND_SEND == "outbound.send"


@pytest.mark.django_db(transaction=True)
def test_two_landlords_resolving_at_once_notify_the_tenant_once():
    import threading

    from django.db import connection

    conversation = ConversationFactory()
    issue = IssueFactory(organization=conversation.organization, conversation=conversation)
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def resolve():
        try:
            barrier.wait()
            issue_status_change(issue=Issue.objects.get(pk=issue.pk), status="resolved")
            outcomes.append("resolved")
        except IssueStatusError:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=resolve) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["refused", "refused", "refused", "resolved"]
    assert Message.objects.filter(direction="outbound").count() == 1
    assert IssueUpdate.objects.filter(issue=issue).count() == 1


def test_only_a_persons_move_is_the_agencys_first_response(issue):
    """A move the system makes (a visit the tenant booked, a contractor's Fixed)
    is not the agency acknowledging: the dashboard's first response stays open."""
    issue_status_change(issue=issue, status="resolved", tenant_told=False)
    issue.refresh_from_db()
    assert issue.status == "resolved" and issue.acknowledged_at is None
    issue_status_change(issue=issue, status="closed", actor=UserFactory())
    issue.refresh_from_db()
    assert issue.acknowledged_at is not None


@pytest.mark.django_db(transaction=True)
def test_a_status_move_does_not_wait_for_a_history_line_being_written_elsewhere():
    """Beat's deadline warnings lock clocks, then add a line to the issue's
    history (whose foreign key share-locks the issue at commit); a landlord's move locks
    the issue, then its clocks. With the issue locked FOR UPDATE the two could
    deadlock; FOR NO KEY UPDATE does not wait for the history line."""
    import threading

    from django.db import connection, transaction

    conversation = ConversationFactory()
    issue = IssueFactory(organization=conversation.organization, conversation=conversation)
    held, release = threading.Event(), threading.Event()

    def beat_writes_history():
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:  # Django's foreign keys check at commit; check now
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                IssueUpdate.objects.create(issue_id=issue.pk, author="system", body="Manager told: due soon.")
                held.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=beat_writes_history)
    thread.start()
    try:
        assert held.wait(10)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '2s'")  # waiting would fail here, not hang
            issue_status_change(issue=issue, status="acknowledged", actor=UserFactory())
    finally:
        release.set()
        thread.join(timeout=30)
    issue.refresh_from_db()
    assert issue.status == "acknowledged"
