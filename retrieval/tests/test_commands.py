import json

import pytest
from django.core.management import CommandError, call_command

from properties.tests.factories import PropertyFactory
from retrieval.models import Document
from retrieval.search import knowledge_search
from retrieval.tests.pdf import pdf_bytes


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "rules.md").write_text("# House rules\n\n## Pets\n\nAsk before getting a cat.\n")
    (tmp_path / "boiler.md").write_text("# Flat boiler\n\n## F22\n\nF22 means low pressure.\n")
    (tmp_path / "notes.txt").write_text("Plain notes about the bins: Tuesday.\n")
    (tmp_path / "MANIFEST.json").write_text(
        json.dumps(
            [
                {"file": "rules.md", "title": "House rules", "property_scope": "all"},
                {"file": "boiler.md", "title": "Boiler guide", "property_scope": "FLAT-1"},
            ]
        )
    )
    return tmp_path


def test_ingest_documents_uses_the_manifest_and_is_idempotent(alice, alice_flat, folder, capsys):
    call_command(
        "ingest_documents",
        str(folder / "rules.md"),
        str(folder / "boiler.md"),
        str(folder / "notes.txt"),
        str(folder / "MANIFEST.json"),
        "--org",
        "alice",
    )
    out = capsys.readouterr().out
    assert "3 created, 0 updated, 0 unchanged, 0 failed" in out
    boiler = Document.objects.get(source="boiler.md")
    assert boiler.title == "Boiler guide" and boiler.property == alice_flat
    assert Document.objects.get(source="notes.txt").property is None
    assert Document.objects.get(source="notes.txt").title == "Notes"

    (folder / "rules.md").write_text("# House rules\n\n## Pets\n\nNo pets without permission.\n")
    call_command("ingest_documents", str(folder), "--org", "alice")
    assert "0 created, 1 updated, 2 unchanged, 0 failed" in capsys.readouterr().out
    assert "No pets" in Document.objects.get(source="rules.md").chunks.get().text


def test_ingest_documents_reads_pdf_text(alice, folder, capsys):
    (folder / "gas-safety.pdf").write_bytes(pdf_bytes("Gas safety record\nThe boiler was checked on 3 March."))
    call_command("ingest_documents", str(folder / "gas-safety.pdf"), "--org", "alice")
    assert "1 created" in capsys.readouterr().out
    document = Document.objects.get(source="gas-safety.pdf")
    assert document.title == "Gas safety"
    assert "The boiler was checked on 3 March." in document.chunks.get().text


def test_property_option_overrides_the_manifest(alice, alice_flat, folder):
    call_command("ingest_documents", str(folder / "rules.md"), "--org", "alice", "--property", "FLAT-1")
    assert Document.objects.get().property == alice_flat


def test_ingest_documents_refuses_bad_input(alice, folder):
    with pytest.raises(CommandError, match="no organization"):
        call_command("ingest_documents", str(folder), "--org", "nobody")
    with pytest.raises(CommandError, match="no property"):
        call_command("ingest_documents", str(folder), "--org", "alice", "--property", "NOPE")
    with pytest.raises(CommandError, match="no such file"):
        call_command("ingest_documents", str(folder / "missing.md"), "--org", "alice")
    (folder / "scan.pdf").write_bytes(pdf_bytes(""))
    with pytest.raises(CommandError, match=r"scan\.pdf: The PDF has no text layer"):
        call_command("ingest_documents", str(folder / "scan.pdf"), "--org", "alice")
    (folder / "scan.pdf").unlink()
    (folder / "image.png").write_bytes(b"\x89PNG")
    with pytest.raises(CommandError, match="unsupported file type"):
        call_command("ingest_documents", str(folder / "image.png"), "--org", "alice")
    # A manifest property the organization does not have: that file fails, the others go in.
    with pytest.raises(CommandError, match="1 file"):
        call_command("ingest_documents", str(folder), "--org", "alice")
    assert Document.objects.count() == 2


def test_search_knowledge_prints_hits_with_ranks(alice, alice_flat, folder, capsys):
    call_command("ingest_documents", str(folder), "--org", "alice")
    capsys.readouterr()
    call_command("search_knowledge", "F22 presure", "--org", "alice", "--property", "FLAT-1", "--json")
    payload = json.loads(capsys.readouterr().out)
    first = payload["hits"][0]
    assert first["document"] == "Boiler guide" and first["heading"] == "Flat boiler > F22"
    assert first["vector_rank"] == 1 and first["keyword_rank"] == 1
    call_command("search_knowledge", "cat", "--org", "alice", "--mode", "keyword")
    assert "House rules > Pets" in capsys.readouterr().out


def test_eval_retrieval_measures_the_three_modes_on_a_labelled_set(db, folder, tmp_path, capsys, settings):
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        "\n".join(
            json.dumps(q)
            for q in [
                {
                    "id": "1",
                    "query": "F22",
                    "property": "FLAT-1",
                    "relevant": [{"file": "boiler.md", "heading": "F22", "grade": 2}],
                    "kind": "code",
                },
                {
                    "id": "2",
                    "query": "can I have a cat",
                    "property": None,
                    "relevant": [{"file": "rules.md", "heading": "Pets", "grade": 2}],
                    "kind": "paraphrase",
                },
                {"id": "3", "query": "gym opening hours", "property": None, "relevant": [], "kind": "no_answer"},
            ]
        )
    )
    call_command("eval_retrieval", "--corpus", str(folder), "--queries", str(queries), "--json")
    report = json.loads(capsys.readouterr().out)
    assert set(report["modes"]) == {"hybrid", "vector", "keyword"}
    assert report["unanswerable_queries"] == 1
    hybrid = report["modes"]["hybrid"]["overall"]
    assert hybrid["queries"] == 2 and hybrid["hit_at_k"] == 1.0 and hybrid["mrr_at_10"] == 1.0
    # The no-answer query is searched too: its top hit scores below every answer's.
    no_answer = report["no_answer"]
    assert set(no_answer) == {"hybrid", "vector", "keyword"}
    vector = no_answer["vector"]
    assert vector["score"] == "best cosine similarity"
    assert vector["answerable"]["n"] == 2 and vector["no_answer"]["n"] == 1
    assert vector["no_answer"]["p50"] < vector["answerable"]["p10"]
    assert vector["no_answer_below_answerable_p10"] == 1.0
    assert vector["auc"] == 1.0  # every answer scores above the question with none
    # The product's threshold between them flags the no-answer query and keeps both answers.
    settings.SEARCH_ANSWER_MIN_SIMILARITY = (vector["no_answer"]["p50"] + vector["answerable"]["p10"]) / 2
    call_command("eval_retrieval", "--corpus", str(folder), "--queries", str(queries), "--json")
    point = json.loads(capsys.readouterr().out)["no_answer"]["hybrid"]["threshold"]
    assert point["answerable_kept"] == 1.0 and point["no_answer_flagged"] == 1.0 and point["right_rate"] == 1.0
    assert no_answer["keyword"]["no_answer"]["p50"] == 0.0  # no word of "gym opening hours" is in the corpus
    # The product's signal, the answerability head, at an operating point that takes everything
    # as an answer, then at one that takes nothing.
    settings.SEARCH_ANSWERABLE_MIN_PROBABILITY = 0.0
    call_command("eval_retrieval", "--corpus", str(folder), "--queries", str(queries), "--json")
    head = json.loads(capsys.readouterr().out)["answerability"]
    assert head["threshold"] == 0.0 and head["no_answer"] == 1
    assert (
        head["answerable_kept"] == 1.0
        and head["no_answer_flagged"] == 0.0
        and head["right_rate"] == pytest.approx(2 / 3, abs=1e-4)
    )
    settings.SEARCH_ANSWERABLE_MIN_PROBABILITY = 1.0
    call_command("eval_retrieval", "--corpus", str(folder), "--queries", str(queries), "--json")
    head = json.loads(capsys.readouterr().out)["answerability"]
    assert (
        head["answerable_kept"] == 0.0
        and head["no_answer_flagged"] == 1.0
        and head["right_rate"] == pytest.approx(1 / 3, abs=1e-4)
    )
    settings.SEARCH_ANSWERABLE_MIN_PROBABILITY = None
    # The throwaway organization is rolled back.
    assert not Document.objects.exists()

    call_command("eval_retrieval", "--corpus", str(folder), "--queries", str(queries))
    out = capsys.readouterr().out
    assert "Answerability: top score, answerable vs no-answer queries" in out
    assert "AUC 1.000" in out and "100% of no-answer flagged" in out


def test_eval_retrieval_creates_a_property_only_a_query_names(db, folder, tmp_path, capsys):
    # HOUSE-9 has no documents of its own: its tenants see the organization-wide ones.
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        json.dumps(
            {
                "id": "1",
                "query": "can I have a cat",
                "property": "HOUSE-9",
                "relevant": [{"file": "rules.md", "heading": "Pets", "grade": 2}],
                "kind": "property",
            }
        )
    )
    call_command("eval_retrieval", "--corpus", str(folder), "--queries", str(queries), "--json")
    report = json.loads(capsys.readouterr().out)
    assert report["modes"]["hybrid"]["overall"]["hit_at_k"] == 1.0


def test_eval_retrieval_rejects_a_broken_labelled_set(db, folder, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "query": "x"}\n')
    with pytest.raises(CommandError, match="not a labelled query"):
        call_command("eval_retrieval", "--corpus", str(folder), "--queries", str(bad))


def test_a_file_the_manifest_moves_to_a_property_is_no_longer_searchable_org_wide(alice, alice_flat, folder, capsys):
    call_command("ingest_documents", str(folder), "--org", "alice")
    hits = knowledge_search(organization_id=alice.pk, property_id=None, query="cat", mode="keyword")
    assert [h.document_title for h in hits] == ["House rules"]

    manifest = json.loads((folder / "MANIFEST.json").read_text())
    manifest[0]["property_scope"] = "FLAT-1"  # rules.md: all -> FLAT-1
    (folder / "MANIFEST.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    call_command("ingest_documents", str(folder), "--org", "alice", "--remove-other-scopes")
    out = capsys.readouterr().out
    assert "rules.md (FLAT-1): created" in out and "removed the copy for all properties" in out
    rules = Document.objects.get(source="rules.md")
    assert rules.property == alice_flat
    assert knowledge_search(organization_id=alice.pk, property_id=None, query="cat", mode="keyword") == []
    hits = knowledge_search(organization_id=alice.pk, property_id=alice_flat.pk, query="cat", mode="keyword")
    assert [h.document_title for h in hits] == ["House rules"]


def test_two_properties_own_files_of_the_same_name_are_both_kept(alice, alice_flat, folder, tmp_path, capsys):
    """Without --remove-other-scopes nothing is deleted: FLAT-1's and HOUSE-2's
    boiler.md, each from its own folder's MANIFEST.json, both stay searchable."""
    PropertyFactory(organization=alice, code="HOUSE-2")
    for code in ("FLAT-1", "HOUSE-2"):
        own = tmp_path / code
        own.mkdir()
        (own / "boiler.md").write_text(f"# Boiler\n\nThe boiler of {code} is in the loft.\n")
        (own / "MANIFEST.json").write_text(
            json.dumps([{"file": "boiler.md", "title": f"Boiler {code}", "property_scope": code}])
        )
        call_command("ingest_documents", str(own), "--org", "alice")
    assert "boiler.md is also ingested for FLAT-1 and stays searchable" in capsys.readouterr().err
    assert sorted(Document.objects.filter(source="boiler.md").values_list("title", flat=True)) == [
        "Boiler FLAT-1",
        "Boiler HOUSE-2",
    ]


def test_a_file_given_another_scope_on_the_command_line_keeps_its_other_copy_with_a_warning(
    alice, alice_flat, folder, capsys
):
    call_command("ingest_documents", str(folder / "notes.txt"), "--org", "alice")
    call_command("ingest_documents", str(folder / "notes.txt"), "--org", "alice", "--property", "FLAT-1")
    err = capsys.readouterr().err
    assert "notes.txt is also ingested for all properties and stays searchable" in err
    assert Document.objects.filter(source="notes.txt").count() == 2
