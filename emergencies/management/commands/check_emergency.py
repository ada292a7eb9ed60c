"""``manage.py check_emergency "text" [--org SLUG] [--country GB] [--json]``"""

from __future__ import annotations

import json
import re

from django.core.management.base import BaseCommand, CommandError

from emergencies.alerts import safety_message_for
from emergencies.matching import emergency_match
from emergencies.normalise import normalise
from properties.models import Organization


class Command(BaseCommand):
    help = "Show whether a message hits the emergency rules, which rules, and the category."

    def add_arguments(self, parser):
        parser.add_argument("text")
        parser.add_argument("--org", help="organization slug (its own rules and safety texts)")
        parser.add_argument("--country", help="country code, default the organization's or GB")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, text, org, country, json: bool, **options):
        organization = None
        if org:
            organization = Organization.objects.filter(slug=org).first()
            if organization is None:
                raise CommandError(f"no organization {org!r}")
        country = (country or (organization.country if organization else "GB")).upper()
        if not re.fullmatch(r"[A-Z]{2}", country):
            raise CommandError(f"--country takes a two-letter country code such as GB, IE or US, not {country!r}")
        match = emergency_match(text, organization_id=organization.pk if organization else None, country=country)
        result = {
            "text": text,
            "normalised": normalise(text),
            "country": country,
            "emergency": bool(match),
            "category": match.category,
            "rules": [hit.as_dict() for hit in match.hits],
        }
        if match:
            # What the tenant would be sent: the organization's text if it has one, else the default, for this
            # country, in the language of the rules that hit when there is a text in it.
            result["safety_reply"] = safety_message_for(
                organization=organization, category=match.category, country=country, language=match.language
            )
        if json:
            self.stdout.write(_dumps(result))
            return
        if not match:
            self.stdout.write(f"no emergency rule hit ({result['normalised']!r}, {country})")
            return
        self.stdout.write(self.style.ERROR(f"EMERGENCY: {match.category}"))
        for hit in match.hits:
            self.stdout.write(f"  rule {hit.rule_id}: {hit.phrase!r} ({hit.category}, {hit.language})")
        self.stdout.write(f"  reply ({country}): {result['safety_reply']}")


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
