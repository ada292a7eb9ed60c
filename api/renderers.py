"""The browsable API without forms.

DRF draws its HTML forms from a view's serializer, here the output
serializers, whose related fields (``organization``, ``property``) offer every
row of the table as a choice: any member would see every organization's name
and every home's address. Without forms the page shows the caller's own
response and nothing else; writes go through JSON or multipart requests, as
the schema at ``/api/docs/`` describes."""

from __future__ import annotations

from typing import Any

from rest_framework.renderers import BrowsableAPIRenderer


class BrowsableAPIWithoutFormsRenderer(BrowsableAPIRenderer):
    def show_form_for_method(self, view: Any, method: str, request: Any, obj: Any) -> bool:
        return False
