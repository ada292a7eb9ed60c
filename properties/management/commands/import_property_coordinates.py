"""Set properties' coordinates from a CSV file: ``code,latitude,longitude``.

    manage.py import_property_coordinates homes.csv --organization "Harbour Lettings"

Every line is checked before anything is saved; mistakes are listed with their
line numbers and the command fails without changing a row.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from properties.models import Organization
from properties.services import CoordinatesImportError, property_coordinates_import


class Command(BaseCommand):
    help = "Set property coordinates (WGS84 decimal degrees) from a CSV with columns code,latitude,longitude."

    def add_arguments(self, parser):
        parser.add_argument("csv_file", type=Path)
        parser.add_argument(
            "--organization", help="The organization's id or exact name (needed when there is more than one)."
        )

    def handle(self, *args, csv_file: Path, organization: str | None = None, **options):
        org = _organization(organization)
        try:
            with csv_file.open(newline="", encoding="utf-8-sig") as handle:
                updated = property_coordinates_import(organization=org, lines=handle)
        except OSError as exc:
            raise CommandError(f"cannot read {csv_file}: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise CommandError(f"{csv_file} is not UTF-8 text: {exc}") from exc
        except CoordinatesImportError as exc:
            for line, message in exc.errors:
                self.stderr.write(f"line {line}: {message}")
            raise CommandError(f"{len(exc.errors)} line(s) with errors; nothing was changed") from exc
        self.stdout.write(f"{updated} properties of {org.name} updated")


def _organization(value: str | None) -> Organization:
    if value is None:
        organizations = list(Organization.objects.all()[:2])
        if len(organizations) != 1:
            raise CommandError("say which organization with --organization (its id or name)")
        return organizations[0]
    found = Organization.objects.filter(pk=int(value)) if value.isdigit() else Organization.objects.filter(name=value)
    organization = found.first()
    if organization is None:
        raise CommandError(f"no organization {value!r}")
    return organization
