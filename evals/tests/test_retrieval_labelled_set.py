"""The shipped retrieval labelled set is whole: what eval_retrieval and the
weekly scheduled evaluation read by default."""

from evals.retrieval_eval import LABELLED_CORPUS, LABELLED_QUERIES, queries_read
from retrieval.documents import manifest_read


def test_the_labelled_set_labels_only_documents_it_ships():
    manifest = manifest_read(LABELLED_CORPUS)
    assert len(manifest) >= 15
    for name in manifest:
        assert (LABELLED_CORPUS / name).is_file(), name
    scopes = {entry["property_scope"] for entry in manifest.values()} - {"all"}
    queries = queries_read(LABELLED_QUERIES)
    assert len(queries) >= 80
    assert len({q.id for q in queries}) == len(queries)
    for query in queries:
        assert query.property is None or query.property in scopes, query.id
        for label in query.relevant:
            assert label.file in manifest, (query.id, label.file)
            assert label.grade in (1, 2), query.id
