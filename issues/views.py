"""The one public page of the issues app: a booked visit's calendar entry,
at a signed link sent over WhatsApp (``appointments.ics_link``)."""

from __future__ import annotations

import datetime

from django.conf import settings
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone

from issues.calendar import ICS_SALT, visit_ics
from issues.models import Appointment

DAY = datetime.timedelta(days=1)


def appointment_ics(request: HttpRequest, token: str) -> HttpResponse:
    try:
        pk = signing.loads(token, salt=ICS_SALT, max_age=settings.APPOINTMENT_LINK_DAYS * 86400)
    except signing.BadSignature as error:  # SignatureExpired too
        raise Http404("This calendar link is not valid or has expired.") from error
    appointment = (
        Appointment.objects.select_related("job__contractor", "job__issue__property", "job__issue__organization")
        .filter(pk=pk)
        .first()
    )
    # A link stops working a day after the visit, and shows only a booked or cancelled one.
    shown = (Appointment.State.BOOKED, Appointment.State.CANCELLED)
    if appointment is None or appointment.state not in shown or appointment.ends_at < timezone.now() - DAY:
        raise Http404("No such visit.")
    response = HttpResponse(visit_ics(appointment), content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="visit-{appointment.pk}.ics"'
    return response
