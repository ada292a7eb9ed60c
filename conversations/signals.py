"""Hooks other layers attach to without the channel importing them.

``inbound_stored`` is sent inside the webhook request, right after a new
inbound message is stored (never for a repeated delivery). A receiver may
return text to put straight into the TwiML reply (the emergency safety
message); it must be fast: no network calls, no model.
"""

from django.dispatch import Signal

# kwargs: message (conversations.models.Message, with conversation and organization set or None)
inbound_stored = Signal()
