from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.urls import reverse

from privacy.models import AuditEvent, DataRequest
from privacy.tests.conftest import SECRET, secret, token_client

pytestmark = pytest.mark.django_db


def unzip(response) -> tuple[zipfile.ZipFile, dict]:
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    return archive, json.loads(archive.read("data.json"))


def test_the_api_export_holds_the_tenants_messages_files_issues_alerts_and_traces(worlds, alice_api):
    alice, _bob = worlds
    response = alice_api.post(f"/api/v1/tenants/{alice.tenant.pk}/export/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    archive, data = unzip(response)
    (conversation,) = data["conversations"]
    assert conversation["opted_out_at"] is None  # WhatsApp messages on: no STOP was sent
    bodies = [m["body"] for m in conversation["messages"]]
    assert secret("body") in bodies and secret("reply") in bodies
    said = next(m for m in conversation["messages"] if m["body"] == secret("body"))
    assert said["at"] and said["location"]["name"] == secret("pin")
    (voice,) = said["media"]
    assert voice["transcript"] == secret("transcript")
    assert archive.read(voice["file"]) == b"OggS" + secret("audio").encode()
    photos = [m for msg in conversation["messages"] for m in msg["media"] if m["content_type"] == "image/png"]
    assert photos and archive.read(photos[0]["file"]).startswith(b"\x89PNG")
    routine = next(i for i in data["issues"] if i["reference"] == alice.routine.reference)
    assert routine["title"] == secret("title")
    assert [h["note"] for h in routine["history"]] == ["Still loose.", secret("note")]
    assert data["emergency_alerts"][0]["validation_reasoning"] == secret("reasoning")
    tool_inputs = json.dumps(conversation["turns"])
    assert secret("toolinput") in tool_inputs and secret("hit") in tool_inputs
    transcript = archive.read(f"conversations/{alice.conversation.pk}.txt").decode()
    assert secret("body") in transcript and secret("transcript") in transcript
    # Nothing of the neighbour (same agency) or of Bob's agency.
    everything = b"".join(archive.read(name) for name in archive.namelist())
    assert b"neighbour-words" not in everything and b"Bob" not in everything
    assert AuditEvent.objects.filter(
        organization_id=alice.organization.pk, action="export", via="api", actor=alice.user, target_id=alice.tenant.pk
    ).exists()


def test_an_export_past_the_spool_size_is_written_to_disk_with_its_files_whole(worlds, monkeypatch):
    """Years of photos do not sit in the web worker's memory: past SPOOL_BYTES
    the ZIP goes to a temporary file, and each stored file is copied in pieces."""
    import privacy.export
    from privacy.export import tenant_export_build

    alice, _ = worlds
    monkeypatch.setattr(privacy.export, "SPOOL_BYTES", 64)
    with tenant_export_build(tenant=alice.tenant) as payload:
        assert payload._rolled  # SpooledTemporaryFile: moved to disk
        archive = zipfile.ZipFile(payload)
        files = [
            m["file"]
            for c in json.loads(archive.read("data.json"))["conversations"]
            for msg in c["messages"]
            for m in msg["media"]
            if m["file"]
        ]
        assert files and archive.testzip() is None
        assert any(archive.read(name) == b"OggS" + secret("audio").encode() for name in files)


def test_another_organization_cannot_export_and_staff_may_not(worlds, bob_api, alice_staff):
    alice, _ = worlds
    assert bob_api.post(f"/api/v1/tenants/{alice.tenant.pk}/export/").status_code == 404
    assert token_client(alice_staff).post(f"/api/v1/tenants/{alice.tenant.pk}/export/").status_code == 403
    assert not AuditEvent.objects.filter(action="export").exists()


def test_the_admin_approves_a_request_and_downloads_the_zip(worlds, client):
    alice, bob = worlds
    request = DataRequest.objects.create(organization=alice.organization, tenant=alice.tenant, kind="export")
    client.force_login(alice.user)
    response = client.post(
        reverse("admin:privacy_datarequest_changelist"),
        {"action": "approve_export", "_selected_action": [request.pk]},
    )
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    _, data = unzip(response)
    assert data["tenant"]["id"] == alice.tenant.pk
    assert SECRET in json.dumps(data)
    request.refresh_from_db()
    assert request.status == "done" and request.decided_by == alice.user
    # Bob's landlord sees no request of Alice's, and the action finds nothing of hers.
    client.force_login(bob.user)
    page = client.get(reverse("admin:privacy_datarequest_changelist"))
    assert page.context["cl"].result_count == 0
    response = client.post(
        reverse("admin:privacy_datarequest_changelist"),
        {"action": "approve_export", "_selected_action": [request.pk]},
    )
    assert response.get("Content-Type") != "application/zip"


def test_a_whatsapp_request_is_approved_through_the_api(worlds, alice_api, bob_api):
    alice, _ = worlds
    request = DataRequest.objects.create(
        organization=alice.organization, tenant=alice.tenant, kind="export", source="whatsapp"
    )
    listed = alice_api.get("/api/v1/data-requests/?status=pending").json()
    assert [r["id"] for r in listed["results"]] == [request.pk]
    assert bob_api.get("/api/v1/data-requests/").json()["count"] == 0
    assert bob_api.post(f"/api/v1/data-requests/{request.pk}/decide/", {"decision": "approve"}).status_code == 404
    response = alice_api.post(f"/api/v1/data-requests/{request.pk}/decide/", {"decision": "approve"})
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    for decision in ("approve", "reject"):  # decided: neither door takes it again
        again = alice_api.post(f"/api/v1/data-requests/{request.pk}/decide/", {"decision": decision})
        assert again.status_code == 400 and "already decided" in again.json()["error"]["fields"]["status"][0]
    request.refresh_from_db()
    assert request.status == "done"


def test_messages_sent_to_the_bare_number_are_exported_and_erased(worlds, alice_api):
    """A status update or a summary's later parts, sent while the tenant had
    no conversation, name neither the tenant nor the issue."""
    from conversations.models import Message
    from conversations.outbound import outbound_text_queue
    from privacy.erasure import ERASED, tenant_erase

    alice, _ = worlds
    [sent] = outbound_text_queue(
        organization=alice.organization, to=alice.tenant.phone, body=secret("summarypart2"), purpose="issue_update"
    )
    assert sent.conversation_id is None
    _, data = unzip(alice_api.post(f"/api/v1/tenants/{alice.tenant.pk}/export/"))
    assert [m["body"] for m in data["messages_to_their_number"]] == [secret("summarypart2")]
    tenant_erase(tenant=alice.tenant, user=alice.user, via="admin")
    assert Message.objects.get(pk=sent.pk).body == ERASED
