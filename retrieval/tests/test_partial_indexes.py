"""A big organization's own HNSW index (retrieval/partial_indexes.py): built
when it reaches the threshold, used by its tenants' searches, rebuilt when a
build failed, dropped when it shrinks. Index builds run CONCURRENTLY, outside
any transaction, so these tests commit."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from properties.tests.factories import OrganizationFactory, PropertyFactory
from retrieval.models import Document
from retrieval.partial_indexes import chunk_counts, index_name, partial_indexes, partial_indexes_sync
from retrieval.search import SearchParams, search_explain

pytestmark = pytest.mark.django_db(transaction=True)

GUIDE = "\n\n".join(
    f"## Section {n}\n\nThe {word} is explained here: what to do about the {word} in your home."
    for n, word in enumerate(["boiler", "stopcock", "bins", "heating", "windows", "parking"])
)


@pytest.fixture(autouse=True)
def _no_partial_index_left():
    """The indexes outlive the tables' flush between tests: drop them."""
    yield
    partial_indexes_sync(min_chunks=0)


@pytest.fixture
def big_and_small(ingest):
    big = OrganizationFactory(slug="big")
    small = OrganizationFactory(slug="small")
    flat = PropertyFactory(organization=big, code="FLAT-1")
    ingest(organization=big, content=GUIDE, title="Guide", source_name="guide.md")
    ingest(organization=big, content=GUIDE.replace("home", "flat"), title="Flat", source_name="flat.md", property=flat)
    ingest(organization=small, content="## Bins\n\nBins go out on Monday.", title="Bins", source_name="bins.md")
    counts = chunk_counts()
    assert counts[big.pk] > counts[small.pk]
    return big, small, flat, counts[big.pk]


def test_an_organization_at_the_threshold_gets_its_own_index_and_its_search_walks_it(big_and_small):
    big, _small, flat, threshold = big_and_small
    lines: list[str] = []
    result = partial_indexes_sync(min_chunks=threshold, progress=lines.append)
    assert result.built == [big.pk] and partial_indexes() == {big.pk: True}
    assert any("building its index" in line for line in lines)

    with connection.cursor() as cursor:  # few rows: make the planner walk an index, as on a big table
        cursor.execute("SET enable_seqscan = off; SET enable_sort = off")
    try:
        plan = search_explain(
            organization_id=big.pk,
            property_id=flat.pk,
            query="boiler",
            mode="vector",
            params=SearchParams.from_settings(exact_scan_max_chunks=0),
        )
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET enable_seqscan; RESET enable_sort")
    executed = [line.strip()[:80] for line in plan.splitlines() if "never executed" not in line]
    assert any(index_name(big.pk) in line for line in executed), executed

    again = partial_indexes_sync(min_chunks=threshold)
    assert (again.built, again.kept) == ([], [big.pk])


def test_an_invalid_index_is_rebuilt_and_a_shrunk_organization_loses_its_index(big_and_small):
    big, _small, _flat, threshold = big_and_small
    partial_indexes_sync(min_chunks=threshold)
    with connection.cursor() as cursor:  # what a failed CREATE INDEX CONCURRENTLY leaves behind
        cursor.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [index_name(big.pk)])
    assert partial_indexes() == {big.pk: False}
    assert partial_indexes_sync(min_chunks=threshold).rebuilt == [big.pk]
    assert partial_indexes() == {big.pk: True}

    # Half the threshold keeps it (no rebuilding back and forth at the line); below that it goes.
    assert partial_indexes_sync(min_chunks=threshold * 2).kept == [big.pk]
    Document.objects.filter(organization=big).delete()
    assert partial_indexes_sync(min_chunks=threshold).dropped == [big.pk]
    assert partial_indexes() == {}


def test_the_command_says_what_it_would_do_and_refuses_a_negative_threshold(big_and_small, capsys):
    big, _small, _flat, threshold = big_and_small
    call_command("retrieval_partial_indexes", "--min-chunks", str(threshold), "--dry-run")
    out = capsys.readouterr().out
    assert f"organization {big.pk}" in out and "1 would be built" in out
    assert partial_indexes() == {}
    call_command("retrieval_partial_indexes", "--min-chunks", str(threshold))
    assert "1 were built" in capsys.readouterr().out and partial_indexes() == {big.pk: True}
    call_command("retrieval_partial_indexes", "--min-chunks", "0")  # off: every partial index goes
    assert partial_indexes() == {}
    with pytest.raises(CommandError, match=r"0 .* or more"):
        call_command("retrieval_partial_indexes", "--min-chunks", "-1")
