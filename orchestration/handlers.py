"""One handler per tool.

Most tools end the turn: ``tool_apply`` applies an allowed call's side effects
through the services, moves the states along the table in ``gating`` and
returns the text the tenant reads. It is called inside the transaction that
holds the conversation row lock.

A lookup (``search_documents``) feeds the model instead: ``tool_lookup`` reads,
writes nothing and returns what the model reads before it calls again. It runs
while the model is deciding, outside any transaction."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from conversations.models import Conversation, GatheringState
from issues.models import Issue
from issues.services import issue_create
from orchestration import emergency_reports, services
from orchestration.gating import gathering_after, identity_after
from orchestration.knowledge import knowledge_lookup
from orchestration.replies import reply_text
from orchestration.signals import data_request_asked
from properties.address_match import building_label
from properties.selectors import tenancies_current


@dataclass
class Applied:
    reply: str
    result: str  # what the trace records as the tool's result
    issue: Issue | None = None
    # The reply's opening when the turn goes on with another call (after
    # confirm_property the model carries on with the tenant's report).
    lead: str = ""


@dataclass
class Found:
    text: str  # what the model reads as the tool's result
    hits: list[dict[str, Any]]  # the passages, for the trace
    elapsed_ms: int

    @property
    def result(self) -> str:  # what the trace records as the tool's result
        if self.hits and not self.hits[0].get("answers", True):
            return f"no passage answers ({len(self.hits)} below the threshold)"
        return f"{len(self.hits)} passages"


# What a call moves on the conversation; tool_apply saves those that moved.
_STATE_FIELDS = ("identity_status", "gathering_state", "gathering_started_at")


def tool_apply(
    *,
    conversation: Conversation,
    name: str,
    tool_input: dict[str, Any],
    first_message_at: datetime | None = None,
    last_message_at: datetime | None = None,
) -> Applied:
    """Apply an allowed call. ``first_message_at`` / ``last_message_at`` are
    the arrival times of the turn's messages: a new report starts with the
    first (so a photo sent with it counts), and once an issue is created or
    the report is closed the next report starts after the last (its photos
    are the issue's, or dropped with the closed report)."""
    before = conversation.gathering_state
    at_start = {field: getattr(conversation, field) for field in _STATE_FIELDS}
    applied, outcome = HANDLERS[name](conversation, tool_input)
    conversation.identity_status = identity_after(name, outcome, conversation.identity_status)
    if not (name == "ask_for_details" and _about_this_turns_emergency(conversation, before, first_message_at)):
        conversation.gathering_state = gathering_after(name, before)
    if conversation.gathering_state in (GatheringState.GATHERING_DETAILS, GatheringState.AWAITING_PHOTO) and before in (
        GatheringState.IDLE,
        GatheringState.ISSUE_CREATED,
    ):
        start = first_message_at or timezone.now()
        closed = conversation.gathering_started_at  # in idle: just after the report the tenant dropped, if any
        if before == GatheringState.IDLE and closed is not None and closed < start:
            start = closed  # what the tenant sent since the close (a photo, the problem) is this report's
        conversation.gathering_started_at = start
    elif name == "create_issue":
        conversation.gathering_started_at = last_message_at or timezone.now()
    elif name == "close_report":
        # Strictly after this turn's messages: a photo sent with "it's sorted" goes with the closed report.
        conversation.gathering_started_at = (
            last_message_at + timedelta(microseconds=1) if last_message_at else timezone.now()
        )
    # Only what moved: most calls (a question, an answer) move nothing, and a save
    # that names identity_status makes the audit log read the row first.
    moved = [field for field in _STATE_FIELDS if getattr(conversation, field) != at_start[field]]
    if moved:
        conversation.save(update_fields=[*moved, "updated_at"])
    # An emergency gets its issue as soon as the property is confirmed (this
    # call may have confirmed it), and the tenant hears its reference once.
    applied.issue = emergency_reports.emergency_report_open(conversation=conversation) or applied.issue
    applied.reply = emergency_reports.emergency_reply_complete(conversation=conversation, reply=applied.reply)
    return applied


def _about_this_turns_emergency(conversation: Conversation, before: str, first_message_at: datetime | None) -> bool:
    """A question in the turn whose message raised the emergency ("is anyone
    hurt?") is about it: its issue, filed by the code at the turn's start,
    stays the report. In a later turn a question starts a new report."""
    if before != GatheringState.ISSUE_CREATED or first_message_at is None:
        return False
    issue = emergency_reports.emergency_issue_find(conversation=conversation)
    return issue is not None and issue.created_at >= first_message_at


def _ask_for_details(conversation: Conversation, tool_input: dict[str, Any]) -> tuple[Applied, str]:
    return Applied(reply=tool_input["question"], result="question sent"), "ok"


def _ask_for_photo(conversation: Conversation, tool_input: dict[str, Any]) -> tuple[Applied, str]:
    where = " | ".join(tool_input[key] for key in ("problem", "location") if tool_input.get(key))
    return Applied(
        reply=tool_input["message"], result=f"photo requested ({where})" if where else "photo requested"
    ), "ok"


def _close_report(conversation: Conversation, tool_input: dict[str, Any]) -> tuple[Applied, str]:
    """The tenant dropped the report (it went away, was sorted, they changed
    their mind): no issue. The reason stays in the Turn's trace."""
    return Applied(reply=tool_input["message"], result=f"report closed without an issue: {tool_input['reason']}"), "ok"


def _respond(conversation: Conversation, tool_input: dict[str, Any]) -> tuple[Applied, str]:
    return Applied(reply=tool_input["message"], result="sent"), "ok"


def _data_request(conversation: Conversation, tool_input: dict[str, Any]) -> tuple[Applied, str]:
    """Recorded for the landlord by whoever listens (``privacy``); the report
    in progress, if any, goes on where it was."""
    data_request_asked.send(sender=Conversation, conversation=conversation, kind=tool_input["kind"])
    return Applied(reply=tool_input["message"], result=f"{tool_input['kind']} request passed to the agency"), "ok"


def _escalate(conversation: Conversation, tool_input: dict[str, Any]) -> tuple[Applied, str]:
    """In an emergency (an alert stands, or the model names the category) a
    person is alerted and the assistant keeps answering; otherwise the
    assistant hands over and stays silent until a person hands back."""
    safety = emergency_reports.emergency_escalate(
        conversation=conversation, reason=tool_input["reason"], category=tool_input.get("emergency_category", "")
    )
    if safety is not None:
        reply = f"{safety}\n\n{tool_input['message']}" if safety else tool_input["message"]
        return Applied(reply=reply, result="emergency escalated; the assistant stays on"), "ok"
    services.conversation_escalate(conversation=conversation, reason=tool_input["reason"])
    return Applied(reply=tool_input["message"], result="escalated to the landlord"), "ok"


def _find_property(conversation: Conversation, tool_input: dict[str, Any]) -> tuple[Applied, str]:
    match = services.conversation_property_propose(conversation=conversation, address=tool_input["address"])
    if match.ambiguous:  # never a guess between homes: ask for what tells them apart
        codes = ", ".join(p.code for p in match.candidates)
        if match.same_building:
            building = building_label(match.candidates[0].address)
            reply = reply_text("property_which_flat", language=conversation.language, building=building)
        else:
            reply = reply_text("property_which", language=conversation.language)
        return Applied(reply=reply, result=f"several properties matched ({codes}): asked which"), "no_match"
    if match.property is None:
        reply = reply_text("property_not_found", language=conversation.language)
        return Applied(reply=reply, result="no property matched"), "no_match"
    prop = match.property
    reply = reply_text(
        "property_candidate", language=conversation.language, address=prop.address, postcode=prop.postcode
    )
    return Applied(reply=reply, result=f"candidate {prop.code}"), "match"


def _confirm_property(conversation: Conversation, tool_input: dict[str, Any]) -> tuple[Applied, str]:
    if not tool_input["confirmed"]:
        services.conversation_property_reject(conversation=conversation)
        if conversation.tenant is not None and tenancies_current(tenant=conversation.tenant):
            # Not that one of their homes: they stay who they are and choose among the others
            # (the turn asks which, with buttons); asking for an address would lead nowhere.
            reply = reply_text("property_rejected_own", language=conversation.language)
            return Applied(reply=reply, result="candidate rejected: asked which of their homes"), "rejected_own"
        reply = reply_text("property_rejected", language=conversation.language)
        return Applied(reply=reply, result="candidate rejected"), "rejected"
    prop = services.conversation_property_confirm(
        conversation=conversation, property_code=tool_input.get("property_code", "")
    )
    reply = reply_text("property_confirmed", language=conversation.language, address=prop.address)
    lead = reply_text("property_confirmed_lead", language=conversation.language, address=prop.address)
    return Applied(reply=reply, result=f"property {prop.code} confirmed", lead=lead), "confirmed"


def _create_issue(conversation: Conversation, tool_input: dict[str, Any]) -> tuple[Applied, str]:
    report = emergency_reports.emergency_issue_refine(conversation=conversation, tool_input=tool_input)
    if report is not None:  # the emergency's issue exists: never a second one
        conversation.emergency_category = ""
        conversation.save(update_fields=["emergency_category", "updated_at"])
        reply = tool_input["message"]
        if report.reference not in reply:
            reply = (
                f"{reply}\n{reply_text('issue_reference', language=conversation.language, reference=report.reference)}"
            )
        return Applied(reply=reply, result=f"emergency issue {report.reference} updated", issue=report), "ok"
    urgency = "emergency" if conversation.emergency_category else tool_input["urgency"]
    issue, created = issue_create(
        conversation=conversation,
        title=tool_input["title"],
        description=tool_input["description"],
        category=tool_input["category"],
        urgency=urgency,
        location=tool_input["location"],
        photo=tool_input["photo"],
        photo_findings=tool_input.get("photo_findings", ""),
    )
    safety = _emergency_alert_ensure(conversation, issue) if urgency == "emergency" else ""
    conversation.emergency_category = ""
    conversation.save(update_fields=["emergency_category", "updated_at"])
    if created:
        reply = tool_input["message"]
        if issue.reference not in reply:
            reply = (
                f"{reply}\n{reply_text('issue_reference', language=conversation.language, reference=issue.reference)}"
            )
        if safety:
            reply = f"{safety}\n\n{reply}"
        return Applied(reply=reply, result=f"issue {issue.reference} created", issue=issue), "ok"
    reply = reply_text("issue_duplicate", language=conversation.language, reference=issue.reference, title=issue.title)
    if safety:  # an emergency joined an open report of the same problem: the advice goes all the same
        reply = f"{safety}\n\n{reply}"
    return Applied(reply=reply, result=f"added to open issue {issue.reference}", issue=issue), "ok"


def _emergency_alert_ensure(conversation: Conversation, issue: Issue) -> str:
    """An emergency issue is linked to its alert. One the rules and the
    classifier missed still alerts the landlord, and the tenant gets the
    safety advice they would have sent. Returns that advice ("" when it was
    already sent)."""
    return emergency_reports.emergency_alert_link(conversation=conversation, issue=issue)


def _emergency_category_for(issue_category: str) -> str:
    return emergency_reports.emergency_category_for(issue_category)


# A handler returns what the turn applied and the outcome that moves the
# identity state along (gating.IDENTITY_TRANSITIONS).
Handler = Callable[[Conversation, dict[str, Any]], tuple[Applied, str]]

HANDLERS: dict[str, Handler] = {
    "ask_for_details": _ask_for_details,
    "ask_for_photo": _ask_for_photo,
    "close_report": _close_report,
    "respond": _respond,
    "data_request": _data_request,
    "escalate": _escalate,
    "find_property": _find_property,
    "confirm_property": _confirm_property,
    "create_issue": _create_issue,
}


def tool_lookup(*, conversation: Conversation, name: str, tool_input: dict[str, Any]) -> Found:
    """Run an allowed lookup call (a tool in ``LOOKUPS``)."""
    return LOOKUPS[name](conversation, tool_input)


def _search_documents(conversation: Conversation, tool_input: dict[str, Any]) -> Found:
    text, hits, elapsed = knowledge_lookup(conversation=conversation, query=tool_input["query"])
    return Found(text=text, hits=hits, elapsed_ms=elapsed)


# Tools that feed the model and let it call again; every other tool is in HANDLERS.
LOOKUPS: dict[str, Callable[[Conversation, dict[str, Any]], Found]] = {
    "search_documents": _search_documents,
}
