import pytest
from django.core.management import CommandError, call_command

from properties.tests.factories import OrganizationFactory
from retrieval.models import Document
from retrieval.search import knowledge_search

GUIDE = "# Living here\n\n## Stopcock\n\nThe stopcock is under the kitchen sink.\n"


@pytest.fixture
def on_minilm(alice, ingest, settings):
    settings.EMBEDDING_BACKEND = "minilm"
    bob = OrganizationFactory(slug="bob")
    ingest(organization=alice, content=GUIDE, title="Living here", source_name="living.md")
    ingest(organization=bob, content=GUIDE, title="Bob's guide", source_name="bob.md")
    return bob


def test_reembed_brings_every_document_to_the_configured_model(alice, on_minilm, settings, capsys):
    settings.EMBEDDING_BACKEND = "e5-multilingual"
    # Before: the vector leg leaves the old model's chunks out; the keyword leg still finds them.
    assert knowledge_search(organization_id=alice.pk, property_id=None, query="stopcock", mode="vector") == []
    assert knowledge_search(organization_id=alice.pk, property_id=None, query="stopcock", mode="keyword")

    call_command("reembed_documents")

    out = capsys.readouterr().out
    assert "2 documents to re-embed with multilingual-e5-small-q4" in out
    assert "re-embedded 2 of 2" in out
    assert set(Document.objects.values_list("embedding_model", flat=True)) == {"multilingual-e5-small-q4"}
    hits = knowledge_search(organization_id=alice.pk, property_id=None, query="stopcock", mode="vector")
    assert hits and hits[0].heading_path == "Stopcock"

    call_command("reembed_documents")
    assert "0 documents to re-embed" in capsys.readouterr().out


def test_reembed_of_one_organization_leaves_the_others(alice, on_minilm, settings, capsys):
    settings.EMBEDDING_BACKEND = "e5-multilingual"
    call_command("reembed_documents", "--org", "alice")
    models = dict(Document.objects.values_list("organization__slug", "embedding_model"))
    assert models == {"alice": "multilingual-e5-small-q4", "bob": "all-MiniLM-L6-v2"}


def test_dry_run_lists_and_changes_nothing(alice, on_minilm, settings, capsys):
    settings.EMBEDDING_BACKEND = "e5-multilingual"
    call_command("reembed_documents", "--dry-run")
    out = capsys.readouterr().out
    assert "[1/2] Living here" in out and "[2/2] Bob's guide" in out
    assert set(Document.objects.values_list("embedding_model", flat=True)) == {"all-MiniLM-L6-v2"}


def test_an_unknown_organization_is_refused(on_minilm):
    with pytest.raises(CommandError, match="no organization with slug nobody"):
        call_command("reembed_documents", "--org", "nobody")
