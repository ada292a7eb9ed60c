"""What the turn engine tells the layers above it, without importing them.

``data_request_asked``: the model judged that the tenant asks for a copy of
their data or for its erasure (the ``data_request`` tool). Sent inside the
transaction that applies the turn, with ``conversation`` and ``kind``
("export" or "erasure"); ``privacy`` records the request for the landlord.
"""

from __future__ import annotations

from django.dispatch import Signal

data_request_asked = Signal()
