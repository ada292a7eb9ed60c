"""The audit log: who viewed, exported, took over, erased or changed a
tenant's records, and when.

Two sources, one page for the organization's owners (``AuditEvent``):

* explicit entries written here by ``audit_record`` (views from
  ``privacy.middleware``, exports, erasures, data requests, retention);
* model changes recorded by django-auditlog (its ``LogEntry``, with the
  actor the middleware sets, admin users and API tokens alike), for the
  fields registered in ``AUDITED_FIELDS`` only: states, dates and links,
  never the tenant's words. Each change a person made is mirrored into an ``AuditEvent``
  (a takeover or hand-back when ``bot_paused`` moves), and the ``LogEntry``'s
  ``object_repr`` is rewritten to a label that holds no tenant content (an
  issue's reference, not its title).
"""

from __future__ import annotations

import logging
from typing import Any

from django.apps import apps
from django.db import models
from django.db.models.signals import pre_save

from privacy.context import current_via
from privacy.models import AuditEvent
from properties.scoping import organization_id_of

logger = logging.getLogger(__name__)

# label -> fields whose changes django-auditlog records (their values are not the tenant's words;
# the tenant's phone is masked).
AUDITED_FIELDS: dict[str, list[str]] = {
    "issues.issue": ["status", "urgency", "category", "scheduled_for", "property", "tenant", "tenant_unverified"],
    "conversations.conversation": ["bot_paused", "tenant", "property", "identity_status"],
    "properties.tenant": ["phone"],
    "properties.tenancy": ["tenant", "property", "start_date", "end_date"],
    "properties.membership": ["user", "role"],
    "properties.organization": ["llm_orchestration_enabled", "vision_enabled", "emergency_sensitivity"],
    "privacy.retentionpolicy": ["message_content_months", "media_months"],
}
MASKED_FIELDS: dict[str, list[str]] = {"properties.tenant": ["phone"]}


def target_label(obj: models.Model) -> str:
    """A name for ``obj`` in the log that is never the tenant's words."""
    label = obj._meta.label_lower
    if label == "issues.issue":
        return str(getattr(obj, "reference", ""))
    if label in ("properties.tenant", "conversations.conversation"):
        phone = getattr(obj, "phone", "")
        return f"{obj._meta.verbose_name} {obj.pk} ({mask_phone(phone)})"
    return f"{obj._meta.verbose_name} {obj.pk}"


def mask_phone(value: str) -> str:
    """``+447700900123`` -> ``+44*******123`` (the same shape as the channel's log mask)."""
    number = value.rpartition(":")[2]
    return number[:3] + "*" * max(0, len(number) - 6) + number[-3:] if len(number) > 6 else "***"


def audit_record(
    *,
    organization_id: int,
    actor: Any,
    via: str,
    action: str,
    target: models.Model | None = None,
    target_type: str = "",
    target_id: int | None = None,
    label: str = "",
) -> AuditEvent:
    """Append one entry. ``actor`` is a user (or None for the system)."""
    if target is not None:
        target_type = target._meta.label_lower
        target_id = target.pk
        label = label or target_label(target)
    user = actor if actor is not None and getattr(actor, "is_authenticated", False) else None
    return AuditEvent.objects.create(
        organization_id=organization_id,
        actor=user,
        actor_name=getattr(user, "username", "") if user else "",
        via=via,
        action=action,
        target_type=target_type,
        target_id=target_id,
        label=label[:200],
    )


def auditlog_register() -> None:
    """Register the audited models with django-auditlog (from ``PrivacyConfig.ready``)."""
    from auditlog.receivers import log_update
    from auditlog.registry import auditlog
    from auditlog.signals import post_log

    for label, fields in AUDITED_FIELDS.items():
        model = apps.get_model(label)
        if not auditlog.contains(model):
            auditlog.register(model, include_fields=fields, mask_fields=MASKED_FIELDS.get(label, []))
            # Its update receiver, behind a check that the save can change an audited field.
            if not pre_save.disconnect(sender=model, dispatch_uid=auditlog._dispatch_uid(pre_save, log_update)):
                raise RuntimeError(f"django-auditlog's update receiver for {label} was not found to wrap")
            pre_save.connect(_log_update_if_audited, sender=model, dispatch_uid=f"privacy-audit-update-{label}")
    post_log.connect(on_auditlog_entry, dispatch_uid="privacy-auditlog-mirror")


def _log_update_if_audited(sender, instance, update_fields=None, **kwargs) -> None:
    """django-auditlog reads the old row before every save to compare it; a
    save of fields it does not record (a turn's ``last_turn_at``, the
    tenant's ``language``) cannot make an entry, so it is spared that read.
    Every other save goes to django-auditlog's own receiver."""
    from auditlog.receivers import log_update

    if update_fields is not None:
        meta = sender._meta
        saved = {meta.get_field(name).name for name in update_fields}
        if not saved & set(AUDITED_FIELDS[meta.label_lower]):
            return
    log_update(sender, instance=instance, update_fields=update_fields, **kwargs)


def on_auditlog_entry(sender, instance, action, changes=None, log_entry=None, log_created=False, **kwargs) -> None:
    """Mirror one django-auditlog entry into the organization's audit log and
    rewrite its ``object_repr`` (``str(instance)`` may hold an issue's title)."""
    if log_entry is None or not log_created:
        return
    label = target_label(instance)
    type(log_entry).objects.filter(pk=log_entry.pk).update(object_repr=label)
    try:
        organization_id = organization_id_of(instance)
    except Exception:  # a model outside the scoping table (the retention policy): its own column
        organization_id = getattr(instance, "organization_id", None)
    actor = getattr(log_entry, "actor", None)
    if organization_id is None or actor is None:
        # The product's own changes (the turn engine, tasks) stay in django-auditlog's table;
        # the organization's page lists what people did.
        return
    changes = changes or {}
    verb = {0: "created", 1: "", 2: "deleted"}.get(int(action), "")
    audit_action = AuditEvent.Action.CHANGE
    if instance._meta.label_lower == "conversations.conversation" and "bot_paused" in changes:
        paused = getattr(instance, "bot_paused", False)
        audit_action = AuditEvent.Action.TAKEOVER if paused else AuditEvent.Action.HANDBACK
    summary = "; ".join(f"{field}: {old} -> {new}" for field, (old, new) in _pairs(changes))
    audit_record(
        organization_id=organization_id,
        actor=actor,
        via=_via_now(),
        action=audit_action,
        target_type=instance._meta.label_lower,
        target_id=instance.pk,
        label=f"{label}: {verb + ' ' if verb else ''}{summary}".strip(": "),
    )


def _pairs(changes: dict) -> list[tuple[str, tuple[Any, Any]]]:
    pairs = []
    for field, value in changes.items():
        if isinstance(value, (list, tuple)) and len(value) == 2:
            pairs.append((field, (value[0], value[1])))
        else:
            pairs.append((field, ("", value)))
    return pairs


def _via_now() -> str:
    return current_via()


def organization_id_safe(obj: models.Model) -> int | None:
    try:
        return organization_id_of(obj)
    except Exception:
        logger.exception("no organization for %s", obj._meta.label)
        return None
