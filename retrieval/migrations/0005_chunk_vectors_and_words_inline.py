"""Keep each chunk's embedding and its search words in the row (storage MAIN).

pgvector's default for ``vector`` is EXTERNAL and a ``tsvector``'s is EXTENDED:
once a chunk row passes about 2 kB (text and search text make most of them
that long) PostgreSQL moved them to the TOAST table, so an exact vector scan,
and the keyword leg on a small scope, read each one through the TOAST index.
Measured at 100 000 chunks (docs/benchmarks.md): an exact scan of a 4 663-chunk
scope 30 ms -> 10 ms with the vectors inline; a typical tenant's keyword leg
p50 5.7 -> 2.7 ms with the words inline too. MAIN still lets PostgreSQL move a
value out as a last resort, so a larger model's vectors still fit; the chunk
text and search text, read for a few hits only, go out first.

Rows written before this migration keep their out-of-line values until they
are written again (re-ingesting the document, or ``VACUUM FULL retrieval_chunk``)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("retrieval", "0004_term_per_organization")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE retrieval_chunk ALTER COLUMN embedding SET STORAGE MAIN",
            reverse_sql="ALTER TABLE retrieval_chunk ALTER COLUMN embedding SET STORAGE EXTERNAL",
        ),
        migrations.RunSQL(
            "ALTER TABLE retrieval_chunk ALTER COLUMN search_words SET STORAGE MAIN",
            reverse_sql="ALTER TABLE retrieval_chunk ALTER COLUMN search_words SET STORAGE EXTENDED",
        ),
    ]
