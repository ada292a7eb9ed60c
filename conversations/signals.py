"""Hooks other layers attach to without the channel importing them.

``inbound_stored`` is sent inside the webhook request, right after a new
inbound message is stored, and again with ``repeat=True`` when Twilio delivers
the same message again (it did not get our answer, so the TwiML must carry the
same reply). A receiver may return text to put straight into the TwiML reply
(the emergency safety message); it must be fast (no network calls, no model)
and must not act twice for a repeat.
"""

from django.dispatch import Signal

# kwargs: message (conversations.models.Message, with conversation and organization set or None),
# repeat (bool: a repeated delivery of a message stored before)
inbound_stored = Signal()

# kwargs: message_id (int): a voice note of this message was transcribed, in
# the transaction that stored the transcript. The turn engine answers it again
# if its turn had already stopped waiting for it.
transcript_done = Signal()
