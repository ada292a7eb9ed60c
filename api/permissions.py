"""Who may call the API: an authenticated user who is a member of at least one
organization. What they see is then narrowed to those organizations."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from properties.scoping import user_organization_ids


class IsOrganizationMember(BasePermission):
    message = "Your account is not a member of any organization."

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        return bool(user_organization_ids(user))
