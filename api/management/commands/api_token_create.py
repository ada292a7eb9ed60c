"""``manage.py api_token_create <username> [--rotate]``: print the user's API token."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from rest_framework.authtoken.models import Token

from properties.scoping import user_organization_ids


class Command(BaseCommand):
    help = "Create (or show, or with --rotate replace) the REST API token of a user who belongs to an organization."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--rotate", action="store_true", help="Delete the existing token and make a new one.")

    def handle(self, *args, username: str, rotate: bool, **options):
        user_model = get_user_model()
        try:
            user = user_model.objects.get(username=username)
        except user_model.DoesNotExist:
            raise CommandError(f"No user called {username!r}.") from None
        if not user.is_active:
            raise CommandError(f"{username} is not active; a token would not authenticate.")
        if not user_organization_ids(user):
            raise CommandError(
                f"{username} is not a member of any organization, so the API would show them nothing. "
                "Add a Membership in the admin first."
            )
        if rotate:
            Token.objects.filter(user=user).delete()
        token, created = Token.objects.get_or_create(user=user)
        state = "created" if created else "existing"
        self.stderr.write(f"{state} token for {username} (use: Authorization: Token <key>)")
        self.stdout.write(token.key)
