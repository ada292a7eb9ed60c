"""The keyword leg's vocabulary becomes per organization, kept by triggers.

Before, ``retrieval_term`` was one table of words for every organization, only
ever added to: the lookup that picks a query word's closest vocabulary words
took its top ``SEARCH_WORDS_PER_TERM`` across all landlords before the scope
filter, so another landlord's near-duplicates could take every slot and a typo
then found nothing in this tenant's scope.

Now a word belongs to an organization, one GIN index (btree_gin + pg_trgm)
answers "this organization's words similar to X", and statement-level
triggers on ``retrieval_chunk`` keep the table in the same transaction as the
chunks: inserted chunks add their words; deleted chunks remove those of their
words no chunk of the organization still holds (a word is kept exactly when
the keyword leg's ``plainto_tsquery`` of it still finds a chunk).
"""

import django.contrib.postgres.indexes
import django.db.models.deletion
from django.contrib.postgres.operations import BtreeGinExtension
from django.db import migrations, models

SYNC_FUNCTION = """
CREATE FUNCTION retrieval_term_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- One writer per organization's vocabulary until commit: otherwise a delete
    -- that cannot see another transaction's new chunk drops a word that chunk
    -- needs, while that transaction's insert found the word still there.
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_advisory_xact_lock(hashtext('retrieval_term'), s.organization_id::integer)
        FROM (SELECT DISTINCT organization_id FROM new_chunks ORDER BY 1) s;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM pg_advisory_xact_lock(hashtext('retrieval_term'), s.organization_id::integer)
        FROM (SELECT DISTINCT organization_id FROM old_chunks ORDER BY 1) s;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO retrieval_term (organization_id, word)
        SELECT DISTINCT n.organization_id, w.word
        FROM new_chunks n, unnest(tsvector_to_array(n.search_words)) AS w(word)
        WHERE char_length(w.word) BETWEEN 2 AND 100
        ORDER BY 1, 2
        ON CONFLICT (organization_id, word) DO NOTHING;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        DELETE FROM retrieval_term t
        USING (
            SELECT DISTINCT o.organization_id, w.word
            FROM old_chunks o, unnest(tsvector_to_array(o.search_words)) AS w(word)
        ) gone
        WHERE t.organization_id = gone.organization_id
          AND t.word = gone.word
          AND NOT EXISTS (
              SELECT 1 FROM retrieval_chunk c
              WHERE c.organization_id = gone.organization_id
                AND c.search_words @@ plainto_tsquery('simple', gone.word)
          );
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER chunk_terms_insert AFTER INSERT ON retrieval_chunk
    REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION retrieval_term_sync();
CREATE TRIGGER chunk_terms_update AFTER UPDATE ON retrieval_chunk
    REFERENCING OLD TABLE AS old_chunks NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION retrieval_term_sync();
CREATE TRIGGER chunk_terms_delete AFTER DELETE ON retrieval_chunk
    REFERENCING OLD TABLE AS old_chunks FOR EACH STATEMENT EXECUTE FUNCTION retrieval_term_sync();
INSERT INTO retrieval_term (organization_id, word)
SELECT DISTINCT c.organization_id, w.word
FROM retrieval_chunk c, unnest(tsvector_to_array(c.search_words)) AS w(word)
WHERE char_length(w.word) BETWEEN 2 AND 100
ON CONFLICT (organization_id, word) DO NOTHING;
"""

DROP_SYNC = """
DROP TRIGGER IF EXISTS chunk_terms_insert ON retrieval_chunk;
DROP TRIGGER IF EXISTS chunk_terms_update ON retrieval_chunk;
DROP TRIGGER IF EXISTS chunk_terms_delete ON retrieval_chunk;
DROP FUNCTION IF EXISTS retrieval_term_sync();
"""


class Migration(migrations.Migration):

    dependencies = [
        ('properties', '0002_initial'),
        ('retrieval', '0003_chunk_search_words_and_terms'),
    ]

    operations = [
        BtreeGinExtension(),
        migrations.DeleteModel(name='Term'),
        migrations.CreateModel(
            name='Term',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('word', models.CharField(max_length=100)),
                ('organization', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='properties.organization')),
            ],
            options={
                'indexes': [django.contrib.postgres.indexes.GinIndex(fields=['organization', 'word'], name='term_org_word_trgm', opclasses=['int8_ops', 'gin_trgm_ops'])],
                'constraints': [models.UniqueConstraint(fields=('word', 'organization'), name='term_unique_word')],
            },
        ),
        migrations.RunSQL(sql=SYNC_FUNCTION, reverse_sql=DROP_SYNC),
    ]
