import pytest

from conftest import wait_for
from properties.tests.factories import OrganizationFactory
from retrieval.models import Document
from retrieval.search import knowledge_search
from retrieval.services import document_ingest


@pytest.mark.worker
def test_uploaded_document_is_embedded_by_the_embeddings_queue(celery_worker_process):
    organization = OrganizationFactory()
    document = document_ingest(
        organization=organization,
        title="Boiler",
        source_name="boiler.md",
        content="## F22\n\nF22 means the boiler pressure is low: top it up to 1.5 bar.\n",
    )
    assert document.status == Document.Status.PENDING

    def ready():
        document.refresh_from_db()
        return document.status == Document.Status.READY

    wait_for(ready, timeout=180, message=f"the worker to embed the document\n{celery_worker_process.log_path}")
    assert document.chunks.count() == 1
    hits = knowledge_search(organization_id=organization.pk, property_id=None, query="boiler pressure F22")
    assert hits[0].heading_path == "F22"
    assert "retrieval.embed_document" in celery_worker_process.log_path.read_text()
