"""Data requests: recorded from WhatsApp or by a landlord, decided by a landlord."""

from __future__ import annotations

from typing import IO, Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from conversations.models import Message
from privacy.audit import audit_record
from privacy.erasure import tenant_erase
from privacy.export import tenant_export_build
from privacy.models import AuditEvent, DataRequest, ErasureRecord
from properties.models import Tenant


class DataRequestError(Exception):
    """Why a decision cannot be taken; ``field`` names what it is about (for the API's error body)."""

    def __init__(self, message: str, *, field: str = "tenant") -> None:
        super().__init__(message)
        self.field = field


def data_request_record_whatsapp(*, message: Message, kind: str = DataRequest.Kind.EXPORT) -> DataRequest | None:
    """A pending request of ``kind`` for the tenant behind ``message``. None
    when this message already made one, or one of that kind is still pending
    for the conversation (the detector and the model may both see the ask)."""
    conversation = message.conversation
    organization_id = message.organization_id
    assert conversation is not None and organization_id is not None
    pending = DataRequest.objects.filter(conversation=conversation, kind=kind, status=DataRequest.Status.PENDING)
    if pending.exists():
        return None
    tenant = (
        conversation.tenant or Tenant.objects.filter(organization_id=organization_id, phone=conversation.phone).first()
    )
    try:
        with transaction.atomic():
            request = DataRequest.objects.create(
                organization_id=organization_id,
                tenant=tenant,
                conversation=conversation,
                message=message,
                kind=kind,
                source=DataRequest.Source.WHATSAPP,
            )
    except IntegrityError:
        return None
    audit_record(
        organization_id=request.organization_id,
        actor=None,
        via=AuditEvent.Via.WHATSAPP,
        action=AuditEvent.Action.REQUEST,
        target_type="privacy.datarequest",
        target_id=request.pk,
        label=f"{kind} asked over WhatsApp (conversation {conversation.pk})",
    )
    return request


def _decide(request: DataRequest, *, user: Any, status: str) -> None:
    request.status = status
    request.decided_at = timezone.now()
    request.decided_by = user if user is not None and user.is_authenticated else None
    request.save(update_fields=["status", "decided_at", "decided_by"])


def _check_pending(request: DataRequest) -> None:
    """Lock the request's row and check, on what is stored now, that it still
    waits for a decision: two people deciding at once, or a retried approval,
    decide it once. Call inside the transaction that acts and decides."""
    DataRequest.objects.select_for_update().filter(pk=request.pk).values_list("pk").first()
    request.refresh_from_db(fields=["status", "tenant"])
    if request.status != DataRequest.Status.PENDING:
        raise DataRequestError(
            f"This request was already decided ({request.get_status_display().lower()}).", field="status"
        )


def data_request_export(*, request: DataRequest, user: Any, via: str) -> IO[bytes]:
    """Approve an export request: the ZIP for the landlord to hand over (a file; see ``tenant_export_build``)."""
    if request.kind != DataRequest.Kind.EXPORT:
        raise DataRequestError("This is not an export request.")
    with transaction.atomic():
        _check_pending(request)
        if request.tenant is None:
            raise DataRequestError("Link the request to a tenant first (the number matches no tenant).")
        payload = tenant_export_build(tenant=request.tenant, user=user, via=via)
        _decide(request, user=user, status=DataRequest.Status.DONE)
    return payload


def data_request_erase(*, request: DataRequest, user: Any, via: str) -> ErasureRecord:
    if request.kind != DataRequest.Kind.ERASURE:
        raise DataRequestError("This is not an erasure request.")
    with transaction.atomic():
        _check_pending(request)
        if request.tenant is None:
            raise DataRequestError("Link the request to a tenant first.")
        record = tenant_erase(tenant=request.tenant, user=user, via=via)
        _decide(request, user=user, status=DataRequest.Status.DONE)
    return record


def data_request_reject(*, request: DataRequest, user: Any, via: str) -> None:
    with transaction.atomic():
        _check_pending(request)
        _decide(request, user=user, status=DataRequest.Status.REJECTED)
    audit_record(
        organization_id=request.organization_id,
        actor=user,
        via=via,
        action=AuditEvent.Action.REQUEST,
        target_type="privacy.datarequest",
        target_id=request.pk,
        label=f"{request.kind} request rejected",
    )
