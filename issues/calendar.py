"""A booked visit as an iCalendar entry (RFC 5545, the ``icalendar``
package): attached to the confirmation emails and served at a signed link
(``issues/views.py``) for WhatsApp, which carries text only."""

from __future__ import annotations

import icalendar
from django.utils import timezone

from issues.models import Appointment

ICS_SALT = "issues.appointment.ics"


def visit_ics(appointment: Appointment) -> bytes:
    job = appointment.job
    issue = job.issue
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//Repairs over WhatsApp//visit//EN")
    calendar.add("version", "2.0")
    calendar.add("method", "PUBLISH")
    event = icalendar.Event()
    event.add("uid", f"appointment-{appointment.pk}@{issue.organization_id}.repairs")
    event.add("dtstamp", timezone.now())
    event.add("dtstart", appointment.starts_at)
    event.add("dtend", appointment.ends_at)
    event.add("summary", f"Repair visit {issue.reference}: {issue.title}")
    event.add("location", ", ".join(p for p in (issue.property.address, issue.property.postcode) if p))
    event.add("description", f"{job.contractor.name} for {issue.organization.name}.")  # not the tenant's words
    if appointment.state == Appointment.State.CANCELLED:
        event.add("status", "CANCELLED")
    calendar.add_component(event)
    return calendar.to_ical()
