"""Uploading knowledge documents through the admin, and ingesting them again.
The real ingest service stores the text and queues the embedding after
commit; tests run the queued step themselves (``document_embed``), as the
worker would, or let a real worker do it."""

import pytest
from django.contrib.admin import helpers
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from properties.tests.persona import alice_and_bob
from retrieval.models import Document
from retrieval.search import knowledge_search
from retrieval.services import document_embed, document_ingest
from retrieval.tests.pdf import pdf_bytes
from retrieval.upload import DocumentUploadError, document_reingest, document_upload

pytestmark = pytest.mark.django_db

HANDBOOK = "# Heating\n\nThe boiler reset button is under the stairs.\n\n## Radiators\n\nBleed radiators in October.\n"


@pytest.fixture
def worlds():
    return alice_and_bob()


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="text/markdown")


def test_admin_upload_ingests_queues_embedding_and_shows_the_chunks(client, worlds, django_capture_on_commit_callbacks):
    alice, _ = worlds
    client.force_login(alice.user)
    form_page = client.get(reverse("admin:retrieval_document_add"))
    assert form_page.status_code == 200
    assert set(form_page.context["form"].fields["property"].queryset) == {alice.property}

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            reverse("admin:retrieval_document_add"),
            {
                "organization": alice.organization.pk,
                "property": alice.property.pk,
                "file": upload("heating_guide.md", HANDBOOK.encode()),
            },
        )
    assert response.status_code == 302
    document = Document.objects.get(source="heating_guide.md")
    assert response["Location"] == reverse("admin:retrieval_document_change", args=[document.pk])
    assert (document.organization, document.property, document.title) == (
        alice.organization,
        alice.property,
        "heating guide",
    )
    assert document.status == Document.Status.PENDING
    assert len(callbacks) == 1  # retrieval.embed_document on the embeddings queue
    assert document.file.read().decode() == HANDBOOK

    document_embed(document_id=document.pk)  # what the worker runs
    page = client.get(response["Location"]).content.decode()
    assert "The boiler reset button is under the stairs." in page
    assert "Bleed radiators in October." in page
    assert "Radiators" in page  # heading path


def test_admin_upload_refuses_what_it_cannot_read(client, worlds):
    alice, bob = worlds
    client.force_login(alice.user)
    url = reverse("admin:retrieval_document_add")
    cases = [
        (upload("lease.docx", b"PK\x03\x04"), ".docx files are not supported"),
        (upload("scan.pdf", pdf_bytes("")), "no text layer"),
        (upload("manual.pdf", b"%PDF-1.4 cut off"), "could not be read"),
        (upload("notes.txt", b"\xff\xfe bad"), "not UTF-8"),
        (upload("empty.txt", b"   \n"), "The file is empty."),
        (upload("bin.txt", b"abc\x00def"), "binary"),
    ]
    for file, message in cases:
        response = client.post(url, {"organization": alice.organization.pk, "file": file})
        assert response.status_code == 200
        assert message in str(response.context["form"].errors["file"]), message
    response = client.post(
        url, {"organization": alice.organization.pk, "property": bob.property.pk, "file": upload("a.md", b"x")}
    )
    assert "Select a valid choice" in str(response.context["form"].errors["property"])
    assert not Document.objects.filter(
        source__in=["lease.docx", "scan.pdf", "manual.pdf", "notes.txt", "empty.txt", "bin.txt", "a.md"]
    ).exists()


def test_a_pdf_manual_is_read_page_by_page_and_found_by_search(worlds):
    alice, bob = worlds
    manual = pdf_bytes(
        "Combi boiler manual\nFault F22: low water pressure.", "Top up with the filling loop to 1.5 bar."
    )
    document = document_upload(
        organization=alice.organization, property=alice.property, uploaded_file=upload("boiler-manual.pdf", manual)
    )
    assert "Fault F22: low water pressure." in document.text
    assert "Top up with the filling loop to 1.5 bar." in document.text
    document_embed(document_id=document.pk)

    hits = knowledge_search(
        query="boiler says F22", organization_id=alice.organization.pk, property_id=alice.property.pk
    )
    assert hits and hits[0].document_title == "boiler manual"
    assert not knowledge_search(query="boiler says F22", organization_id=bob.organization.pk, property_id=None)


def test_upload_too_large_is_refused(worlds, settings):
    alice, _ = worlds
    settings.DOCUMENT_UPLOAD_MAX_BYTES = 10
    with pytest.raises(DocumentUploadError, match="larger than"):
        document_upload(organization=alice.organization, uploaded_file=upload("big.md", b"x" * 11))


def test_uploading_the_same_file_name_again_replaces_the_text(worlds):
    alice, _ = worlds
    first = document_upload(organization=alice.organization, uploaded_file=upload("rules.md", b"No pets."))
    second = document_upload(organization=alice.organization, uploaded_file=upload("rules.md", b"Cats allowed."))
    assert first.pk == second.pk
    second.refresh_from_db()
    assert second.text.strip() == "Cats allowed."


def test_reingest_action_requeues_only_own_documents(client, worlds, django_capture_on_commit_callbacks):
    alice, bob = worlds
    client.force_login(alice.user)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        client.post(
            reverse("admin:retrieval_document_changelist"),
            {"action": "reingest", helpers.ACTION_CHECKBOX_NAME: [alice.document.pk, bob.document.pk]},
        )
    alice.document.refresh_from_db()
    bob.document.refresh_from_db()
    assert alice.document.status == Document.Status.PENDING
    assert bob.document.status == Document.Status.READY  # outside Alice's queryset
    assert len(callbacks) == 1


def test_reingest_rebuilds_a_ready_unchanged_document(worlds, django_capture_on_commit_callbacks):
    alice, _ = worlds
    document = document_ingest(
        organization=alice.organization, title="Bins", source_name="bins.md", content="Tuesday.", embed_now=True
    )
    assert document.status == Document.Status.READY
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = document_reingest(document=document)
    assert result.pk == document.pk
    document.refresh_from_db()
    assert document.status == Document.Status.PENDING
    assert len(callbacks) == 1
    document_embed(document_id=document.pk)
    document.refresh_from_db()
    assert document.status == Document.Status.READY
    assert document.chunks.count() == 1
