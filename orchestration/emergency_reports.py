"""What the conversation does around an emergency.

Every emergency (an alert from the keyword rules or the classifier, or the
model's own judgement) is one report with exactly one issue of urgency
``emergency``, linked to its alerts (``EmergencyAlert.issue``):

- the issue is created by code as soon as the property is confirmed: at the
  start of the turn after the alert (``emergency_report_open`` from the
  engine), or after any tool that confirmed the property (from ``tool_apply``).
  No photo, the tenant's words as the description, the category from the
  alert's;
- the model's ``create_issue`` in that report adds to it instead of making a
  second one (``emergency_issue_refine``), and ``escalate`` raises the alert
  the rules missed, with the country's safety text once, without silencing the
  assistant (``emergency_escalate``);
- a dismissed alert turns the report back into a normal one
  (``on_alert_dismissed``, connected to ``emergencies.alerts.alert_dismissed``):
  the issue stays, its urgency drops, its history says why, the landlord's
  stand-down notice names it, and the tenant hears it in their language.

``issues`` and ``emergencies`` do not import each other; this module, above
both, is the only place that links an alert to its issue.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from conversations.models import Conversation, GatheringState, IdentityStatus, Message
from conversations.outbound import outbound_text_queue
from emergencies.alerts import emergency_alert_raise, safety_message_for
from emergencies.models import EmergencyAlert, EmergencyCategory
from issues.deadlines import issue_clocks_sync
from issues.models import Issue, IssueCategory, IssueUpdate
from issues.services import issue_create
from orchestration import services
from orchestration.replies import reply_text

# The issue category each emergency category is filed under.
ISSUE_CATEGORY: dict[str, str] = {
    EmergencyCategory.GAS: IssueCategory.GAS,
    EmergencyCategory.FIRE_SMOKE: IssueCategory.SAFETY,
    EmergencyCategory.CARBON_MONOXIDE: IssueCategory.SAFETY,
    EmergencyCategory.FLOODING: IssueCategory.PLUMBING,
    EmergencyCategory.ELECTRICAL: IssueCategory.ELECTRICAL,
    EmergencyCategory.NO_HEAT_VULNERABLE: IssueCategory.HEATING,
    EmergencyCategory.SECURITY: IssueCategory.SECURITY,
    EmergencyCategory.SEWAGE: IssueCategory.PLUMBING,
    EmergencyCategory.STRUCTURAL: IssueCategory.STRUCTURAL,
}

CONFIRMED = (IdentityStatus.CONFIRMED, IdentityStatus.ACTIVE)
CODE_TITLE_PREFIX = "Emergency ("  # the title of an issue the code filed, until the model summarises it

REPORT_NOTE = (
    "EMERGENCY in progress ({category}): the tenant was sent the safety instructions, the landlord has been "
    "alerted and issue {reference} records it with urgency emergency. Keep answering the tenant's questions "
    "about staying safe, in their language, with respond. Do not ask for a photo. create_issue would only add "
    "details to {reference}; escalate only if a person must call them."
)


def live_alerts(conversation: Conversation) -> QuerySet[EmergencyAlert]:
    """The conversation's alerts that still stand: recent (within the report
    window, ``GATHERING_STALE_HOURS``) and not dismissed by the model check.
    Empty, without a query, when the conversation's latest alert is older."""
    alerted = conversation.emergency_alerted_at
    if alerted is None or alerted < _window_start():
        return EmergencyAlert.objects.none()
    return _alerts_in_window(conversation)


def emergency_filed(conversation: Conversation) -> bool:
    """An emergency stands and an issue was filed for it (at the
    conversation's home, which must not move under it)."""
    return bool(conversation.emergency_category) and live_alerts(conversation).filter(issue__isnull=False).exists()


def _window_start() -> datetime:
    return timezone.now() - timedelta(hours=settings.GATHERING_STALE_HOURS)


def _alerts_in_window(conversation: Conversation) -> QuerySet[EmergencyAlert]:
    return conversation.emergency_alerts.filter(created_at__gte=_window_start()).exclude(
        status=EmergencyAlert.Status.DISMISSED
    )


def emergency_issue_find(*, conversation: Conversation, category: str = "") -> Issue | None:
    """The open emergency issue of the conversation's current emergency (of
    ``category`` when given): the one a live alert is linked to."""
    alerts = live_alerts(conversation).filter(issue__isnull=False)
    if category:
        alerts = alerts.filter(category=category)
    return (
        Issue.objects.filter(
            pk__in=alerts.values("issue_id"), status__in=Issue.OPEN_STATUSES, urgency=Issue.Urgency.EMERGENCY
        )
        .order_by("-created_at")
        .first()
    )


def emergency_report_live(conversation: Conversation) -> bool:
    """Whether the conversation is in an emergency report: an alert stands
    and no other report has started since its issue."""
    return bool(conversation.emergency_category) or _report_issue(conversation) is not None


def _report_issue(conversation: Conversation) -> Issue | None:
    """The emergency issue of the report the conversation is in; no query
    when no report can be open (no alert waiting, no issue just filed)."""
    if not conversation.emergency_category and conversation.gathering_state != GatheringState.ISSUE_CREATED:
        return None
    return emergency_issue_find(conversation=conversation)


def emergency_report_open(*, conversation: Conversation) -> Issue | None:
    """Give every live alert its issue once the property is confirmed: a new
    issue with urgency emergency (or the open issue of the same emergency, to
    which the new words are added). Moves the report to ``issue_created``.
    Returns the issue created now, if one was. Called with the conversation
    row locked."""
    _emergency_report_end_if_new(conversation)
    if not conversation.emergency_category or conversation.property_id is None:
        return None
    if conversation.identity_status not in CONFIRMED:
        return None
    pending = list(live_alerts(conversation).filter(issue__isnull=True).select_related("message").order_by("id"))
    created = None
    for alert in pending:
        issue = emergency_issue_find(conversation=conversation, category=alert.category)
        if issue is None:
            issue = _issue_for(conversation, alert)
            created = issue
        elif alert.message is not None and alert.message.body:
            IssueUpdate.objects.create(
                issue=issue, author=IssueUpdate.Author.TENANT, conversation=conversation, body=alert.message.body
            )
        EmergencyAlert.objects.filter(pk=alert.pk).update(issue=issue)
    if created is not None:
        conversation.gathering_state = GatheringState.ISSUE_CREATED
        conversation.gathering_started_at = timezone.now()  # what the tenant sends next is the next report
        if conversation.identity_status == IdentityStatus.CONFIRMED:
            conversation.identity_status = IdentityStatus.ACTIVE
        conversation.save(update_fields=["gathering_state", "gathering_started_at", "identity_status", "updated_at"])
    return created


def emergency_end_if_over(conversation: Conversation) -> None:
    """The conversation's emergency is over once none of its alerts stands
    (older than the report window, ``GATHERING_STALE_HOURS``, or dismissed) or
    every standing alert's issue is resolved or closed: then it is no longer an
    emergency, and the next report is an ordinary one (not forced to urgency
    emergency, nor alerted again, and photos may be asked for). Called early in
    a turn (after the repair loop's answers, which may reopen an emergency's
    issue), with the conversation row locked."""
    if not conversation.emergency_category:
        return
    # Not through ``live_alerts``, which trusts the conversation's alert stamp: an alert
    # whose stamp is late (the sweeper repairs it) must not end before its issue is filed.
    alerts = _alerts_in_window(conversation)
    standing = (
        alerts.filter(issue__isnull=True).exists()
        or Issue.objects.filter(pk__in=alerts.values("issue_id"), status__in=Issue.OPEN_STATUSES).exists()
    )
    if not standing:
        conversation.emergency_category = ""
        conversation.save(update_fields=["emergency_category", "updated_at"])


def _emergency_report_end_if_new(conversation: Conversation) -> None:
    """A new report started after the emergency's issue was filed (a later
    turn asked about another problem): the conversation is no longer an
    emergency, so that report is neither forced to urgency emergency nor
    added to the emergency's issue."""
    if not conversation.emergency_category or conversation.gathering_state not in (
        GatheringState.GATHERING_DETAILS,
        GatheringState.AWAITING_PHOTO,
    ):
        return
    issue = emergency_issue_find(conversation=conversation)
    started = conversation.gathering_started_at
    if issue is not None and started is not None and issue.created_at < started:
        conversation.emergency_category = ""
        conversation.save(update_fields=["emergency_category", "updated_at"])


def _issue_for(conversation: Conversation, alert: EmergencyAlert) -> Issue:
    words = _tenant_words(conversation, alert)
    label = alert.get_category_display()
    issue, created = issue_create(
        conversation=conversation,
        title=f"{CODE_TITLE_PREFIX}{label.lower()}): {words.splitlines()[0][:140]}"
        if words
        else f"{CODE_TITLE_PREFIX}{label.lower()})",
        description=words or f"{label} reported by the tenant.",
        category=ISSUE_CATEGORY.get(alert.category, IssueCategory.OTHER),
        urgency=Issue.Urgency.EMERGENCY,
        location="",
        photo=Issue.Photo.NOT_NEEDED,
    )
    if not created and issue.urgency != Issue.Urgency.EMERGENCY:  # an open report of the same problem
        IssueUpdate.objects.create(
            issue=issue,
            author=IssueUpdate.Author.SYSTEM,
            body=f"Urgency raised from {issue.urgency} to emergency: {label.lower()} alert.",
        )
        issue.urgency = Issue.Urgency.EMERGENCY
        issue.save(update_fields=["urgency", "updated_at"])
        issue_clocks_sync(issue=issue)  # now the emergency's clocks
    return issue


def _tenant_words(conversation: Conversation, alert: EmergencyAlert) -> str:
    """The tenant's own words for the report: the message that raised the
    alert, or (an alert the model raised) their messages since the report
    started."""
    if alert.message is not None and alert.message.body.strip():
        return alert.message.body.strip()
    since = conversation.gathering_started_at or (timezone.now() - timedelta(hours=settings.GATHERING_STALE_HOURS))
    bodies = (
        conversation.messages.filter(direction=Message.Direction.INBOUND, created_at__gte=since)
        .exclude(body="")
        .order_by("-id")
        .values_list("body", flat=True)[:5]
    )
    return "\n".join(reversed([b.strip() for b in bodies]))


def emergency_issue_refine(*, conversation: Conversation, tool_input: dict[str, Any]) -> Issue | None:
    """``create_issue`` inside an emergency report: the report's issue takes
    the model's details (where, its summary) rather than a second issue being
    made. Returns that issue, or None when the call is not about it."""
    emergency_report_open(conversation=conversation)  # an alert that came in while the model was deciding
    if not conversation.emergency_category and tool_input.get("urgency") != Issue.Urgency.EMERGENCY:
        return None
    issue = emergency_issue_find(conversation=conversation)
    if issue is None:
        return None
    summary = f"{tool_input.get('title', '').strip()}: {tool_input.get('description', '').strip()}".strip(": ")
    findings = str(tool_input.get("photo_findings", "")).strip()
    theirs = issue.conversation_id == conversation.pk or (
        issue.conversation_id is None and issue.tenant_id in (None, conversation.tenant_id)
    )
    if not theirs:
        # Another tenant's issue (a flatmate reported the same emergency first): this
        # tenant's details go in their own update, the issue's fields stay its tenant's.
        details = f"Details: {summary}\n\nSeen in the photos: {findings}" if findings else f"Details: {summary}"
        if (summary or findings) and not issue.updates.filter(conversation=conversation, body=details).exists():
            IssueUpdate.objects.create(
                issue=issue, author=IssueUpdate.Author.SYSTEM, conversation=conversation, body=details
            )
        return issue
    if summary and summary not in issue.description:
        IssueUpdate.objects.create(
            issue=issue, author=IssueUpdate.Author.SYSTEM, conversation=conversation, body=f"Details: {summary}"
        )
    fields = []
    title = str(tool_input.get("title", "")).strip()
    if title and issue.title.startswith(CODE_TITLE_PREFIX):  # the code's stand-in gives way to the model's summary
        issue.title = title[:200]
        fields.append("title")
    location = str(tool_input.get("location", "")).strip()
    if location and not issue.location:
        issue.location = location[:200]
        fields.append("location")
    if findings and findings not in issue.photo_findings:
        issue.photo_findings = f"{issue.photo_findings}\n{findings}".strip()
        fields.append("photo_findings")
    if fields:
        issue.save(update_fields=[*fields, "updated_at"])
    return issue


def emergency_alert_link(*, conversation: Conversation, issue: Issue) -> str:
    """An issue the model created as an emergency: link it to the live
    alerts that have no issue, or, when the rules and the classifier missed
    it, raise the alert (source ``model``) and return the country's safety
    text in the tenant's language for the reply ("" when it was sent)."""
    if issue.urgency != Issue.Urgency.EMERGENCY:  # an open report of the same problem, now an emergency
        IssueUpdate.objects.create(
            issue=issue, author=IssueUpdate.Author.SYSTEM, body=f"Urgency raised from {issue.urgency} to emergency."
        )
        issue.urgency = Issue.Urgency.EMERGENCY
        issue.save(update_fields=["urgency", "updated_at"])
        issue_clocks_sync(issue=issue)  # now the emergency's clocks
    alerts = live_alerts(conversation)
    if alerts.exists():
        alerts.filter(issue__isnull=True).update(issue=issue)
        return ""
    category = emergency_category_for(issue.category)
    safety = safety_message_for(
        organization=conversation.organization, category=category, language=conversation.language or "en"
    )
    alert = emergency_alert_raise(
        conversation=conversation,
        message=None,
        category=category,
        matched_rules=[],
        source="model",
        safety_reply=safety,
    )
    EmergencyAlert.objects.filter(pk=alert.pk).update(issue=issue)
    return safety


# The emergency category an issue the model filed as an emergency is alerted under.
EMERGENCY_CATEGORY: dict[str, str] = {
    IssueCategory.GAS: EmergencyCategory.GAS,
    IssueCategory.PLUMBING: EmergencyCategory.FLOODING,
    IssueCategory.ELECTRICAL: EmergencyCategory.ELECTRICAL,
    IssueCategory.SAFETY: EmergencyCategory.FIRE_SMOKE,
    IssueCategory.SECURITY: EmergencyCategory.SECURITY,
    IssueCategory.STRUCTURAL: EmergencyCategory.STRUCTURAL,
    IssueCategory.HEATING: EmergencyCategory.NO_HEAT_VULNERABLE,
}


def emergency_category_for(issue_category: str) -> str:
    return EMERGENCY_CATEGORY.get(issue_category, EmergencyCategory.STRUCTURAL)


def emergency_escalate(*, conversation: Conversation, reason: str, category: str = "") -> str | None:
    """``escalate`` in an emergency: a person is alerted but the assistant
    keeps answering. With no alert standing, the model's ``category`` raises
    one (source ``model``) and the safety text is returned for the reply (once
    per emergency). The issue follows once the property is confirmed
    (``emergency_report_open``). Returns None when this is no emergency (the
    caller hands over as usual), else the safety text to send ("" if sent)."""
    if not category and not emergency_report_live(conversation):
        return None
    safety = ""
    if not live_alerts(conversation).exists():
        category = category or conversation.emergency_category or EmergencyCategory.STRUCTURAL
        safety = safety_message_for(
            organization=conversation.organization, category=category, language=conversation.language or "en"
        )
        emergency_alert_raise(
            conversation=conversation,
            message=None,
            category=category,
            matched_rules=[],
            source="model",
            safety_reply=safety,
        )
    # The alert told the landlord (its WhatsApp and email): the inbox shows the
    # escalation without a second message.
    services.conversation_escalate(conversation=conversation, reason=reason, pause_bot=False, notify=False)
    return safety


def emergency_report_note(conversation: Conversation) -> str | None:
    """What the model is told while an emergency report is open."""
    issue = _report_issue(conversation)
    if issue is None:
        return None
    category = live_alerts(conversation).filter(issue=issue).values_list("category", flat=True).first()
    return REPORT_NOTE.format(category=category or conversation.emergency_category, reference=issue.reference)


def emergency_reply_complete(*, conversation: Conversation, reply: str) -> str:
    """The tenant hears the emergency issue's reference once: added to the
    turn's reply when no message to them has given it yet."""
    issue = _report_issue(conversation)
    if issue is None or issue.reference in reply:
        return reply
    told = conversation.messages.filter(direction=Message.Direction.OUTBOUND, body__contains=issue.reference).exists()
    if told:
        return reply
    recorded = reply_text(
        "emergency_recorded",
        language=conversation.language,
        organization=conversation.organization.name,
        reference=issue.reference,
    )
    return f"{reply}\n\n{recorded}" if reply else recorded


def on_alert_dismissed(
    sender: Any, alert: EmergencyAlert, tenant_reason: str = "", urgency: str = "urgent", **kwargs: Any
) -> str:
    """The model check dismissed ``alert``: its issue becomes a normal report
    (urgency ``urgency``, the dismissal and its reason in the history) unless
    another live alert still stands on it, and the tenant is told in their
    language that it is not treated as an emergency, and why. Returns the
    line the landlord's stand-down notice adds. Runs in the stand-down's
    transaction."""
    conversation = Conversation.objects.select_related("organization").get(pk=alert.conversation_id)
    issue = Issue.objects.filter(pk=alert.issue_id).first() if alert.issue_id else None
    line = ""
    if issue is not None:
        others = EmergencyAlert.objects.filter(issue=issue).exclude(pk=alert.pk)
        still = others.exclude(status=EmergencyAlert.Status.DISMISSED).exists()
        reason = alert.validation_reasoning or "no reason given"
        if issue.urgency == Issue.Urgency.EMERGENCY and not still:
            new = urgency if urgency in (Issue.Urgency.URGENT, Issue.Urgency.ROUTINE) else Issue.Urgency.URGENT
            issue.urgency = new
            issue.save(update_fields=["urgency", "updated_at"])
            issue_clocks_sync(issue=issue)
            IssueUpdate.objects.create(
                issue=issue,
                author=IssueUpdate.Author.SYSTEM,
                body=f"Emergency alert ({alert.get_category_display().lower()}) dismissed by the assistant's check: "
                f"{reason} Urgency changed from emergency to {new}.",
            )
            line = f"Issue {issue.reference} stays open as a normal report, urgency {new}."
        else:
            IssueUpdate.objects.create(
                issue=issue,
                author=IssueUpdate.Author.SYSTEM,
                body=f"One emergency alert ({alert.get_category_display().lower()}) dismissed by the assistant's "
                f"check: {reason} The issue stays an emergency: another alert on it still stands.",
            )
            return f"Issue {issue.reference} stays an emergency: another alert on it still stands."
    if live_alerts(conversation).exists():  # another emergency of theirs still stands: no "all clear"
        return line
    text = reply_text(
        "emergency_stood_down",
        language=conversation.language,
        reason=tenant_reason or alert.validation_reasoning or "",
    ).strip()
    if issue is not None:
        text += "\n" + reply_text(
            "emergency_stood_down_reference",
            language=conversation.language,
            reference=issue.reference,
            organization=conversation.organization.name,
        )
    outbound_text_queue(conversation=conversation, body=text, author=Message.Author.ASSISTANT, purpose="reply")
    return line
