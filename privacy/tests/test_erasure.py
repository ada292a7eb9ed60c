from __future__ import annotations

import json
import os
import zipfile

import pytest
from django.apps import apps
from django.db import models
from django.db.models.functions import Cast
from django.urls import reverse

from conversations.models import Media, Message
from issues.models import Issue
from privacy.erasure import ERASED, tenant_erase
from privacy.export import tenant_export_build
from privacy.models import AuditEvent, DataRequest, ErasureRecord
from privacy.services import DataRequestError, data_request_erase, data_request_reject
from privacy.tests.conftest import SECRET, secret

pytestmark = pytest.mark.django_db


def rows_holding(text: str) -> list[str]:
    """Every model field, in every table, whose value contains ``text``."""
    found = []
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if isinstance(field, (models.CharField, models.TextField, models.FileField)):
                lookup = {f"{field.attname}__icontains": text}
                queryset = model._default_manager.filter(**lookup)
            elif isinstance(field, models.JSONField):
                queryset = model._default_manager.annotate(_as_text=Cast(field.attname, models.TextField())).filter(
                    _as_text__icontains=text
                )
            else:
                continue
            if queryset.exists():
                found.append(f"{model._meta.label}.{field.name}")
    return found


def test_the_persona_holds_the_words_everywhere_before_erasure(worlds):
    stores = set(rows_holding(SECRET))
    assert {
        "conversations.Message.body",
        "conversations.Message.raw_payload",
        "conversations.Message.location_name",
        "conversations.Message.button_text",
        "conversations.Message.template_variables",
        "conversations.Media.transcript",
        "conversations.Conversation.escalation_reason",
        "conversations.Conversation.profile_name",
        "properties.Tenant.whatsapp_profile_name",
        "issues.Issue.title",
        "issues.Issue.description",
        "issues.Issue.photo_findings",
        "issues.IssueUpdate.body",
        "emergencies.EmergencyAlert.validation_reasoning",
        "orchestration.Turn.tool_calls",
        "orchestration.Turn.retrieval_hits",
        "orchestration.Turn.error",
        "evals.JudgeVerdict.reasoning",
    } <= stores


def test_an_erased_tenants_words_are_found_nowhere_and_the_facts_stay(
    worlds, alice_api, django_capture_on_commit_callbacks
):
    alice, _bob = worlds
    voice_path = alice.voice.file.path
    photo_path = alice.media.file.path
    assert os.path.exists(voice_path)
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_api.post(f"/api/v1/tenants/{alice.tenant.pk}/erase/", {"confirm": True}, format="json")
    assert response.status_code == 200, response.content
    assert rows_holding(SECRET) == []
    assert rows_holding("zanzibar@example.com") == []
    # The files are gone from storage, the rows point at nothing.
    assert not os.path.exists(voice_path) and not os.path.exists(photo_path)
    assert not Media.objects.filter(message__conversation=alice.conversation).exclude(file="").exists()
    # The facts the landlord keeps.
    routine = Issue.objects.get(pk=alice.routine.pk)
    assert (routine.property_id, routine.category, routine.status, routine.reference) == (
        alice.property.pk,
        "structural",
        alice.routine.status,
        alice.routine.reference,
    )
    assert routine.created_at == alice.routine.created_at
    assert routine.title == ERASED
    said = Message.objects.get(pk=alice.said.pk)
    assert said.body == ERASED and said.created_at == alice.said.created_at and said.latitude is None
    # What was erased, when and by whom.
    record = ErasureRecord.objects.get()
    assert record.erased_by == alice.user and record.via == "api" and record.tenant_id == alice.tenant.pk
    assert record.counts["conversations.Media.file"] == 2
    assert SECRET not in str(record.counts)
    assert AuditEvent.objects.filter(action="erase", organization_id=alice.organization.pk, actor=alice.user).exists()


def test_after_erasure_neither_admin_search_nor_api_nor_a_later_export_finds_the_words(worlds, client, alice_api):
    alice, _ = worlds
    tenant_erase(tenant=alice.tenant, user=alice.user, via="admin")
    client.force_login(alice.user)
    # The searches find nothing (the pages only echo the query in their links).
    for url, words in [
        (reverse("admin:issues_issue_changelist"), SECRET),
        (reverse("admin:properties_tenant_changelist"), "zanzibar@example.com"),
    ]:
        before_cl = client.get(url, {"q": words}).context["cl"]
        assert before_cl.result_count == 0, url
    for url in [
        reverse("admin:issues_issue_changelist"),
        reverse("admin:conversations_conversation_change", args=[alice.conversation.pk]),
        reverse("admin:issues_issue_change", args=[alice.routine.pk]),
        reverse("admin:properties_tenant_change", args=[alice.tenant.pk]),
    ]:
        page = client.get(url)
        assert page.status_code == 200, url
        assert SECRET not in page.content.decode(), url
    for url in [
        f"/api/v1/issues/?q={SECRET}",
        f"/api/v1/issues/{alice.routine.pk}/",
        f"/api/v1/conversations/{alice.conversation.pk}/",
        f"/api/v1/conversations/{alice.conversation.pk}/messages/",
        f"/api/v1/tenants/{alice.tenant.pk}/",
    ]:
        response = alice_api.get(url)
        assert response.status_code == 200, url
        assert SECRET not in response.content.decode(), url
    assert alice_api.get(f"/api/v1/issues/?q={SECRET}").json()["count"] == 0
    archive = zipfile.ZipFile(tenant_export_build(tenant=alice.tenant))
    for name in archive.namelist():
        assert SECRET.encode() not in archive.read(name), name
    assert not [n for n in archive.namelist() if n.startswith("media/")]


def test_erasure_touches_no_other_tenant_nor_another_organization(worlds, alice_api, bob_api):
    alice, bob = worlds
    bob_before = {m.pk: m.body for m in Message.objects.filter(organization=bob.organization)}
    assert (
        bob_api.post(f"/api/v1/tenants/{alice.tenant.pk}/erase/", {"confirm": True}, format="json").status_code == 404
    )
    assert bob_api.post(f"/api/v1/tenants/{alice.tenant.pk}/export/").status_code == 404
    assert not ErasureRecord.objects.exists()
    assert (
        alice_api.post(f"/api/v1/tenants/{alice.tenant.pk}/erase/", {"confirm": True}, format="json").status_code == 200
    )
    assert {m.pk: m.body for m in Message.objects.filter(organization=bob.organization)} == bob_before
    assert Issue.objects.get(pk=bob.routine.pk).title == "Bob loose door handle"
    neighbour = Message.objects.get(pk=alice.neighbour_message.pk)
    assert neighbour.body == "neighbour-words boiler"
    assert Media.objects.filter(message=neighbour).exclude(file="").count() == 1
    assert not AuditEvent.objects.filter(organization_id=bob.organization.pk, action="erase").exists()


def test_erasure_needs_confirmation_and_a_deciding_role(worlds, alice_staff):
    from privacy.tests.conftest import token_client

    alice, _ = worlds
    alice_api = token_client(alice.user)
    assert (
        alice_api.post(f"/api/v1/tenants/{alice.tenant.pk}/erase/", {"confirm": False}, format="json").status_code
        == 400
    )
    staff = token_client(alice_staff)
    assert staff.post(f"/api/v1/tenants/{alice.tenant.pk}/erase/", {"confirm": True}, format="json").status_code == 403
    assert staff.post(f"/api/v1/tenants/{alice.tenant.pk}/export/").status_code == 403
    assert not ErasureRecord.objects.exists()


def test_erasing_twice_changes_nothing_more(worlds):
    alice, _ = worlds
    first = tenant_erase(tenant=alice.tenant, user=alice.user, via="api")
    second = tenant_erase(tenant=alice.tenant, user=alice.user, via="api")
    assert first.counts and second.counts == {}


def test_a_request_decided_meanwhile_is_not_decided_again(worlds):
    """Two people (or a retried approval) holding the same pending request: the
    second decision sees the first and changes nothing."""
    alice, _ = worlds
    created = DataRequest.objects.create(organization=alice.organization, tenant=alice.tenant, kind="erasure")
    first, second, third = (DataRequest.objects.get(pk=created.pk) for _ in range(3))
    data_request_erase(request=first, user=alice.user, via="api")
    with pytest.raises(DataRequestError, match="already decided"):
        data_request_erase(request=second, user=alice.user, via="api")
    with pytest.raises(DataRequestError, match="already decided"):
        data_request_reject(request=third, user=alice.user, via="api")
    assert ErasureRecord.objects.count() == 1
    created.refresh_from_db()
    assert created.status == "done"


@pytest.mark.django_db(transaction=True)
def test_an_approval_and_a_rejection_at_the_same_instant_decide_once(worlds):
    """Two people press Approve and Reject together: one decision stands, the
    other is refused, and the request's status is the one that acted."""
    import threading

    from django.db import connection

    alice, _ = worlds
    created = DataRequest.objects.create(organization=alice.organization, tenant=alice.tenant, kind="erasure")
    barrier, done, refused = threading.Barrier(2), [], []

    def decide(action) -> None:
        try:
            request = DataRequest.objects.get(pk=created.pk)  # each holds the pending request, as a page would
            barrier.wait()
            action(request=request, user=alice.user, via="api")
            done.append(action.__name__)
        except DataRequestError:
            refused.append(action.__name__)
        finally:
            connection.close()

    threads = [threading.Thread(target=decide, args=(a,)) for a in (data_request_erase, data_request_reject)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(done) == 1 and len(refused) == 1
    created.refresh_from_db()
    erased = ErasureRecord.objects.count()
    if done == ["data_request_erase"]:
        assert (created.status, erased) == ("done", 1)
    else:
        assert (created.status, erased) == ("rejected", 0)
        assert rows_holding(SECRET)  # a rejected erasure erased nothing


def test_the_admin_erases_an_erasure_request_after_confirmation(worlds, client):
    alice, bob = worlds
    request = DataRequest.objects.create(organization=alice.organization, tenant=alice.tenant, kind="erasure")
    client.force_login(alice.user)
    url = reverse("admin:privacy_datarequest_changelist")
    page = client.post(url, {"action": "approve_erasure", "_selected_action": [request.pk]})
    assert page.status_code == 200 and b"Yes, erase" in page.content
    assert rows_holding(SECRET)  # nothing erased before the confirmation
    client.post(url, {"action": "approve_erasure", "_selected_action": [request.pk], "confirm": "yes"})
    assert rows_holding(SECRET) == []
    request.refresh_from_db()
    assert request.status == "done" and request.decided_by == alice.user
    # Bob cannot reach Alice's request.
    client.force_login(bob.user)
    assert client.get(reverse("admin:privacy_datarequest_change", args=[request.pk])).status_code == 404


def test_work_under_way_at_erasure_brings_nothing_back(worlds, twilio_stub, settings, monkeypatch):
    """A photo still downloading, a voice note still being transcribed, a
    message waiting for its turn and a reply not sent yet: none of them
    brings the tenant's content back or reaches them once the erasure has
    committed."""
    from conversations.media import media_download
    from conversations.models import TranscriptionState
    from orchestration.engine import turn_run
    from orchestration.models import Turn
    from properties.tests.persona import MediaFactory, MessageFactory

    alice, _ = worlds
    waiting = MessageFactory.create(conversation=alice.conversation, body="my new report, unanswered")
    path = "/2010-04-01/Accounts/AC1/Messages/MM9/Media/ME9"
    photo = MediaFactory.create(
        message=waiting, index=0, provider_url="https://api.twilio.com" + path, download_state="pending", file=""
    )
    voice = MediaFactory.create(
        message=waiting, index=1, content_type="audio/ogg", transcription_state=TranscriptionState.PENDING
    )
    twilio_stub.serve_file(path, b"\xff\xd8\xff\xe0" + b"0" * 500)
    unsent = MessageFactory.create(
        conversation=alice.conversation, direction="outbound", author="assistant", status="pending", body="On it!"
    )
    turns = Turn.objects.count()

    import conversations.media as media_module

    fetch = media_module._fetch

    def erased_while_fetching(url):
        fetched = fetch(url)
        tenant_erase(tenant=alice.tenant, user=alice.user, via="admin")  # committed while the file was on its way
        return fetched

    monkeypatch.setattr(media_module, "_fetch", erased_while_fetching)
    media_download(media_id=photo.pk)
    photo.refresh_from_db()
    assert (photo.download_state, bool(photo.file)) == ("rejected", False)
    voice.refresh_from_db()
    assert voice.transcription_state == TranscriptionState.FAILED  # a transcript arriving now is not written
    assert turn_run(conversation_id=alice.conversation.pk, message_ids=[waiting.pk]) is None
    assert Turn.objects.count() == turns
    waiting.refresh_from_db()
    assert waiting.body == ERASED and waiting.processed_at is not None
    unsent.refresh_from_db()
    assert unsent.status == "failed"  # never sent as the marker


def test_the_job_offer_a_contractor_was_sent_loses_the_tenants_words(worlds):
    from issues.dispatch import job_offer
    from issues.selectors import contractor_conversation
    from properties.models import Contractor

    alice, _ = worlds
    contractor = Contractor.objects.create(
        organization=alice.organization, name="Pat Plumbing", whatsapp="+447700900777", trades=["structural"]
    )
    job_offer(issue=alice.routine, contractor=contractor)
    conversation = contractor_conversation(contractor)
    offer = Message.objects.filter(conversation=conversation, direction="outbound").get()
    assert secret("description") in offer.body
    reply = Message.objects.create(
        organization=alice.organization,
        conversation=conversation,
        direction="inbound",
        status="received",
        body="on my way tomorrow",
    )
    tenant_erase(tenant=alice.tenant, user=alice.user, via="admin")
    offer.refresh_from_db()
    assert offer.body == ERASED and offer.template_variables == {}
    assert [c["title"] for c in offer.raw_payload["choices"]] == ["Accept", "Decline"]  # still answerable
    assert secret("title") not in str(offer.raw_payload)  # the template's variables named the issue
    assert Message.objects.get(pk=reply.pk).body == "on my way tomorrow"  # the contractor's own words


def test_a_flatmates_report_added_to_the_first_tenants_issue_stays_the_flatmates(worlds, alice_api):
    """Two tenants of one home report the same leak: the second report is added
    to the first tenant's issue, but it is the flatmate's to export and erase."""
    import datetime

    from issues.services import issue_create
    from privacy.export import tenant_export_build
    from properties.models import Tenancy
    from properties.tests.factories import TenantFactory
    from properties.tests.persona import ConversationFactory

    alice, _ = worlds
    flatmate = TenantFactory(organization=alice.organization, phone="+447700900321", name="Flatmate")
    Tenancy.objects.create(tenant=flatmate, property=alice.property, start_date=datetime.date(2026, 1, 1))
    theirs = ConversationFactory(
        organization=alice.organization, phone=flatmate.phone, tenant=flatmate, property=alice.property
    )
    report = dict(category="plumbing", urgency="routine", location="bathroom", photo="declined")
    first, created = issue_create(
        conversation=alice.conversation, title="Leak under the bath", description="water under the bath", **report
    )
    assert created
    added, created = issue_create(
        conversation=theirs,
        title="Leak under the bath",
        description="flatmate-words: water under the bath again",
        photo_findings="flatmate-findings: a puddle by the bath panel",
        **report,
    )
    assert (added, created) == (first, False)
    first.refresh_from_db()
    assert "flatmate-findings" not in first.photo_findings  # in their update only

    alice_zip = zipfile.ZipFile(tenant_export_build(tenant=alice.tenant, user=alice.user, via="api"))
    flatmate_zip = zipfile.ZipFile(tenant_export_build(tenant=flatmate, user=alice.user, via="api"))
    assert not any(b"flatmate-words" in alice_zip.read(name) for name in alice_zip.namelist())
    flatmate_data = json.loads(flatmate_zip.read("data.json"))
    [note] = flatmate_data["reports_added_to_other_issues"]
    assert note["issue"] == first.reference and "flatmate-words" in note["note"]

    tenant_erase(tenant=alice.tenant, user=alice.user, via="admin")
    assert rows_holding("flatmate-words") == ["issues.IssueUpdate.body"]  # not Alice's to erase
    tenant_erase(tenant=flatmate, user=alice.user, via="admin")
    assert rows_holding("flatmate-words") == []


def test_a_flatmates_emergency_details_on_the_first_tenants_issue_stay_the_flatmates(worlds):
    from django.utils import timezone

    from emergencies.models import EmergencyAlert
    from orchestration.emergency_reports import emergency_issue_refine
    from privacy.selectors import tenant_records
    from properties.tests.factories import IssueFactory, TenantFactory
    from properties.tests.persona import ConversationFactory, MessageFactory

    alice, _ = worlds
    flooded = IssueFactory(
        organization=alice.organization,
        property=alice.property,
        tenant=alice.tenant,
        conversation=alice.conversation,
        urgency="emergency",
        status="open",
        photo_findings="",
    )
    flatmate = TenantFactory(organization=alice.organization, phone="+447700900322")
    theirs = ConversationFactory(
        organization=alice.organization,
        phone=flatmate.phone,
        tenant=flatmate,
        property=alice.property,
        emergency_category="flooding",
        emergency_alerted_at=timezone.now(),
    )
    said = MessageFactory(conversation=theirs, body="flatmate-words: water through the ceiling")
    alert = EmergencyAlert.objects.create(
        organization=alice.organization, conversation=theirs, message=said, category="flooding", issue=flooded
    )
    call = {"title": "Ceiling leak", "description": "flatmate-words pouring in", "urgency": "emergency"}
    emergency_issue_refine(conversation=theirs, tool_input={**call, "photo_findings": "flatmate-findings: bulging"})
    flooded.refresh_from_db()
    assert "flatmate" not in flooded.photo_findings + flooded.title
    assert alert not in tenant_records(tenant=alice.tenant).alerts
    tenant_erase(tenant=alice.tenant, user=alice.user, via="admin")
    assert set(rows_holding("flatmate-")) == {"issues.IssueUpdate.body", "conversations.Message.body"}


def test_a_file_another_row_still_names_is_not_deleted(worlds, django_capture_on_commit_callbacks):
    """Files are named by their content, and a storage that overwrites (S3's
    default) gives two rows with the same bytes one file: erasing Alice must
    not delete the photo Bob's tenant sent too."""
    alice, bob = worlds
    shared = Media.objects.filter(message__conversation__tenant=alice.tenant).exclude(file="").first()
    theirs = Media.objects.filter(message__organization=bob.organization).first() or shared
    assert theirs.pk != shared.pk
    Media.objects.filter(pk=theirs.pk).update(file=shared.file.name)
    path = shared.file.path
    with django_capture_on_commit_callbacks(execute=True):
        tenant_erase(tenant=alice.tenant, user=alice.user, via="admin")
    assert os.path.exists(path)
    assert Media.objects.get(pk=theirs.pk).file.name == shared.file.name
    with django_capture_on_commit_callbacks(execute=True):
        tenant_erase(tenant=bob.tenant, user=bob.user, via="admin")
    assert not os.path.exists(path)  # the last row naming it gone: the file goes


def test_the_tenants_name_leaves_the_admin_log_of_their_tenancies(worlds):
    """A tenancy's name is "<tenant> at <code>": the admin log keeps it as the
    tenancy's own entry and, for a tenancy added inline, in the change
    message of the tenant's or the property's page (as Django writes them)."""
    from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
    from django.contrib.contenttypes.models import ContentType

    from properties.models import Property, Tenancy, Tenant

    alice, bob = worlds
    Tenant.objects.filter(pk=alice.tenant.pk).update(name="Zoë Łukasz")  # Django's JSON escapes it
    tenancy = Tenancy.objects.filter(tenant=alice.tenant).select_related("tenant", "property").first()
    name, shown = "Zoë Łukasz", str(tenancy)
    flatmate = Tenant.objects.create(organization=alice.organization, name="Ana Zoë Łukasz", phone="+447700900444")
    theirs = Tenancy.objects.create(tenant=flatmate, property=tenancy.property, start_date=tenancy.start_date)
    inline = json.dumps(
        [
            {"added": {"name": "tenancy", "object": shown}},
            {"added": {"name": "tenancy", "object": str(theirs)}},  # ends with Alice's: not hers
            {"changed": {"fields": ["Email"]}},
        ]
    )

    def entry(obj, action, message=""):
        return LogEntry.objects.create(
            user=alice.user,
            content_type=ContentType.objects.get_for_model(type(obj)),
            object_id=str(obj.pk),
            object_repr=str(obj)[:200],
            action_flag=action,
            change_message=message,
        )

    on_tenancy = entry(tenancy, ADDITION)
    on_tenant = entry(Tenant.objects.get(pk=alice.tenant.pk), CHANGE, inline)
    on_property = entry(Property.objects.get(pk=tenancy.property_id), CHANGE, inline)
    bobs = entry(bob.tenant, CHANGE, json.dumps([{"changed": {"fields": ["Name"]}}]))
    linked = entry(alice.routine, CHANGE, f"Linked +447700900123 to {shown}.")  # issues/admin.py, plain text
    tenant_erase(tenant=alice.tenant, user=alice.user, via="admin")
    on_tenancy.refresh_from_db()
    assert name not in on_tenancy.object_repr
    for row in (on_tenant, on_property):
        row.refresh_from_db()
        assert row.get_change_message() == (
            f"Added tenancy “{ERASED}”. Added tenancy “Ana Zoë Łukasz at {tenancy.property.code}”. Changed Email."
        ), row.content_type
    bobs.refresh_from_db()
    assert bobs.object_repr == str(bob.tenant)
    linked.refresh_from_db()
    assert linked.change_message == f"Linked +447700900123 to {ERASED}."


def test_words_quoted_under_an_old_number_or_to_a_contractor_since_renumbered_are_erased(worlds):
    """The landlord's alert named the tenant by the number they had then, and
    the job offer went to a contractor whose WhatsApp number was edited since:
    neither is found by today's numbers. An alert naming that old number after
    it passed to someone else, or from before it was the tenant's, is that
    person's, and stays."""
    import datetime

    from django.utils import timezone

    from conversations.models import Conversation
    from issues.dispatch import job_offer
    from issues.selectors import contractor_conversation
    from properties.models import Contractor

    alice, _ = worlds
    old_phone = "+447700900321"
    retired = timezone.now() - datetime.timedelta(days=30)
    old = Conversation.objects.create(  # their old number: its conversation retired when it passed on
        organization=alice.organization, phone=old_phone, tenant=alice.tenant, retired_at=retired
    )
    Conversation.objects.filter(pk=old.pk).update(created_at=retired - datetime.timedelta(days=60))

    def landlord_alert(body, at):
        message = Message.objects.create(
            organization=alice.organization, direction="outbound", status="sent", body=body, to_address="x"
        )
        Message.objects.filter(pk=message.pk).update(created_at=at)
        return message

    theirs_then = landlord_alert(f"EMERGENCY reported by {old_phone}: 'gas smell in the hall'", retired)
    someone_elses = landlord_alert(f"EMERGENCY reported by {old_phone}: 'water everywhere'", timezone.now())
    before_them = landlord_alert(f"EMERGENCY reported by {old_phone}: 'sparks'", retired - datetime.timedelta(days=90))
    # Their number now was someone else's until that holder's conversation from it was retired.
    handed = timezone.now() - datetime.timedelta(days=200)
    Conversation.objects.create(organization=alice.organization, phone=alice.tenant.phone, retired_at=handed)
    earlier_holder = landlord_alert(
        f"EMERGENCY reported by {alice.tenant.phone}: 'smoke'", handed - datetime.timedelta(days=1)
    )
    contractor = Contractor.objects.create(
        organization=alice.organization, name="Pat Plumbing", whatsapp="+447700900777", trades=["structural"]
    )
    job_offer(issue=alice.routine, contractor=contractor)
    offer = Message.objects.filter(conversation=contractor_conversation(contractor), direction="outbound").get()
    Contractor.objects.filter(pk=contractor.pk).update(whatsapp="+447700900778")

    tenant_erase(tenant=alice.tenant, user=alice.user, via="admin")
    assert Message.objects.get(pk=theirs_then.pk).body == ERASED
    assert Message.objects.get(pk=someone_elses.pk).body.endswith("'water everywhere'")
    assert Message.objects.get(pk=before_them.pk).body.endswith("'sparks'")  # the number was someone else's then
    assert Message.objects.get(pk=earlier_holder.pk).body.endswith("'smoke'")
    assert Message.objects.get(pk=offer.pk).body == ERASED
