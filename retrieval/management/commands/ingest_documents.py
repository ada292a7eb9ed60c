"""``manage.py ingest_documents PATH... --org SLUG [--property CODE]``

Ingests Markdown, text and PDF files (folders are read one level deep; a folder's
MANIFEST.json gives titles and property scopes). Unchanged files are skipped;
changed ones have their chunks replaced. Embedding runs here, with progress.

A file whose scope its MANIFEST.json gives is that file's one copy in the
organization: when the manifest moves it to another scope (``all`` -> a
property, or back), the copy under the old scope is removed once the new one is
in, so it is not left searchable where it no longer belongs. A file scoped by
``--property`` (or not listed) may legitimately exist once per property (each
property's own ``boiler.md``): other copies are kept and named in a warning.
"""

from __future__ import annotations

import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from properties.models import Organization, Property
from retrieval.documents import DocumentSourceError, file_text, source_files
from retrieval.models import Document
from retrieval.services import document_copies, document_copies_delete, document_ingest


class Command(BaseCommand):
    help = "Ingest knowledge documents (Markdown, text or PDF) for an organization, embedding them now."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path, help="files or folders")
        parser.add_argument("--org", required=True, help="organization slug")
        parser.add_argument(
            "--property",
            help="property code: every file belongs to this property only (default: the MANIFEST.json "
            "scope, else organization-wide)",
        )
        parser.add_argument(
            "--remove-other-scopes",
            action="store_true",
            help="a file MANIFEST.json gives a new scope moved there: delete its copies (same file name) under "
            "other scopes. Without it they stay searchable and a warning names them (several properties may "
            "each have their own boiler.md).",
        )

    def handle(self, *args, paths, org, property, remove_other_scopes=False, **options):
        organization = Organization.objects.filter(slug=org).first()
        if organization is None:
            raise CommandError(f"no organization with slug {org!r} (python manage.py seed_demo creates 'demo')")
        properties = {p.code: p for p in Property.objects.filter(organization=organization)}
        if property and property not in properties:
            raise CommandError(f"organization {org} has no property {property!r}; it has: {', '.join(properties)}")
        try:
            sources = source_files(paths)
        except DocumentSourceError as exc:
            raise CommandError(str(exc)) from exc
        if not sources:
            raise CommandError("no .md, .markdown, .txt or .pdf files found")

        counts = {"created": 0, "updated": 0, "unchanged": 0, "failed": 0}
        started = time.monotonic()
        for number, source in enumerate(sources, start=1):
            code = property or source.property_code
            if code and code not in properties:
                self.stderr.write(f"[{number}/{len(sources)}] {source.path.name}: unknown property {code!r}, skipped")
                counts["failed"] += 1
                continue
            target = properties.get(code) if code else None
            label = f"[{number}/{len(sources)}] {source.path.name} ({code or 'all properties'})"
            try:
                content = file_text(source.path)
            except DocumentSourceError as exc:
                self.stderr.write(f"{label}: {exc}")
                counts["failed"] += 1
                continue
            before = Document.objects.filter(
                organization=organization, property=target, source=source.path.name
            ).first()

            def progress(done: int, total: int, label=label) -> None:
                if total > 64:
                    self.stdout.write(f"{label}: embedded {done}/{total} chunks", ending="\r")
                    self.stdout.flush()

            try:
                document = document_ingest(
                    organization=organization,
                    property=target,
                    title=source.title,
                    source_name=source.path.name,
                    content=content,
                    embed_now=True,
                    progress=progress,
                )
            except ValueError as exc:
                self.stderr.write(f"{label}: {exc}")
                counts["failed"] += 1
                continue
            if document.status == Document.Status.FAILED:
                self.stderr.write(f"{label}: failed: {document.error}")
                counts["failed"] += 1
                continue
            if before is None:
                outcome = "created"
            elif document.updated_at == before.updated_at:
                outcome = "unchanged"
            else:
                outcome = "updated"
            counts[outcome] += 1
            self.stdout.write(f"{label}: {outcome}, {document.chunks.count()} chunks")
            self._other_scopes(document, label=label, remove=remove_other_scopes and source.listed and not property)
        summary = ", ".join(f"{n} {k}" for k, n in counts.items())
        self.stdout.write(f"{summary} in {time.monotonic() - started:.1f}s")
        if counts["failed"]:
            raise CommandError(f"{counts['failed']} file(s) failed")

    def _other_scopes(self, document: Document, *, label: str, remove: bool) -> None:
        copies = document_copies(document=document)
        if not copies:
            return
        scopes = ", ".join(c.property.code if c.property else "all properties" for c in copies)
        if remove:
            document_copies_delete(document=document)
            self.stdout.write(f"{label}: moved here by MANIFEST.json; removed the copy for {scopes}")
        else:
            self.stderr.write(
                f"{label}: warning: {document.source} is also ingested for {scopes} and stays searchable "
                "there; if the file moved, run again with --remove-other-scopes or delete that copy in the admin"
            )
