"""``manage.py chat --phone +447700900123``: WhatsApp in the terminal.

Each line goes through the running server's real webhook (signed as Twilio
signs it) and the real worker; replies print as they would arrive on the
phone. ``/photo PATH`` sends a photo and ``/voice PATH`` a voice note (an
audio file: OGG, MP3, M4A or AMR); ``/pin LAT,LON [label]`` shares a location;
``/tap N`` taps the Nth button of the latest question; ``--media FILE``
sends a file with the first line. Needs the stack running (``make run``); it talks to it at
``BIND``, where ``make run`` listens, unless ``--url`` says otherwise."""

from __future__ import annotations

import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from config.bind import local_base_url
from conversations.simulator import LineError, TenantPhone, pin_fields, tap_fields
from properties.models import Organization


class Command(BaseCommand):
    help = "Chat with the product as a tenant over a simulated WhatsApp."

    def add_arguments(self, parser):
        parser.add_argument("--phone", required=True, help="the tenant's number, E.164")
        parser.add_argument("--org", default="demo", help="organization slug (default: demo)")
        parser.add_argument(
            "--url",
            default=local_base_url(settings.BIND),
            help="where the stack is running (default: BIND's address, where `make run` listens)",
        )
        parser.add_argument("--media", type=Path, help="a photo to send with the first message")
        parser.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for a reply")

    def handle(self, *args, phone, org, url, media, timeout, **options):
        organization = Organization.objects.filter(slug=org).first()
        if organization is None:
            raise CommandError(f"no organization {org!r}; run `manage.py seed_demo` or pass --org")
        number = organization.whatsapp_numbers.values_list("number", flat=True).first()
        if number is None:
            raise CommandError(f"organization {org!r} has no WhatsApp number")
        if media and not media.is_file():
            raise CommandError(f"--media {media}: no such file")
        if settings.LLM_BACKEND == "scripted":
            self.stdout.write(
                self.style.WARNING(
                    "No ANTHROPIC_API_KEY: replies come from the scripted demo model, which follows a few\n"
                    "keywords only. Set ANTHROPIC_API_KEY (and restart `make run`) for a free conversation.\n"
                )
            )
        self.stdout.write(f"You are {phone}, writing to {organization.name} on {number}. Ctrl-D quits.\n")
        tenant = TenantPhone(phone=phone, to=number, server_url=url)
        pending_media = [media] if media else []
        try:
            for line in sys.stdin if not sys.stdin.isatty() else iter(lambda: input("> "), None):
                line = line.rstrip("\n")
                extra: dict[str, str] = {}
                command, _, argument = line.partition(" ")
                try:
                    if command in ("/photo", "/voice"):
                        attachment = Path(argument.strip()).expanduser()
                        if not attachment.is_file():
                            raise LineError(f"{command} {attachment}: no such file")
                        pending_media.append(attachment)
                        line = ""
                    elif command == "/pin":
                        extra, line = pin_fields(argument), ""
                    elif command == "/tap":
                        line, extra = tap_fields(argument, tenant.latest_choices())
                except LineError as exc:
                    self.stderr.write(f"{exc}; nothing sent")
                    continue
                if not line and not pending_media and not extra:
                    continue
                try:
                    immediate = tenant.send(line, media=pending_media, extra=extra)
                except OSError as exc:
                    raise CommandError(f"could not reach {url}: {exc}. Is `make run` running?") from exc
                pending_media = []
                for text in immediate:
                    self.stdout.write(self.style.ERROR(f"< {text}"))
                for reply in tenant.wait_replies(timeout=timeout):
                    self.stdout.write(self.style.SUCCESS(f"< {reply.body}"))
        except (EOFError, KeyboardInterrupt):
            self.stdout.write("")
        finally:
            tenant.close()
