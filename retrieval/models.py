"""The landlord's knowledge documents and the chunks that hybrid search reads."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Q
from pgvector.django import HnswIndex, VectorField


class Document(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Waiting to be embedded"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    organization = models.ForeignKey("properties.Organization", on_delete=models.CASCADE, related_name="documents")
    # Empty: applies to every property of the organization.
    property = models.ForeignKey(
        "properties.Property", on_delete=models.CASCADE, null=True, blank=True, related_name="documents"
    )
    title = models.CharField(max_length=300)
    source = models.CharField(max_length=500, help_text="File name or path the document was read from.")
    checksum = models.CharField(
        max_length=64, help_text="sha256 of the text; re-ingesting an unchanged file does nothing."
    )
    text = models.TextField(blank=True)
    file = models.FileField(upload_to="documents/%Y/%m/", blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    embedding_model = models.CharField(
        max_length=100, blank=True, help_text="The embedding model the chunks were embedded with."
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "property", "source"], name="document_unique_source", nulls_distinct=False
            ),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "ready", "failed"]), name="document_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.title


class Chunk(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    # Copied from the document so both search legs filter on the chunk row alone.
    # No index of its own: chunk_scope (organization, property) serves every lookup by
    # organization, and with a second one the planner read a big organization's
    # chunks of every property for a tenant's scope (docs/benchmarks.md).
    organization = models.ForeignKey(
        "properties.Organization", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    property = models.ForeignKey(
        "properties.Property", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    position = models.PositiveIntegerField()
    heading_path = models.CharField(
        max_length=500, blank=True, help_text="Headings above the chunk, joined with ' > '."
    )
    text = models.TextField()
    # What is embedded and searched: title and heading path, then the text.
    search_text = models.TextField()
    embedding = VectorField(dimensions=settings.EMBEDDING_DIMENSIONS, null=True, blank=True)
    # The words of search_text ("simple" configuration: lower-cased, not stemmed),
    # so the keyword leg finds the chunks holding a word through a GIN index.
    search_words = models.GeneratedField(
        expression=SearchVector("search_text", config="simple"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        ordering = ["document", "position"]
        constraints = [models.UniqueConstraint(fields=["document", "position"], name="chunk_unique_position")]
        indexes = [
            HnswIndex(
                name="chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            GinIndex(name="chunk_search_text_trgm", fields=["search_text"], opclasses=["gin_trgm_ops"]),
            GinIndex(name="chunk_search_words", fields=["search_words"]),
            models.Index(fields=["organization", "property"], name="chunk_scope"),
        ]

    def __str__(self) -> str:
        return f"{self.document.title} #{self.position}"


class Term(models.Model):
    """The keyword leg's vocabulary, per organization: every word that occurs in
    some chunk of that organization. The keyword leg matches a (possibly
    misspelt) query word against it with pg_trgm, within the tenant's
    organization only, before it looks the matched words up in
    ``Chunk.search_words``.

    Kept by database triggers on ``retrieval_chunk`` (migrations 0004, 0006), in the
    same statement's transaction as the chunks themselves, whatever writes them
    (ingest, re-ingest, the admin, a cascade from a deleted property): inserted
    chunks add their words and counts; deleted chunks take their counts back and
    remove the words that no chunk of the organization holds any more."""

    # No btree index led by organization: given one, the planner walks all of an
    # organization's words and computes each similarity instead of asking the GIN
    # index below (measured: ~0.5 ms per query word on a 500-chunk organization).
    organization = models.ForeignKey(
        "properties.Organization", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    word = models.CharField(max_length=100)
    # How many of the organization's chunks hold the word (its document frequency),
    # kept by the same triggers. A large scope's keyword leg skips the words held by
    # more than SEARCH_KEYWORD_MAX_DF_SHARE of it: they cost the most rows and rank least.
    chunks = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["word", "organization"], name="term_unique_word")]
        indexes = [
            # btree_gin lets one GIN index answer "this organization's words similar to X"
            # (and "this organization's words", for a cascade).
            GinIndex(name="term_org_word_trgm", fields=["organization", "word"], opclasses=["int8_ops", "gin_trgm_ops"])
        ]

    def __str__(self) -> str:
        return self.word
