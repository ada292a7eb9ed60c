from django.core.management.base import BaseCommand

from stack.demo import DEMO_LANDLORD_PASSWORD, DEMO_LANDLORD_USERNAME, demo_seed


class Command(BaseCommand):
    help = "Create the demo organization, properties, tenants and landlord login (idempotent)."

    def handle(self, *args, **options):
        organization = demo_seed()
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo organization '{organization.slug}' ready: {organization.properties.count()} properties, "
                f"{organization.tenants.count()} tenants. "
                f"Admin login: {DEMO_LANDLORD_USERNAME} / {DEMO_LANDLORD_PASSWORD}"
            )
        )
