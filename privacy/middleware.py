"""Who looked at a tenant's records, and who made each change.

``AuditMiddleware`` does two things for every request:

* it hands django-auditlog the actor lazily, so a model change made through
  the API is recorded with the token's user (DRF authenticates inside the
  view, after the middleware ran) and one made in the admin with the staff
  user;
* after a successful response it writes an ``AuditEvent`` for the pages and
  endpoints that show or act on one tenant's records: the admin pages of a
  conversation, tenant, issue, message, voice note or photo file, a
  takeover or hand-back, and the API's reads of a tenant, conversation,
  its messages or an issue. Lists are not logged (they show many tenants at
  once; a search is logged by what the landlord opens next).

URL names, not imports, tie it to the other apps' views.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.apps import apps
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.utils.functional import SimpleLazyObject

from privacy.audit import audit_record, organization_id_safe
from privacy.context import via_reset, via_set
from privacy.models import AuditEvent

logger = logging.getLogger(__name__)

# url name -> (model label, action)
ADMIN_PAGES: dict[str, tuple[str, str]] = {
    "admin:conversations_conversation_change": ("conversations.conversation", AuditEvent.Action.VIEW),
    "admin:conversations_conversation_takeover": ("conversations.conversation", AuditEvent.Action.TAKEOVER),
    "admin:conversations_conversation_handback": ("conversations.conversation", AuditEvent.Action.HANDBACK),
    "admin:conversations_conversation_send": ("conversations.conversation", AuditEvent.Action.CHANGE),
    "admin:properties_tenant_change": ("properties.tenant", AuditEvent.Action.VIEW),
    "admin:issues_issue_change": ("issues.issue", AuditEvent.Action.VIEW),
    "admin:conversations_message_change": ("conversations.message", AuditEvent.Action.VIEW),
    "admin:conversations_media_change": ("conversations.media", AuditEvent.Action.VIEW),
    "admin:conversations_media_file": ("conversations.media", AuditEvent.Action.VIEW),
}
API_READS: dict[str, str] = {
    "api:tenant-detail": "properties.tenant",
    "api:conversation-detail": "conversations.conversation",
    "api:conversation-messages": "conversations.conversation",
    "api:issue-detail": "issues.issue",
}
# The admin's POSTs that act rather than show (a takeover answers with a redirect).
# Changelist actions that act on each selected row: (url name, action name) -> (model label, audit action).
ADMIN_LIST_ACTIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("admin:conversations_conversation_changelist", "take_over"): (
        "conversations.conversation",
        AuditEvent.Action.TAKEOVER,
    ),
    ("admin:conversations_conversation_changelist", "hand_back"): (
        "conversations.conversation",
        AuditEvent.Action.HANDBACK,
    ),
}
ADMIN_ACTIONS = {
    "admin:conversations_conversation_takeover",
    "admin:conversations_conversation_handback",
    "admin:conversations_conversation_send",
}


class AuditMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from auditlog.context import set_extra_data

        path = request.path_info
        via = (
            AuditEvent.Via.API
            if path.startswith("/api/")
            else AuditEvent.Via.ADMIN
            if path.startswith("/admin/")
            else AuditEvent.Via.SYSTEM
        )
        token = via_set(via)

        def actor():
            user = getattr(request, "user", None)
            return user if user is not None and user.is_authenticated else None

        try:
            if via == AuditEvent.Via.SYSTEM:
                # Webhooks, /healthz, calendar links: no person acts there, so no actor to
                # hand over (django-auditlog's context connects a signal receiver per request).
                return self.get_response(request)
            with set_extra_data(context_data={"actor": SimpleLazyObject(actor)}):
                response = self.get_response(request)
            try:
                self._record(request, response, via)
            except Exception:  # the audit never breaks the page; it says so in the log
                logger.exception("audit entry for %s not recorded", request.path_info)
        finally:
            via_reset(token)
        return response

    def _record(self, request: HttpRequest, response: HttpResponse, via: str) -> None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return
        name = f"{match.namespace}:{match.url_name}" if match.namespace else (match.url_name or "")
        admin_post = via == AuditEvent.Via.ADMIN and request.method == "POST"
        list_action = (name, request.POST.get("action", "")) if admin_post else None
        if list_action in ADMIN_LIST_ACTIONS and response.status_code in (200, 302):
            self._record_list_action(request, user, via, *ADMIN_LIST_ACTIONS[list_action])
            return
        if via == AuditEvent.Via.ADMIN and name in ADMIN_PAGES:
            label, action = ADMIN_PAGES[name]
            acting = name in ADMIN_ACTIONS
            if acting and not (request.method == "POST" and response.status_code in (200, 302)):
                return
            if not acting and not (request.method == "GET" and response.status_code == 200):
                return
            object_id = match.kwargs.get("object_id")
        elif via == AuditEvent.Via.API and name in API_READS:
            if request.method != "GET" or response.status_code != 200:
                return
            label, action = API_READS[name], AuditEvent.Action.VIEW
            object_id = match.kwargs.get("pk")
        else:
            return
        try:
            pk = int(str(object_id))
        except ValueError:
            return
        obj = apps.get_model(label)._default_manager.filter(pk=pk).first()
        if obj is None:
            return
        organization_id = organization_id_safe(obj)
        if organization_id is None:
            return
        audit_record(organization_id=organization_id, actor=user, via=via, action=action, target=obj)

    @staticmethod
    def _record_list_action(request: HttpRequest, user, via: str, label: str, action: str) -> None:
        """Each selected row the user may see (the admin acted on those only)."""
        from properties.scoping import queryset_for_user

        ids = [int(pk) for pk in request.POST.getlist("_selected_action") if str(pk).isdigit()]
        model = apps.get_model(label)
        for obj in queryset_for_user(model._default_manager.filter(pk__in=ids), user):
            organization_id = organization_id_safe(obj)
            if organization_id is not None:
                audit_record(organization_id=organization_id, actor=user, via=via, action=action, target=obj)
