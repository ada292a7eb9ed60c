import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from api.tests.conftest import token_client
from conftest import wait_for
from properties.tests.persona import alice_and_bob
from retrieval.models import Document

pytestmark = pytest.mark.django_db


def test_document_list_and_detail(alice_api, worlds):
    alice, _ = worlds
    body = alice_api.get("/api/v1/documents/").json()
    assert [(d["id"], d["chunk_count"], d["status"]) for d in body["results"]] == [(alice.document.pk, 1, "ready")]
    detail = alice_api.get(f"/api/v1/documents/{alice.document.pk}/").json()
    assert detail["text"] == alice.document.text
    assert alice_api.get("/api/v1/documents/", {"organization_wide": "true"}).json()["count"] == 0


def test_upload_through_the_api_is_stored_and_queued(alice_api, worlds, django_capture_on_commit_callbacks):
    alice, _ = worlds
    file = SimpleUploadedFile("bins.md", b"# Bins\n\nTuesday mornings.\n\nRecycling fortnightly.")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = alice_api.post(
            "/api/v1/documents/", {"file": file, "property": alice.property.pk, "title": "Bin days"}
        )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["title"], body["status"], body["chunk_count"]) == ("Bin days", "pending", 0)
    assert body["property"] == alice.property.pk
    assert Document.objects.get(pk=body["id"]).organization == alice.organization
    assert len(callbacks) == 1  # the embedding task


def test_uploading_a_file_name_again_says_it_replaced_that_document_or_changed_nothing(alice_api, worlds):
    alice, _ = worlds

    def post(content: bytes, **scope):
        return alice_api.post("/api/v1/documents/", {"file": SimpleUploadedFile("pets.md", content), **scope})

    created = post(b"No pets.")
    assert (created.status_code, created.json()["upload"]) == (201, "created")
    replaced = post(b"Cats allowed.")
    assert (replaced.status_code, replaced.json()["upload"]) == (200, "replaced")
    assert replaced.json()["id"] == created.json()["id"]
    unchanged = post(b"Cats allowed.")
    assert (unchanged.status_code, unchanged.json()["upload"]) == (200, "unchanged")
    elsewhere = post(b"Dogs allowed.", property=alice.property.pk)  # another scope: a document of its own
    assert (elsewhere.status_code, elsewhere.json()["upload"]) == (201, "created")
    assert Document.objects.get(pk=created.json()["id"]).text.strip() == "Cats allowed."


def test_upload_errors_are_field_errors(alice_api, worlds):
    response = alice_api.post("/api/v1/documents/", {"file": SimpleUploadedFile("x.docx", b"PK\x03\x04")})
    assert response.status_code == 400
    assert ".docx files are not supported" in response.json()["error"]["fields"]["file"][0]
    response = alice_api.post("/api/v1/documents/", {})
    assert response.status_code == 400
    assert "file" in response.json()["error"]["fields"]
    response = alice_api.post("/api/v1/documents/", {"title": "x"}, format="json")
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


@pytest.mark.worker
def test_uploaded_document_is_embedded_by_a_real_worker(celery_worker_process):
    alice, _ = alice_and_bob()
    api = token_client(alice.user)
    file = SimpleUploadedFile("stopcock.md", b"# Stopcock\n\nThe stopcock is under the kitchen sink.\n")
    document_id = api.post("/api/v1/documents/", {"file": file}).json()["id"]

    def ready():
        body = api.get(f"/api/v1/documents/{document_id}/").json()
        return body["status"] == "ready" and body["chunk_count"] >= 1

    wait_for(ready, timeout=180, message=f"the worker to embed the upload\n{celery_worker_process.log_path}")


def test_a_misspelt_field_is_refused_not_ignored(alice_api, worlds):
    alice, _ = worlds
    file = SimpleUploadedFile("bins.md", b"# Bins\n\nTuesday mornings.")
    response = alice_api.post("/api/v1/documents/", {"file": file, "propery": alice.property.pk})
    assert response.status_code == 400
    assert response.json()["error"]["fields"]["propery"] == ["Unknown field."]
    assert not Document.objects.filter(title="bins").exists()
