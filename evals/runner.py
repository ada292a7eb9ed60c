"""Running a golden scenario through the real product: a fresh organization,
property and tenant, signed webhook requests, the real processing, handlers,
state machine and emergency path; outbound messages captured from the console
sender. Replay mode scripts the model per turn; live mode asks Claude.

The caller provides the database (a pytest test, or ``run_golden``'s
throwaway database); nothing is queued to Celery: the runner runs the
processing itself, in order (the emergency worker's screening of the message,
then the turn), so a scenario's outcome never depends on timing.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import mimetypes
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import date
from decimal import Decimal
from unittest import mock
from xml.etree import ElementTree

from django.conf import settings
from django.core.files.base import ContentFile
from django.db.models import F
from django.test import Client, override_settings

from conversations.delivery import message_send
from conversations.models import Conversation, Media, Message, TranscriptionState
from conversations.testing.signing import WEBHOOK_PATH, inbound_params, twilio_signature
from emergencies.alerts import VALIDATED_SOURCES
from emergencies.models import EmergencyAlert
from emergencies.screening import message_screen
from evals.replay_inputs import replay_script, replay_view_load
from evals.scenarios import MEDIA_DIR, OUTCOMES, Expect, Scenario, Turn
from issues.models import Issue
from llm.scripted import scripted_clear, scripted_queue
from llm.types import LLMError
from orchestration.models import Turn as TurnTrace
from orchestration.pipeline import inbound_process
from orchestration.tool_definitions import tool_input_errors
from properties.models import Organization, Property, Tenancy, Tenant, WhatsAppNumber

AUTH_TOKEN = "golden-scenarios"  # noqa: S105 - signs requests to the runner's own test client
PUBLIC_URL = "https://golden.test"


@dataclass
class TurnResult:
    index: int
    tenant: str
    chosen: list[str]
    final: str | None
    failures: list[str]
    trace: dict
    # Calls gating refused although this turn lists the tool as acceptable: [{"tool", "rejection"}].
    refused: list[dict] = field(default_factory=list)


@dataclass
class ScenarioResult:
    id: str
    title: str
    turns: list[TurnResult] = field(default_factory=list)
    end_failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failures(self) -> list[str]:
        return [f"turn {t.index + 1}: {f}" for t in self.turns for f in t.failures] + self.end_failures

    @property
    def passed(self) -> bool:
        return not self.failures

    def as_dict(self) -> dict:
        return {**asdict(self), "passed": self.passed, "failures": self.failures}


@dataclass
class World:
    organization: Organization
    number: str
    phone: str


def world_create(scenario: Scenario) -> World:
    suffix = uuid.uuid4().hex[:8]
    organization = Organization.objects.create(
        name="Golden Lettings",
        slug=f"golden-{suffix}",
        country="GB",
        notification_email="office@golden.test",
        llm_orchestration_enabled=scenario.llm_enabled,
    )
    number = f"+1415{int(suffix, 16) % 10_000_000:07d}"
    WhatsAppNumber.objects.create(organization=organization, number=number)
    homes = [
        Property.objects.create(
            organization=organization,
            code="FLAT-1",
            address="Flat 1, 12 Harbour Street, Leeds",
            postcode="LS1 4AB",
            latitude=Decimal("53.795980"),
            longitude=Decimal("-1.547040"),
        ),
        Property.objects.create(
            organization=organization,
            code="HOUSE-7",
            address="7 Orchard Lane, Headingley, Leeds",
            postcode="LS6 3HN",
            latitude=Decimal("53.819100"),
            longitude=Decimal("-1.579800"),
        ),
    ]
    phone = f"+447700{int(suffix, 16) % 1_000_000:06d}"
    if scenario.phone_known:
        tenant = Tenant.objects.create(organization=organization, phone=phone, name="Sam Tenant")
        for home in homes[: scenario.properties]:
            Tenancy.objects.create(tenant=tenant, property=home, start_date=date(2026, 1, 1))
        for spec in scenario.open_issues:
            Issue.objects.create(
                organization=organization,
                property=homes[0],
                tenant=tenant,
                reference=f"OPEN-{uuid.uuid4().hex[:6]}",
                title=spec["title"],
                description=spec.get("description", spec["title"]),
                category=spec.get("category", "other"),
                location=spec.get("location", ""),
            )
    if scenario.documents:
        _documents_ingest(organization, scenario.documents)
    return World(organization=organization, number=number, phone=phone)


def _documents_ingest(organization: Organization, names: list[str]) -> None:
    from retrieval.documents import file_text
    from retrieval.services import document_ingest

    folder = settings.BASE_DIR / "retrieval" / "demo_documents"
    for name in names:
        path = folder / name
        document_ingest(
            organization=organization,
            title=path.stem.replace("-", " ").capitalize(),
            source_name=name,
            content=file_text(path),
            embed_now=True,
        )


def _time_travel(organization: Organization, delta) -> None:
    """Move the organization's past back by ``delta``: the same as ``delta``
    passing before the next message."""
    Message.objects.filter(organization=organization).update(created_at=F("created_at") - delta)
    TurnTrace.objects.filter(conversation__organization=organization).update(created_at=F("created_at") - delta)
    Conversation.objects.filter(organization=organization, last_turn_at__isnull=False).update(
        last_turn_at=F("last_turn_at") - delta
    )
    Conversation.objects.filter(organization=organization, last_inbound_at__isnull=False).update(
        last_inbound_at=F("last_inbound_at") - delta
    )
    Conversation.objects.filter(organization=organization, gathering_started_at__isnull=False).update(
        gathering_started_at=F("gathering_started_at") - delta
    )
    Conversation.objects.filter(organization=organization, emergency_alerted_at__isnull=False).update(
        emergency_alerted_at=F("emergency_alerted_at") - delta
    )
    EmergencyAlert.objects.filter(organization=organization).update(created_at=F("created_at") - delta)


def _replay_calls(turn: Turn, conversation: Conversation, message: Message) -> list[dict]:
    """The scripted answers for a replayed turn: the scenario's ``model``
    block, else answers derived from the conversation (``evals.replay_inputs``),
    one per acceptable tool in order, so a refused call is followed by the next."""
    if turn.model:
        return turn.model
    view = replay_view_load(conversation=conversation, messages=[message], emergency_hint=bool(turn.expect.emergency))
    return replay_script(turn.expect.tools, view)


def _expected_refusals(turn: Turn, calls: list[dict], script: list[dict] | None) -> list[dict]:
    """The calls gating refused although the scenario lists the tool as
    acceptable for this turn. In replay only the scripted calls count (the
    scenario's or the derived ones, matched by position, as the scripted
    model plays them in order); live, every call Claude made. A call refused
    for its input's shape (the schema) is not gating's refusal."""
    if script is not None:
        played = [c for c in script if "error" not in c]
        calls = [c for c, s in zip(calls, played, strict=False) if c.get("name") == s.get("tool")]
    return [
        {"tool": c["name"], "rejection": c.get("rejection", "")}
        for c in calls
        if c.get("is_error")
        and c.get("name") in turn.expect.tools
        and not tool_input_errors(c["name"], c.get("input") or {})
    ]


def scenario_run(scenario: Scenario, *, live: bool = False) -> ScenarioResult:
    started = time.monotonic()
    result = ScenarioResult(id=scenario.id, title=scenario.title)
    overrides = {
        "LLM_BACKEND": "anthropic" if live else "scripted",
        "INBOUND_COALESCE_SECONDS": 0,
        "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
        "TWILIO_VALIDATE_SIGNATURE": True,
        "PUBLIC_BASE_URL": PUBLIC_URL,
        "WHATSAPP_SENDER": "console",
    }
    from config.celery import app

    # The runner does the processing itself: nothing goes to a real queue.
    with override_settings(**overrides), mock.patch.object(app, "send_task"):
        world = world_create(scenario)
        client = Client()
        try:
            for index, turn in enumerate(scenario.turns):
                result.turns.append(_turn_run(world, client, scenario, index, turn, live=live))
        finally:
            scripted_clear(phone=world.phone)
        result.end_failures = _end_check(world, scenario)
    result.seconds = round(time.monotonic() - started, 2)
    return result


VOICE = "voice"


def _attachments(turn: Turn) -> list[tuple[str, str | None]]:
    """(content type, what arrives) per attachment: None for media that stay
    pending, a file name from MEDIA_DIR for a photo, VOICE for a voice note."""
    found: list[tuple[str, str | None]] = [(content_type, None) for content_type in turn.media]
    found += [(mimetypes.guess_type(name)[0] or "image/jpeg", name) for name in turn.photos]
    if turn.voice is not None or turn.voice_failed:
        found.append(("audio/ogg", VOICE))
    return found


def _attachments_arrive(message: Message, turn: Turn, attachments: list[tuple[str, str | None]]) -> None:
    """What the media download and transcription workers would have done by
    the time the turn runs: photos stored, the voice note transcribed (or not).
    A transcript is screened for emergencies like typed words."""
    media = {item.index: item for item in message.media.all()}
    for index, (content_type, arrives) in enumerate(attachments):
        item = media.get(index)
        if item is None or arrives is None:
            continue
        if arrives == VOICE:
            item.download_state = Media.DownloadState.DOWNLOADED
            if turn.voice_failed:
                item.transcription_state = TranscriptionState.FAILED
                item.transcription_error = "the scenario's transcriber could not read it"
            else:
                item.transcription_state, item.transcript = TranscriptionState.DONE, turn.voice or ""
            item.save()
            Message.objects.filter(pk=message.pk).update(screened_at=None)  # screened again, on the transcript
            continue
        content = (MEDIA_DIR / arrives).read_bytes()
        item.file.save(arrives, ContentFile(content), save=False)
        item.content_type, item.size = content_type, len(content)
        item.sha256 = hashlib.sha256(content).hexdigest()
        item.download_state = Media.DownloadState.DOWNLOADED
        item.save()


def _turn_run(world: World, client: Client, scenario: Scenario, index: int, turn: Turn, *, live: bool) -> TurnResult:
    if turn.after:
        _time_travel(world.organization, turn.after)
    conversation = Conversation.objects.filter(organization=world.organization, phone=world.phone).first()
    before = {
        "identity": conversation.identity_status if conversation else "unidentified",
        "gathering": conversation.gathering_state if conversation else "idle",
        "turn_id": TurnTrace.objects.order_by("-id").values_list("id", flat=True).first() or 0,
        "outbound_id": Message.objects.filter(direction="outbound").order_by("-id").values_list("id", flat=True).first()
        or 0,
    }
    attachments = _attachments(turn)
    media = [
        (f"https://api.twilio.com/2010-04-01/Accounts/AC0/Messages/MM{index}/Media/ME{n}", content_type)
        for n, (content_type, _) in enumerate(attachments)
    ]
    params = inbound_params(phone=world.phone, to=world.number, body=turn.tenant, media=media, extra=turn.twilio)
    signature = twilio_signature(auth_token=AUTH_TOKEN, url=PUBLIC_URL + WEBHOOK_PATH, params=params)
    response = client.post(WEBHOOK_PATH, params, HTTP_X_TWILIO_SIGNATURE=signature)
    instant = [n.text or "" for n in ElementTree.fromstring(response.content).iter("Message")]  # noqa: S314 - our own TwiML
    message = Message.objects.get(provider_sid=params["MessageSid"])
    _attachments_arrive(message, turn, attachments)
    console = io.StringIO()
    with contextlib.redirect_stdout(console):
        message_screen(message_id=message.pk, stage="worker")  # the emergency worker's part, before the turn
    script = None
    if not live:
        # Derived once the message is stored and the emergency path has run, as the model sees it.
        scripted_clear(phone=world.phone)
        conversation = Conversation.objects.get(organization=world.organization, phone=world.phone)
        script = _replay_calls(turn, conversation, message)
        scripted_queue(phone=world.phone, calls=script)
    inbound_process(message_id=message.pk)
    outbound = list(Message.objects.filter(direction="outbound", id__gt=before["outbound_id"]).order_by("id"))
    with contextlib.redirect_stdout(console):
        for out in outbound:
            message_send(message_id=out.pk)
    alerts = list(
        EmergencyAlert.objects.filter(conversation__organization=world.organization, created_at__gte=message.created_at)
    )
    validation_errors: dict[int, str] = {}
    if live:
        alerts = [_alert_validate(a, validation_errors) if a.source in VALIDATED_SOURCES else a for a in alerts]
    trace_row = (
        TurnTrace.objects.filter(conversation__organization=world.organization, id__gt=before["turn_id"])
        .order_by("id")
        .last()
    )
    conversation = Conversation.objects.get(organization=world.organization, phone=world.phone)
    chosen = [c["name"] for c in (trace_row.tool_calls if trace_row else []) if c.get("name") and not c.get("is_error")]
    final = chosen[-1] if chosen else None
    if trace_row and trace_row.outcome in OUTCOMES:
        final = trace_row.outcome
    replies = instant + [m.body for m in outbound if m.conversation_id == conversation.pk]
    failures = _turn_check(turn, chosen, final, conversation, alerts, replies, live=live)
    refused = _expected_refusals(turn, trace_row.tool_calls if trace_row else [], script)
    trace = {
        "scenario": scenario.id,
        "turn": index + 1,
        "tenant": turn.tenant,
        "media": turn.media,
        "identity": [before["identity"], conversation.identity_status],
        "gathering": [before["gathering"], conversation.gathering_state],
        "tools_offered": trace_row.tools_offered if trace_row else [],
        "tool_calls": trace_row.tool_calls if trace_row else [],
        "gating_rejections": trace_row.gating_rejections if trace_row else 0,
        "expected_refused": refused,
        "script": script,
        "retrieval_hits": trace_row.retrieval_hits if trace_row else [],
        "emergency": [
            {
                "category": a.category,
                "source": a.source,
                "rules": a.matched_rules,
                "status": a.status,
                "reasoning": a.validation_reasoning,
                "validation_error": validation_errors.get(a.pk, ""),
            }
            for a in alerts
        ],
        "model": trace_row.model if trace_row else "",
        "outcome": trace_row.outcome if trace_row else "no turn",
        "latency_ms": {
            "total": trace_row.latency_total_ms,
            "model": trace_row.latency_model_ms,
            "retrieval": trace_row.latency_retrieval_ms,
        }
        if trace_row
        else {},
        "tokens": {
            "input": trace_row.input_tokens,
            "output": trace_row.output_tokens,
            "cache_read": trace_row.cache_read_tokens,
            "cache_write": trace_row.cache_write_tokens,
        }
        if trace_row
        else {},
        "cost_usd": float(trace_row.cost_usd) if trace_row else 0.0,
        "instant_replies": instant,
        "outbound": [m.body for m in outbound],
        "sender_output": console.getvalue(),
        "expected": asdict(turn.expect),
        "failures": failures,
    }
    return TurnResult(
        index=index, tenant=turn.tenant, chosen=chosen, final=final, failures=failures, trace=trace, refused=refused
    )


def _alert_validate(alert: EmergencyAlert, errors: dict[int, str]) -> EmergencyAlert:
    """The model check of an alert, as the validation task runs it. A
    failed call is what the product does with it (the alert stays an
    emergency) and is recorded in the trace; it never ends the whole run."""
    from emergencies.validation import emergency_validate, emergency_validation_failed

    try:
        return emergency_validate(alert_id=alert.pk)
    except LLMError as exc:
        errors[alert.pk] = f"validation failed: {exc}"
        return emergency_validation_failed(alert_id=alert.pk, reason=errors[alert.pk])


def tool_accepted(expect: Expect, chosen: list[str], final: str | None) -> bool:
    """Did the turn end with a tool the scenario accepts? After confirm_property
    the model is asked again in the same turn and goes on with the report: a
    turn that expected the confirmation has it."""
    finals = {final} | ({"confirm_property"} & set(chosen))
    return not expect.tools or bool(finals & set(expect.tools))


def _turn_check(turn: Turn, chosen, final, conversation, alerts, replies, *, live: bool) -> list[str]:
    e = turn.expect
    failures = []
    if not tool_accepted(e, chosen, final):
        failures.append(f"expected one of {e.tools}, the model chose {final or 'nothing'} (calls: {chosen})")
    wrong = [t for t in [*chosen, final] if t and t in e.not_tools]
    if wrong:
        failures.append(f"chose {sorted(set(wrong))}, which this turn must not")
    if e.gathering_state_after and conversation.gathering_state != e.gathering_state_after:
        failures.append(f"gathering_state is {conversation.gathering_state}, expected {e.gathering_state_after}")
    if e.identity_status_after and conversation.identity_status != e.identity_status_after:
        failures.append(f"identity_status is {conversation.identity_status}, expected {e.identity_status_after}")
    if e.emergency is not None and bool(alerts) != e.emergency:
        failures.append(
            f"emergency alert {'raised' if alerts else 'not raised'}, expected {'one' if e.emergency else 'none'}"
        )
    if e.emergency_verdict and live:
        failures += _verdict_check(e.emergency_verdict, alerts)
    text = "\n".join(replies).lower()
    for needle in e.reply_contains:
        if needle.lower() not in text:
            failures.append(f"no reply contains {needle!r}")
    return failures


def _verdict_check(verdict: str, alerts: list[EmergencyAlert]) -> list[str]:
    """What the model check decided, where it ran (live mode). An alert it
    should have checked and did not is a failure, and so is a real emergency
    with no alert at all; one the turn's model raised itself is its own
    confirmation. A tempting message that raised no alert had nothing to dismiss."""
    checkable = [a for a in alerts if a.source in VALIDATED_SOURCES]
    checked = [a for a in checkable if a.status != "pending"]
    if len(checked) < len(checkable):
        return [f"{len(checkable) - len(checked)} alert(s) were never checked by the model, expected {verdict}"]
    if verdict == "confirmed" and not alerts:
        return ["no alert for the model check to confirm"]
    decided = sorted({a.status for a in checked} - {verdict})
    return [f"the model check of the alert ended {decided}, expected {verdict}"] if decided else []


def _end_check(world: World, scenario: Scenario) -> list[str]:
    end = scenario.end
    failures = []
    conversation = Conversation.objects.filter(organization=world.organization, phone=world.phone).first()
    if "issues_created" in end:
        count = Issue.objects.filter(organization=world.organization, conversation__isnull=False).count()
        if count != end["issues_created"]:
            failures.append(f"end: {count} issue(s) created, expected {end['issues_created']}")
    if "escalated" in end:
        escalated = bool(conversation and conversation.escalated_at)
        if escalated != end["escalated"]:
            failures.append(f"end: escalated is {escalated}, expected {end['escalated']}")
    if "emergency_alert" in end:
        raised = EmergencyAlert.objects.filter(organization=world.organization).exists()
        if raised != end["emergency_alert"]:
            failures.append(
                f"end: emergency alert {'raised' if raised else 'not raised'}, expected {end['emergency_alert']}"
            )
    return failures
