"""Each vocabulary word counts the organization's chunks that hold it, and
chunks lose their own index on the organization.

The count (``retrieval_term.chunks``, a document frequency) lets a large
scope's keyword leg skip the words that many of its chunks hold before it asks
the word index for them: at 100 000 chunks those words were most of the big
organization's keyword time and rank least (docs/benchmarks.md). The triggers
of migration 0004 now add an inserted chunk's words with their counts and take
a deleted chunk's counts back, dropping a word at zero (before, a delete
searched the organization's chunks for each of its words).

``retrieval_chunk_organization_id`` duplicated the lead of ``chunk_scope``
(organization, property); given both, the planner read a big organization's
chunks of every property through the first and filtered them, instead of the
two ranges of a tenant's scope through the second.
"""

import django.db.models.deletion
from django.db import migrations, models

SYNC_FUNCTION = """
CREATE OR REPLACE FUNCTION retrieval_term_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- One writer per organization's vocabulary until commit, so counts add up.
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_advisory_xact_lock(hashtext('retrieval_term'), s.organization_id::integer)
        FROM (SELECT DISTINCT organization_id FROM new_chunks ORDER BY 1) s;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM pg_advisory_xact_lock(hashtext('retrieval_term'), s.organization_id::integer)
        FROM (SELECT DISTINCT organization_id FROM old_chunks ORDER BY 1) s;
    END IF;
    -- An update adds the new words before it takes the old ones back, so a word
    -- both hold never reaches zero on the way.
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO retrieval_term (organization_id, word, chunks)
        SELECT n.organization_id, w.word, count(*)
        FROM new_chunks n, unnest(tsvector_to_array(n.search_words)) AS w(word)
        WHERE char_length(w.word) BETWEEN 2 AND 100
        GROUP BY 1, 2
        ORDER BY 1, 2
        ON CONFLICT (organization_id, word) DO UPDATE SET chunks = retrieval_term.chunks + EXCLUDED.chunks;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE retrieval_term t SET chunks = greatest(t.chunks - gone.n, 0)
        FROM (
            SELECT o.organization_id, w.word, count(*) AS n
            FROM old_chunks o, unnest(tsvector_to_array(o.search_words)) AS w(word)
            WHERE char_length(w.word) BETWEEN 2 AND 100
            GROUP BY 1, 2
        ) gone
        WHERE t.organization_id = gone.organization_id AND t.word = gone.word;
        DELETE FROM retrieval_term t
        USING (
            SELECT DISTINCT o.organization_id, w.word
            FROM old_chunks o, unnest(tsvector_to_array(o.search_words)) AS w(word)
        ) gone
        WHERE t.organization_id = gone.organization_id AND t.word = gone.word AND t.chunks = 0;
    END IF;
    RETURN NULL;
END
$$;
UPDATE retrieval_term t SET chunks = s.n
FROM (
    SELECT c.organization_id, w.word, count(*) AS n
    FROM retrieval_chunk c, unnest(tsvector_to_array(c.search_words)) AS w(word)
    WHERE char_length(w.word) BETWEEN 2 AND 100
    GROUP BY 1, 2
) s
WHERE t.organization_id = s.organization_id AND t.word = s.word;
"""

# 0004's function: a delete searches the organization's chunks for each word it held.
PREVIOUS_FUNCTION = """
CREATE OR REPLACE FUNCTION retrieval_term_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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
"""


class Migration(migrations.Migration):
    dependencies = [
        ("properties", "0002_initial"),
        ("retrieval", "0005_chunk_vectors_and_words_inline"),
    ]

    operations = [
        migrations.AddField(
            model_name="term",
            name="chunks",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunSQL(SYNC_FUNCTION, reverse_sql=PREVIOUS_FUNCTION),
        migrations.AlterField(
            model_name="chunk",
            name="organization",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="properties.organization",
            ),
        ),
    ]
