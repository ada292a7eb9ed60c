"""The demo conversation ``make demo`` plays against the running stack: signed
webhook requests from three tenants, printed as the phone shows them, then the
issues as the landlord sees them.

With the scripted model each tenant turn queues the tool call a good assistant
would make (the conversation is then the same every time); with Claude the
same messages go in and Claude decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from conversations.simulator import TenantPhone
from issues.models import Issue
from llm.scripted import scripted_clear, scripted_queue

ASSETS = Path(__file__).resolve().parent / "demo_assets"


@dataclass
class Step:
    text: str
    model: list[dict] = field(default_factory=list)  # scripted calls for this turn
    photo: str = ""


@dataclass
class Tenant:
    name: str
    phone: str
    steps: list[Step]


def _call(tool: str, **tool_input) -> dict:
    return {"tool": tool, "input": tool_input}


DEMO: list[Tenant] = [
    Tenant(
        "Amira (Flat 1) reports a leak",
        "+447700900123",
        [
            Step(
                "Hi, there's a leak in my bathroom",
                [
                    _call(
                        "ask_for_details",
                        question="Sorry to hear that! Where is the water coming from: a tap, a "
                        "pipe or the ceiling? And since when?",
                    )
                ],
            ),
            Step(
                # Worded so: "It drips all the time" scores 0.76 flooding, a known false alarm (docs/emergencies.md).
                "Under the bathroom sink, the pipe joint. Since this morning, a drip every few seconds.",
                [
                    _call(
                        "ask_for_photo",
                        message="Thanks, that's clear. Could you send a photo of the pipe under the sink?",
                    )
                ],
            ),
            Step(
                "",
                [
                    _call(
                        "create_issue",
                        title="Leaking pipe under bathroom sink",
                        description="The pipe under the bathroom sink has been dripping constantly since this morning.",
                        category="plumbing",
                        urgency="urgent",
                        location="bathroom, under the sink",
                        photo="provided",
                        message="Thanks for the photo. I've reported this to Demo Lettings as urgent; they'll be in "
                        "touch to arrange a plumber. Put a bowl under the drip in the meantime.",
                    )
                ],
                photo="leaking-pipe.jpg",
            ),
        ],
    ),
    Tenant(
        "Tomasz (7 Orchard Lane) smells gas",
        "+447700900456",
        [
            Step(
                "I can smell gas in the kitchen",
                [
                    _call(
                        "create_issue",
                        title="Smell of gas in the kitchen",
                        description="Tenant reports a smell of gas in the kitchen.",
                        category="gas",
                        urgency="emergency",
                        location="kitchen",
                        photo="not_needed",
                        message="I've raised this as an emergency with Demo Lettings. Please follow the safety "
                        "advice above and stay outside until the gas engineer says it is safe.",
                    )
                ],
            )
        ],
    ),
    Tenant(
        "Priya (7 Orchard Lane) asks about the boiler",
        "+447700900321",
        [
            Step(
                "How do I repressurise the boiler? The pressure is low",
                [_call("search_documents", query="how to repressurise the boiler when the pressure is low")],
            )
        ],
    ),
]


def demo_play(*, server_url: str, org_number: str, out) -> list[Issue]:
    scripted = settings.LLM_BACKEND == "scripted"
    out(
        "Model: scripted (no ANTHROPIC_API_KEY; each reply below is the tool call the script queued)\n"
        if scripted
        else f"Model: Claude ({settings.LLM_MODEL_LARGE} / {settings.LLM_MODEL_SMALL})\n"
    )
    for tenant in DEMO:
        out(f"=== {tenant.name} ({tenant.phone}) ===")
        phone = TenantPhone(phone=tenant.phone, to=org_number, server_url=server_url)
        if scripted:
            scripted_clear(phone=tenant.phone)
        try:
            for step in tenant.steps:
                if scripted:
                    scripted_queue(phone=tenant.phone, calls=step.model)
                media = [ASSETS / step.photo] if step.photo else []
                out(f"  tenant > {step.text or '[photo]'}" + (" [photo]" if step.text and media else ""))
                for text in phone.send(step.text, media=media):
                    out(f"  instant < {text}")
                replies = phone.wait_replies(timeout=120)
                if not replies:
                    out("  (no reply within 120 s: is the worker running?)")
                for reply in replies:
                    out(f"  assistant < {reply.body}")
        finally:
            phone.close()
        out("")
    issues = list(
        Issue.objects.filter(organization__whatsapp_numbers__number=org_number)
        .select_related("property", "tenant")
        .prefetch_related("photos")
        .order_by("-created_at")[:10]
    )
    out("=== Issues as the landlord sees them (admin: /admin/issues/issue/) ===")
    for issue in issues:
        out(
            f"  {issue.reference}  {issue.urgency.upper():9}  {issue.status:12}  {issue.property.code:8}  "
            f"{issue.tenant.name if issue.tenant else '-':14}  {issue.title} ({issue.photos.count()} photo)"
        )
    return issues
