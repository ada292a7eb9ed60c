from collections import Counter

import pytest

from properties.tests.factories import OrganizationFactory, PropertyFactory
from retrieval.models import Chunk, Document, Term
from retrieval.services import document_embed, document_ingest

BOILER = """# Boiler

## Pressure

Top up the pressure with the filling loop until the gauge reads 1.5 bar.

## F22

F22 means low water pressure.
"""


def test_ingest_stores_chunks_with_embeddings_and_vocabulary(alice, ingest):
    document = ingest(organization=alice, content=BOILER, title="Boiler")
    chunks = list(document.chunks.order_by("position"))
    assert document.status == Document.Status.READY
    assert document.embedding_model == "multilingual-e5-small-q4"  # the default backend
    assert [c.heading_path for c in chunks] == ["Pressure", "F22"]
    assert chunks[0].search_text.startswith("Boiler\nPressure\n\n")
    assert all(c.embedding is not None and len(c.embedding) == 384 for c in chunks)
    assert all(c.organization_id == alice.pk and c.property_id is None for c in chunks)
    assert Term.objects.filter(organization=alice, word__in=["f22", "filling", "pressure"]).count() == 3


def test_reingesting_unchanged_text_does_nothing(alice, ingest, django_assert_max_num_queries):
    first = ingest(organization=alice, content=BOILER, title="Boiler")
    chunk_ids = set(first.chunks.values_list("id", flat=True))
    with django_assert_max_num_queries(4):
        again = ingest(organization=alice, content=BOILER.replace("\n", "\r\n"), title="Boiler")
    assert again.pk == first.pk
    assert again.updated_at == first.updated_at
    assert set(again.chunks.values_list("id", flat=True)) == chunk_ids


def test_changed_text_replaces_the_chunks(alice, ingest):
    first = ingest(organization=alice, content=BOILER, title="Boiler")
    old_ids = set(first.chunks.values_list("id", flat=True))
    changed = ingest(
        organization=alice, content=BOILER.replace("1.5 bar", "1.2 bar") + "\n## Bins\n\nTuesday.\n", title="Boiler"
    )
    assert changed.pk == first.pk
    assert Document.objects.count() == 1
    texts = list(changed.chunks.order_by("position").values_list("text", flat=True))
    assert any("1.2 bar" in t for t in texts)
    assert not any("1.5 bar" in t for t in texts)
    assert texts[-1] == "Tuesday."
    assert not Chunk.objects.filter(id__in=old_ids).exists()


def test_a_new_title_rebuilds_the_search_text(alice, ingest):
    ingest(organization=alice, content=BOILER, title="Boiler")
    document = ingest(organization=alice, content=BOILER, title="Vaillant boiler")
    assert all(c.search_text.startswith("Vaillant boiler\n") for c in document.chunks.all())


def test_a_title_longer_than_the_column_is_cut_not_a_database_error(alice, ingest):
    """A Markdown heading or a manifest title of 400 characters (ingest_documents
    used to stop there with a DataError, halfway through the files)."""
    document = ingest(organization=alice, content=BOILER, title="Boiler " * 60)
    assert len(document.title) == Document._meta.get_field("title").max_length
    assert document.title.startswith("Boiler Boiler")


def test_same_file_for_two_properties_is_two_documents(alice, ingest):
    flat, house = PropertyFactory(organization=alice), PropertyFactory(organization=alice)
    ingest(organization=alice, content=BOILER, property=flat)
    ingest(organization=alice, content=BOILER, property=house)
    assert Document.objects.count() == 2
    assert set(Chunk.objects.values_list("property_id", flat=True)) == {flat.pk, house.pk}


def test_bad_input_is_refused_clearly(alice):
    other_property = PropertyFactory(organization=OrganizationFactory())
    kwargs = {"organization": alice, "title": "T", "source_name": "t.md", "embed_now": True}
    with pytest.raises(ValueError, match="empty"):
        document_ingest(**kwargs | {"content": "  \n"})
    with pytest.raises(ValueError, match="does not belong"):
        document_ingest(**kwargs | {"content": "text", "property": other_property})
    with pytest.raises(ValueError, match="title"):
        document_ingest(**kwargs | {"content": "text", "title": " "})
    assert not Document.objects.exists()


def test_queued_ingest_waits_for_commit_then_queues_the_embedding_task(
    alice, queued, django_capture_on_commit_callbacks
):
    # Only the broker hand-off is replaced here; the worker test runs the real task.
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        document = document_ingest(organization=alice, title="Boiler", source_name="b.md", content=BOILER)
        assert queued == []
    assert len(callbacks) == 1
    assert queued == [("retrieval.embed_document", [document.pk], "embeddings")]
    assert document.status == Document.Status.PENDING
    assert not document.chunks.exists()


def test_embedding_a_document_whose_text_changed_meanwhile_keeps_the_newer_text(alice, ingest):
    document = ingest(organization=alice, content=BOILER, title="Boiler")
    Document.objects.filter(pk=document.pk).update(
        text="## New\n\nBrand new text.\n", checksum="x" * 64, status="pending"
    )
    document_embed(document_id=document.pk)
    document.refresh_from_db()
    assert document.status == Document.Status.READY
    assert list(document.chunks.values_list("text", flat=True)) == ["Brand new text."]


def test_embedding_a_deleted_document_is_a_no_op(db):
    assert document_embed(document_id=987654) is None


def _words(organization) -> set[str]:
    return set(Term.objects.filter(organization=organization).values_list("word", flat=True))


def test_the_vocabulary_is_per_organization_and_loses_words_no_chunk_uses(alice, ingest):
    bob = OrganizationFactory(slug="bob")
    flat = PropertyFactory(organization=alice)
    ingest(organization=alice, content=BOILER, title="Boiler", source_name="boiler.md")
    zebra = ingest(
        organization=alice,
        content="## Pets\n\nNo zebra in the flat. Pressure washers stay outside.\n",
        title="Rules",
        source_name="rules.md",
        property=flat,
    )
    ingest(organization=bob, content="## Pets\n\nA zebra may visit.\n", title="Bob rules", source_name="rules.md")
    assert {"zebra", "washers", "pressure", "f22"} <= _words(alice)
    assert "f22" not in _words(bob) and "zebra" in _words(bob)

    # Deleting a document (as the admin does) drops its words that no other chunk of
    # the organization holds, keeps shared ones, and leaves other organizations alone.
    zebra.delete()
    assert "zebra" not in _words(alice) and "washers" not in _words(alice)
    assert "pressure" in _words(alice) and "pets" not in _words(alice)
    assert "zebra" in _words(bob)
    assert _counted(alice) == _held(alice) and _counted(bob) == _held(bob)

    # A changed text replaces the words of the chunks it replaces.
    ingest(
        organization=alice,
        content=BOILER.replace("filling loop", "filling key"),
        title="Boiler",
        source_name="boiler.md",
    )
    assert "key" in _words(alice) and "loop" not in _words(alice)
    assert _counted(alice) == _held(alice)

    # A chunk rewritten in place (an UPDATE) moves its counts from its old words to its new ones.
    chunk = Chunk.objects.filter(organization=alice).order_by("pk").first()
    Chunk.objects.filter(pk=chunk.pk).update(search_text="Pressure pressure kettle")
    assert "kettle" in _words(alice)
    assert _counted(alice) == _held(alice)

    # A deleted property takes its documents' words with it (a cascade, no service involved).
    ingest(organization=alice, content="## Garden\n\nThe gazebo is shared.\n", title="Garden", property=flat)
    assert "gazebo" in _words(alice)
    flat.delete()
    assert "gazebo" not in _words(alice)
    assert _words(alice) == {w for c in Chunk.objects.filter(organization=alice) for w in _chunk_words(c)}
    assert _counted(alice) == _held(alice)


def _counted(organization) -> dict[str, int]:
    """The vocabulary's count of chunks per word, as the triggers keep it."""
    return dict(Term.objects.filter(organization=organization).values_list("word", "chunks"))


def _held(organization) -> dict[str, int]:
    """The same counted from the organization's chunks themselves."""
    return dict(Counter(w for c in Chunk.objects.filter(organization=organization) for w in _chunk_words(c)))


def _chunk_words(chunk) -> set[str]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT w FROM retrieval_chunk, unnest(tsvector_to_array(search_words)) w "
            "WHERE id = %s AND char_length(w) BETWEEN 2 AND 100",
            [chunk.pk],
        )
        return {row[0] for row in cursor.fetchall()}
