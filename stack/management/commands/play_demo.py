"""``manage.py play_demo``: play the demo conversation against a running stack
(``make demo`` starts the stack and runs this)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from stack.demo import DEMO_WHATSAPP_NUMBER
from stack.demo_conversation import demo_play


class Command(BaseCommand):
    help = "Play the demo conversation through signed webhook requests to a running stack."

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000")

    def handle(self, *args, url, **options):
        try:
            demo_play(server_url=url, org_number=DEMO_WHATSAPP_NUMBER, out=self.stdout.write)
        except OSError as exc:
            raise CommandError(f"could not reach {url}: {exc}") from exc
