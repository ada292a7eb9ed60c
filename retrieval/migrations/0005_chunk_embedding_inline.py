"""Keep each chunk's embedding in its row (storage MAIN) instead of pgvector's
default EXTERNAL, which moves it to the TOAST table whenever the row passes
about 2 kB (text, search text and words make most chunk rows that long). An
exact scan then read every vector through the TOAST index: about 5 us a row,
30 ms for a tenant of 4 663 chunks (docs/benchmarks.md). MAIN still lets
PostgreSQL move it out as a last resort, so a larger model's vectors fit.

Rows written before this migration keep their out-of-line vectors until they
are written again (re-ingesting a document, or ``VACUUM FULL retrieval_chunk``)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("retrieval", "0004_term_per_organization")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE retrieval_chunk ALTER COLUMN embedding SET STORAGE MAIN",
            reverse_sql="ALTER TABLE retrieval_chunk ALTER COLUMN embedding SET STORAGE EXTERNAL",
        )
    ]
