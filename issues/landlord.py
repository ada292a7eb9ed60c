"""Telling the landlord: the organization's email and WhatsApp contact."""

from __future__ import annotations

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction

from conversations.outbound import outbound_text_queue
from properties.models import Organization

SUBJECT_MAX_CHARS = 150


def email_subject(text: str) -> str:
    """``text`` on one line, cut to ``SUBJECT_MAX_CHARS``. A subject often
    quotes a tenant's or a contractor's words or the model's title, and Django
    refuses to send a subject with a line break (``BadHeaderError``)."""
    line = " ".join(text.split())
    return line if len(line) <= SUBJECT_MAX_CHARS else line[: SUBJECT_MAX_CHARS - 1].rstrip() + "…"


def landlord_tell(*, organization: Organization, subject: str, body: str, whatsapp: str = "") -> None:
    """Email the organization and message its contact number (``whatsapp``,
    else the subject), after commit."""
    if organization.notification_email:
        subject = email_subject(subject)
        # robust: a failed send is logged and the next notice's callback still runs.
        transaction.on_commit(
            lambda: send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [organization.notification_email]),
            robust=True,
        )
    if organization.contact_whatsapp:
        outbound_text_queue(
            organization=organization,
            to=organization.contact_whatsapp,
            body=whatsapp or subject,
            author="system",
            purpose="landlord_alert",
        )
