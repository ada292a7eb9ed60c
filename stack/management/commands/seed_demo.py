from django.core.management.base import BaseCommand

from stack.demo import DEMO_LANDLORD_USERNAME, demo_password, demo_seed


class Command(BaseCommand):
    help = (
        "Create the demo organization, properties, tenants and landlord login (idempotent). "
        "The landlord gets a new random password, printed here, unless --fixed-password (the demo's) or --password."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--fixed-password", action="store_true", help="Use the demo's well-known password (make demo only)."
        )
        parser.add_argument("--password", help="Set this password for the demo landlord.")

    def handle(self, *args, **options):
        password = options["password"] or demo_password(fixed=options["fixed_password"])
        organization = demo_seed(landlord_password=password)
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo organization '{organization.slug}' ready: {organization.properties.count()} properties, "
                f"{organization.tenants.count()} tenants. "
                f"Admin login: {DEMO_LANDLORD_USERNAME} / {password}"
            )
        )
