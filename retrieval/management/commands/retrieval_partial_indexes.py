"""``manage.py retrieval_partial_indexes [--min-chunks N] [--dry-run]``

Gives every organization with at least ``SEARCH_PARTIAL_INDEX_MIN_CHUNKS``
chunks its own HNSW index and drops those no longer needed, now rather than at
beat's next run (retrieval/partial_indexes.py). Safe on a live system: the
indexes are built and dropped CONCURRENTLY.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from retrieval.partial_indexes import partial_indexes_sync


class Command(BaseCommand):
    help = "Build and drop the per-organization HNSW indexes of the big organizations."

    def add_arguments(self, parser):
        parser.add_argument("--min-chunks", type=int, default=None, help="default SEARCH_PARTIAL_INDEX_MIN_CHUNKS")
        parser.add_argument("--dry-run", action="store_true", help="say what would be built or dropped")

    def handle(self, *args, min_chunks, dry_run, **options):
        if min_chunks is not None and min_chunks < 0:
            raise CommandError("--min-chunks must be 0 (no partial indexes) or more")
        result = partial_indexes_sync(min_chunks=min_chunks, dry_run=dry_run, progress=self.stdout.write)
        if result.busy:
            raise CommandError("another sync of the partial indexes is running; try again when it ends")
        verb = "would be" if dry_run else "were"
        self.stdout.write(
            f"{len(result.built)} {verb} built, {len(result.rebuilt)} rebuilt, {len(result.dropped)} dropped; "
            f"{len(result.kept)} kept"
        )
