"""Whose documents a search reads: a home's own guide only for a number with a
current tenancy there. A number that only named the address (a stranger who
knows it, a report the landlord sees as unverified) reads the organization's
general documents alone: a home guide may hold its key-safe code."""

from __future__ import annotations

import pytest

from orchestration.knowledge import knowledge_lookup
from orchestration.testing.fixtures import PHONE, call, conversation_for

pytestmark = pytest.mark.django_db

STRANGER = "+447700900777"
KEY_SAFE = "The key safe by the back door opens with 4 7 1 9."


@pytest.fixture
def guides(home):
    from retrieval.services import document_ingest

    flat = home.properties.get(code="FLAT-1")
    document_ingest(
        organization=home,
        property=flat,
        title="Flat 1 home guide",
        source_name="flat-1.md",
        content=f"# Keys\n\n## The key safe\n\n{KEY_SAFE}",
        embed_now=True,
    )
    document_ingest(
        organization=home,
        title="Tenant handbook",
        source_name="handbook.md",
        content="# Keys\n\n## Lost keys\n\nIf you lose your keys, the office cuts new ones for a fee.",
        embed_now=True,
    )


def _texts(conversation) -> str:
    """What the model reads and the documents the trace names."""
    text, hits, _ = knowledge_lookup(conversation=conversation, query="what is the key safe code?")
    return text + "\n" + "\n".join(hit["document"] for hit in hits)


def test_a_number_that_only_named_the_address_does_not_read_that_homes_guide(home, guides, tenant_says):
    tenant_says("Flat 1, 12 Harbour Street", phone=STRANGER, model=[call("find_property", address="12 Harbour St")])
    tenant_says("yes", phone=STRANGER, model=[call("confirm_property", confirmed=True)])
    stranger = conversation_for(STRANGER)
    assert stranger.property.code == "FLAT-1"  # they may still report a repair there

    assert "Flat 1 home guide" not in _texts(stranger)
    assert "Tenant handbook" in _texts(stranger)  # the organization's own documents

    tenant_says("hello", model=[call("respond", message="Hello!")])
    assert "Flat 1 home guide" in _texts(conversation_for(PHONE))  # the tenant on record reads their home's guide
