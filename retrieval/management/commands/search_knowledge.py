"""``manage.py search_knowledge "query" --org SLUG [--property CODE]
[--mode hybrid|vector|keyword] [--limit N] [--json]``"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from properties.models import Organization, Property
from retrieval.search import MODES, knowledge_search


class Command(BaseCommand):
    help = "Search an organization's knowledge documents as a tenant of a property would."

    def add_arguments(self, parser):
        parser.add_argument("query")
        parser.add_argument("--org", required=True, help="organization slug")
        parser.add_argument("--property", help="property code (default: organization-wide documents only)")
        parser.add_argument("--mode", choices=MODES, default="hybrid")
        parser.add_argument("--limit", type=int, default=5)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, query, org, property, mode, limit, **options):
        organization = Organization.objects.filter(slug=org).first()
        if organization is None:
            raise CommandError(f"no organization with slug {org!r}")
        property_id = None
        if property:
            target = Property.objects.filter(organization=organization, code=property).first()
            if target is None:
                raise CommandError(f"organization {org} has no property {property!r}")
            property_id = target.pk
        timings: dict[str, float] = {}
        try:
            hits = knowledge_search(
                organization_id=organization.pk,
                property_id=property_id,
                query=query,
                limit=limit,
                mode=mode,
                timings=timings,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            payload = {
                "query": query,
                "mode": mode,
                "timings_ms": {k: round(v, 2) for k, v in timings.items()},
                "hits": [{**hit.as_trace(), "text": hit.text} for hit in hits],
            }
            self.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False))
            return
        if not hits:
            self.stdout.write("no hits")
        for number, hit in enumerate(hits, start=1):
            ranks = f"vector #{hit.vector_rank or '-'}, keyword #{hit.keyword_rank or '-'}"
            self.stdout.write(
                f"{number}. [{hit.score:.4f}; {ranks}] {hit.document_title} > {hit.heading_path or '(top)'}"
            )
            snippet = " ".join(hit.text.split())
            self.stdout.write(f"   {snippet[:200]}{'...' if len(snippet) > 200 else ''}")
        if timings:
            self.stdout.write(
                f"({timings.get('embed_ms', 0):.1f} ms embedding the query, {timings.get('sql_ms', 0):.1f} ms search)"
            )
