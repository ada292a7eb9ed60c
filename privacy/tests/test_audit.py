"""The audit log: views, exports, takeovers and changes recorded with their
actor (admin user or API token), append-only, visible to owners only, and
never across organizations."""

from __future__ import annotations

import pytest
from auditlog.models import LogEntry
from django.db import IntegrityError, InternalError, ProgrammingError, transaction
from django.urls import reverse

from privacy.models import AuditEvent
from privacy.tests.conftest import SECRET, token_client

pytestmark = pytest.mark.django_db


def events(world, **filters):
    return AuditEvent.objects.filter(organization_id=world.organization.pk, **filters)


def test_admin_views_and_takeover_are_recorded_with_the_staff_user(worlds, client):
    alice, bob = worlds
    client.force_login(alice.user)
    client.get(reverse("admin:conversations_conversation_change", args=[alice.conversation.pk]))
    client.get(reverse("admin:properties_tenant_change", args=[alice.tenant.pk]))
    client.get(reverse("admin:issues_issue_changelist"))  # a list: not recorded
    client.post(reverse("admin:conversations_conversation_takeover", args=[alice.conversation.pk]))
    recorded = list(events(alice).values_list("action", "target_type", "target_id", "actor_name", "via"))
    assert ("view", "conversations.conversation", alice.conversation.pk, "alice", "admin") in recorded
    assert ("view", "properties.tenant", alice.tenant.pk, "alice", "admin") in recorded
    assert ("takeover", "conversations.conversation", alice.conversation.pk, "alice", "admin") in recorded
    assert not events(alice, target_type="issues.issue").exists()
    # Bob opening Alice's conversation is a 404 and leaves nothing in either log.
    client.force_login(bob.user)
    assert (
        client.get(reverse("admin:conversations_conversation_change", args=[alice.conversation.pk])).status_code == 404
    )
    assert not AuditEvent.objects.filter(actor=bob.user).exists()


def test_api_reads_and_changes_are_recorded_with_the_tokens_user(worlds, alice_api, bob_api):
    alice, bob = worlds
    assert alice_api.get(f"/api/v1/conversations/{alice.conversation.pk}/messages/").status_code == 200
    response = alice_api.patch(f"/api/v1/issues/{alice.routine.pk}/", {"status": "acknowledged"}, format="json")
    assert response.status_code == 200, response.content
    assert events(alice, action="view", via="api", actor=alice.user, target_id=alice.conversation.pk).exists()
    change = events(alice, action="change", target_type="issues.issue", target_id=alice.routine.pk).get()
    assert change.actor == alice.user and change.via == "api"
    assert "status: open -> acknowledged" in change.label
    # django-auditlog's own entry has the actor, and no title of the issue.
    entry = LogEntry.objects.get_for_object(alice.routine).latest("timestamp")
    assert entry.actor == alice.user and entry.object_repr == alice.routine.reference
    assert bob_api.get(f"/api/v1/conversations/{alice.conversation.pk}/messages/").status_code == 404
    assert not events(alice, actor=bob.user).exists()


def test_only_owners_see_the_audit_log_and_only_their_own(worlds, client, alice_api, bob_api, alice_manager):
    alice, bob = worlds
    alice_api.post(f"/api/v1/tenants/{alice.tenant.pk}/export/")
    bob_api.post(f"/api/v1/tenants/{bob.tenant.pk}/export/")
    alice_ids = {e["id"] for e in alice_api.get("/api/v1/audit-events/").json()["results"]}
    assert alice_ids == set(events(alice).values_list("pk", flat=True)) and alice_ids
    # Newest first, a page at a time by cursor, never counted (the log only grows).
    alice_api.post(f"/api/v1/tenants/{alice.tenant.pk}/export/")
    first = alice_api.get("/api/v1/audit-events/", {"page_size": 1}).json()
    assert "count" not in first and first["results"][0]["id"] == events(alice).latest("at", "id").pk
    second = alice_api.get(first["next"]).json()
    assert second["results"] and second["results"][0]["id"] < first["results"][0]["id"]
    assert not alice_ids & set(events(bob).values_list("pk", flat=True))
    assert token_client(alice_manager).get("/api/v1/audit-events/").status_code == 403
    client.force_login(alice.user)
    page = client.get(reverse("admin:privacy_auditevent_changelist"))
    assert page.status_code == 200
    assert {e.pk for e in page.context["cl"].result_list} == set(events(alice).values_list("pk", flat=True))
    bob_event = events(bob).first()
    assert client.get(reverse("admin:privacy_auditevent_change", args=[bob_event.pk])).status_code == 404
    client.force_login(alice_manager)
    assert client.get(reverse("admin:privacy_auditevent_changelist")).status_code == 403


def test_the_audit_log_is_append_only(worlds, client, alice_api):
    alice, _ = worlds
    alice_api.post(f"/api/v1/tenants/{alice.tenant.pk}/export/")
    event = events(alice).get(action="export")
    for attempt in (
        lambda: AuditEvent.objects.filter(pk=event.pk).update(label="edited"),
        lambda: AuditEvent.objects.filter(pk=event.pk).delete(),
    ):
        with pytest.raises((InternalError, ProgrammingError, IntegrityError)), transaction.atomic():
            attempt()
    event.refresh_from_db()
    assert event.label != "edited"
    client.force_login(alice.user)
    url = reverse("admin:privacy_auditevent_change", args=[event.pk])
    page = client.get(url)
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert client.post(reverse("admin:privacy_auditevent_delete", args=[event.pk]), {"post": "yes"}).status_code == 403
    assert SECRET not in "".join(AuditEvent.objects.values_list("label", flat=True))


def test_a_takeover_from_the_list_is_recorded_per_conversation(worlds, client):
    alice, bob = worlds
    client.force_login(alice.user)
    client.post(
        reverse("admin:conversations_conversation_changelist"),
        {"action": "take_over", "_selected_action": [alice.conversation.pk, bob.conversation.pk]},
    )
    recorded = list(AuditEvent.objects.filter(action="takeover").values_list("organization_id", "target_id"))
    assert recorded == [(alice.organization.pk, alice.conversation.pk)]  # Bob's conversation was not hers to touch


def test_a_save_of_fields_nobody_audits_skips_the_read_an_audited_one_is_still_logged(
    worlds, django_assert_num_queries
):
    """django-auditlog reads the old row before a save to compare it; a turn's
    save of ``last_turn_at`` cannot change an audited field and is spared it."""
    from django.utils import timezone

    conversation = worlds[0].conversation
    before = LogEntry.objects.get_for_object(conversation).count()
    conversation.last_turn_at = timezone.now()
    with django_assert_num_queries(1):  # the UPDATE alone
        conversation.save(update_fields=["last_turn_at", "updated_at"])
    conversation.bot_paused, conversation.language = True, "pl"
    conversation.save(update_fields=["bot_paused", "language", "updated_at"])
    entries = LogEntry.objects.get_for_object(conversation)
    assert entries.count() == before + 1
    assert set(entries.latest("timestamp").changes_dict) == {"bot_paused"}
