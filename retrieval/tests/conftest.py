import pytest

from properties.tests.factories import OrganizationFactory, PropertyFactory
from retrieval.services import document_ingest


@pytest.fixture
def alice(db):
    return OrganizationFactory(slug="alice")


@pytest.fixture
def ingest():
    def _ingest(*, organization, content, title="Guide", source_name="guide.md", property=None):
        return document_ingest(
            organization=organization,
            property=property,
            title=title,
            source_name=source_name,
            content=content,
            embed_now=True,
        )

    return _ingest


@pytest.fixture
def alice_flat(alice):
    return PropertyFactory(organization=alice, code="FLAT-1")
