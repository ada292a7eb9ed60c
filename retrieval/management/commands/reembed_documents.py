"""``manage.py reembed_documents [--org SLUG ...] [--dry-run]``

After ``EMBEDDING_BACKEND`` changes, brings every document's chunks to the
configured model, one document at a time, with progress. Safe on a live
system: until a document's new chunks are swapped in (one short transaction),
its old chunks stay, found by the keyword leg (the vector leg never compares
vectors of two models). Stopping it half way loses nothing; running it again
carries on with the documents still on the old model.
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from properties.models import Organization
from retrieval.embeddings import EmbeddingError, embedding_backend
from retrieval.models import Document
from retrieval.selectors import document_stale_list
from retrieval.services import document_embed


class Command(BaseCommand):
    help = "Re-embed the documents whose chunks another embedding model wrote."

    def add_arguments(self, parser):
        parser.add_argument("--org", action="append", default=[], help="organization slug (repeatable; default all)")
        parser.add_argument("--dry-run", action="store_true", help="list what would be re-embedded")

    def handle(self, *args, org, dry_run, **options):
        organization_ids = None
        if org:
            found = dict(Organization.objects.filter(slug__in=org).values_list("slug", "pk"))
            if missing := sorted(set(org) - set(found)):
                raise CommandError(f"no organization with slug {', '.join(missing)}")
            organization_ids = list(found.values())
        model = embedding_backend().name
        ids = list(
            document_stale_list(embedding_model=model, organization_ids=organization_ids).values_list("pk", flat=True)
        )
        self.stdout.write(f"{len(ids)} documents to re-embed with {model}")
        started = time.monotonic()
        failed = 0
        for number, document_id in enumerate(ids, start=1):
            document = Document.objects.filter(pk=document_id).only("title").first()
            if document is None:
                continue  # deleted meanwhile
            label = f"[{number}/{len(ids)}] {document.title}"
            if dry_run:
                self.stdout.write(label)
                continue

            def progress(done: int, total: int, label=label) -> None:
                self.stdout.write(f"{label}: {done}/{total} chunks", ending="\r")
                self.stdout.flush()

            try:
                document = document_embed(document_id=document_id, progress=progress)
            except EmbeddingError as exc:
                raise CommandError(f"{label}: {exc} (run the command again to carry on)") from exc
            if document is None:
                self.stdout.write(f"{label}: deleted meanwhile")
            elif document.status == Document.Status.FAILED:
                failed += 1
                self.stderr.write(f"{label}: failed: {document.error}")
            else:
                self.stdout.write(f"{label}: {document.chunks.count()} chunks")
        if not dry_run:
            self.stdout.write(f"re-embedded {len(ids) - failed} of {len(ids)} in {time.monotonic() - started:.1f}s")
        if failed:
            raise CommandError(f"{failed} documents failed (see above)")
