"""What every endpoint's input shares."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.exceptions import ValidationError


class StrictInput(serializers.Serializer):
    """An input that refuses fields it does not know, rather than ignoring a
    misspelt one (``propery=5`` is a 400, not an organization-wide document)."""

    def validate(self, attrs):
        unknown = set(self.initial_data) - set(self.fields)
        if unknown:
            raise ValidationError({name: ["Unknown field."] for name in sorted(unknown)})
        return attrs
