"""``manage.py check_emergency "text" [--org SLUG] [--country GB] [--sensitivity S] [--json]``

What the product would decide for a message: the keyword rules that hit, the
classifier's score, and the combined decision (``emergencies.detector``)."""

from __future__ import annotations

import json
import re

from django.core.management.base import BaseCommand, CommandError

from emergencies.alerts import safety_message_for
from emergencies.detector import SENSITIVITIES, emergency_detect
from emergencies.normalise import normalise
from properties.models import Organization


class Command(BaseCommand):
    help = "Show whether a message hits the emergency rules, which rules, and the category."

    def add_arguments(self, parser):
        parser.add_argument("text")
        parser.add_argument("--org", help="organization slug (its own rules and safety texts)")
        parser.add_argument("--country", help="country code, default the organization's or GB")
        parser.add_argument("--sensitivity", choices=SENSITIVITIES, help="default the organization's or standard")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, text, org, country, sensitivity, json: bool, **options):
        organization = None
        if org:
            organization = Organization.objects.filter(slug=org).first()
            if organization is None:
                raise CommandError(f"no organization {org!r}")
        country = (country or (organization.country if organization else "GB")).upper()
        if not re.fullmatch(r"[A-Z]{2}", country):
            raise CommandError(f"--country takes a two-letter country code such as GB, IE or US, not {country!r}")
        sensitivity = sensitivity or (organization.emergency_sensitivity if organization else "standard")
        detection = emergency_detect(
            text, organization_id=organization.pk if organization else None, country=country, sensitivity=sensitivity
        )
        score = detection.score
        result = {
            "text": text,
            "normalised": normalise(text),
            "country": country,
            "sensitivity": sensitivity,
            "emergency": detection.emergency,
            "category": detection.category,
            "stage": detection.source or None,
            "why": detection.explain(),
            "rules": [hit.as_dict() for hit in detection.hits],
            "rules_stood_down": [hit.as_dict() for hit in detection.vetoed],
            "classifier": (
                {
                    "emergency_probability": round(score.emergency, 3),
                    "category": score.category,
                    "category_probability": round(score.category_probability, 3),
                    "language": score.language,
                    "version": score.version,
                }
                if score
                else "unavailable"
            ),
        }
        if detection:
            assert detection.category is not None and detection.language is not None  # an emergency names both
            # What the tenant would be sent: the organization's text if it has one, else the default, for this
            # country, in the language of the rules that hit when there is a text in it.
            result["safety_reply"] = safety_message_for(
                organization=organization, category=detection.category, country=country, language=detection.language
            )
        if json:
            self.stdout.write(_dumps(result))
            return
        classifier = result["classifier"]
        scored = (
            f"classifier {classifier['emergency_probability']:.2f} emergency, likely {classifier['category']}"
            if isinstance(classifier, dict)
            else "classifier unavailable"
        )
        if not detection:
            stood_down = f"; rules stood down: {[h.phrase for h in detection.vetoed]}" if detection.vetoed else ""
            self.stdout.write(f"no emergency ({scored}{stood_down}; {country}, {sensitivity})")
            return
        self.stdout.write(self.style.ERROR(f"EMERGENCY: {detection.category} ({detection.explain()})"))
        for hit in detection.hits:
            self.stdout.write(f"  rule {hit.rule_id}: {hit.phrase!r} ({hit.category}, {hit.language})")
        self.stdout.write(f"  {scored}")
        self.stdout.write(f"  reply ({country}): {result['safety_reply']}")


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
