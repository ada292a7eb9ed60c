"""``manage.py play_demo``: play the demo conversation against a running stack
(``make demo`` starts the stack and runs this)."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from config.bind import local_base_url
from stack.demo import DEMO_WHATSAPP_NUMBER
from stack.demo_conversation import demo_play


class Command(BaseCommand):
    help = "Play the demo conversation through signed webhook requests to a running stack."

    def add_arguments(self, parser):
        parser.add_argument("--url", default=local_base_url(settings.BIND), help="default: BIND's address")

    def handle(self, *args, url, **options):
        try:
            demo_play(server_url=url, org_number=DEMO_WHATSAPP_NUMBER, out=self.stdout.write)
        except OSError as exc:
            raise CommandError(f"could not reach {url}: {exc}") from exc
