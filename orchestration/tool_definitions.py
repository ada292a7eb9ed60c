"""The tools the model may call: the model's only way to act.

The list is identical on every call (same order, same text) so Anthropic's
prompt cache serves it; ``cache_control`` on the last tool caches the whole
list, and the system prompt carries its own breakpoint.
"""

from __future__ import annotations

from emergencies.models import EMERGENCY_CATEGORIES
from issues.models import IssueCategory

CATEGORIES = [c.value for c in IssueCategory]

TOOLS: list[dict] = [
    {
        "name": "find_property",
        "description": (
            "The tenant's phone number is not linked to a property: look up the address or postcode the tenant "
            "gave. Use it only when identity_status is unidentified and the tenant has sent an address or postcode."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "address": {"type": "string", "description": "The address or postcode as the tenant wrote it."}
            },
            "required": ["address"],
            "additionalProperties": False,
        },
    },
    {
        "name": "confirm_property",
        "description": (
            "Record which property the tenant lives in once they have confirmed it: the candidate property they "
            "said yes to, or the code of one of their current tenancies when they rent several (also later, "
            "when they say a problem is at another of their homes than the one confirmed). "
            "confirmed=false when they said the candidate is wrong."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "confirmed": {"type": "boolean"},
                "property_code": {"type": "string", "description": "Code of the property, from the context."},
            },
            "required": ["confirmed"],
            "additionalProperties": False,
        },
    },
    {
        "name": "ask_for_details",
        "description": (
            "The tenant mentioned a problem but a contractor would still need specifics: what exactly, where in the "
            "property, since when, how bad (error codes, which tap, ceiling or pipe). Ask one short question. "
            "An appliance or fixture ('boiler', 'tap') is not a location."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"question": {"type": "string"}},
            "required": ["question"],
            "additionalProperties": False,
        },
    },
    {
        "name": "ask_for_photo",
        "description": (
            "Ask for a photo. Only once what the problem is and where it is are both clear. Never in an emergency. "
            "When the tenant's first message already says both (e.g. 'the kitchen tap drips all the time'), ask "
            "for the photo straight away and fill in problem and location."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "problem": {"type": "string", "description": "What is wrong, in a few words: 'cold tap drips'."},
                "location": {
                    "type": "string",
                    "description": "The room or part of the building the tenant named, e.g. 'kitchen'. An "
                    "appliance or fixture (boiler, tap) is not a location.",
                },
            },
            "required": ["message"],
            "additionalProperties": False,
        },
    },
    {
        "name": "close_report",
        "description": (
            "The tenant says the problem has gone away, was sorted, or they no longer want to report it: drop the "
            "report in progress without an issue. 'reason' is for the agency's records; 'message' is what the "
            "tenant reads."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"reason": {"type": "string"}, "message": {"type": "string"}},
            "required": ["reason", "message"],
            "additionalProperties": False,
        },
    },
    {
        "name": "data_request",
        "description": (
            "The tenant asks for a copy of the personal data the agency holds about them (their messages, photos, "
            "records: a subject access request), or asks for it to be deleted. This records the request for the "
            "agency, who decide and reply; nothing is sent or deleted automatically. 'message' tells the tenant "
            "that the agency has their request and will come back to them. Not for a question about a repair."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["export", "erasure"]},
                "message": {"type": "string"},
            },
            "required": ["kind", "message"],
            "additionalProperties": False,
        },
    },
    {
        "name": "create_issue",
        "description": (
            "Create the repair issue once the description and location are clear and a photo was provided or "
            "declined (or is not needed: emergencies). Needs a confirmed identity. 'message' is what the tenant reads. "
            "If you were shown the tenant's photos, say what they show in photo_findings. A hazard you see in a "
            "photo (water near electrics, scorch marks, soot around a boiler, a fallen ceiling) makes it urgency "
            "emergency: the landlord is alerted and the safety advice added to your message."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "Short, e.g. 'Leaking kitchen tap'."},
                "description": {"type": "string"},
                "category": {"type": "string", "enum": CATEGORIES},
                "urgency": {"type": "string", "enum": ["emergency", "urgent", "routine"]},
                "location": {"type": "string", "description": "Where in the property, e.g. 'bathroom ceiling'."},
                "photo": {"type": "string", "enum": ["provided", "declined", "not_needed"]},
                "photo_findings": {
                    "type": "string",
                    "description": "What you saw in the tenant's photos that a contractor needs (what is damaged, "
                    "how badly, any hazard), in English, one or two sentences. Only from photos you were shown.",
                },
                "message": {"type": "string"},
            },
            "required": ["title", "description", "category", "urgency", "location", "photo", "message"],
            "additionalProperties": False,
        },
    },
    {
        "name": "search_documents",
        "description": (
            "Search the landlord's documents for this property (manuals, house guide, policies) before answering a "
            "question. Write the query in English, self-contained, whatever language the tenant uses."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    {
        "name": "respond",
        "description": (
            "Reply without changing the report: greetings, thanks, 'I'll send it later', questions about identity, "
            "or an answer from the documents found with search_documents (never invent instructions)."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
            "additionalProperties": False,
        },
    },
    {
        "name": "escalate",
        "description": (
            "Hand the conversation to a person at the landlord's office: the tenant is frustrated, asks for a "
            "human, or the matter is too complex or not a repair. You then stay silent until a person hands it "
            "back. In an emergency (the context says so, or you recognise one: set emergency_category) a person "
            "is alerted but you keep answering the tenant's safety questions; the emergency issue is recorded "
            "for you."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "reason": {"type": "string"},
                "message": {
                    "type": "string",
                    "description": "What the tenant reads: that a person from the agency will reply to them here.",
                },
                "emergency_category": {
                    "type": "string",
                    "enum": EMERGENCY_CATEGORIES,
                    "description": "Only for an emergency the context does not already report.",
                },
            },
            "required": ["reason", "message"],
            "additionalProperties": False,
        },
    },
]
TOOLS[-1] = {**TOOLS[-1], "cache_control": {"type": "ephemeral"}}

TOOL_NAMES = [tool["name"] for tool in TOOLS]
SCHEMAS = {tool["name"]: tool["input_schema"] for tool in TOOLS}
# Tools that end the turn (search_documents feeds the model and goes round again).
TERMINAL_TOOLS = set(TOOL_NAMES) - {"search_documents"}


def tool_input_errors(name: str, tool_input: dict) -> list[str]:
    """Validate against the strict schema: required keys, no extra keys,
    types and enums. Returns readable errors (empty when valid)."""
    schema = SCHEMAS.get(name)
    if schema is None:
        return [f"unknown tool {name!r}"]
    if not isinstance(tool_input, dict):
        return ["input must be an object"]
    errors = [f"missing {key!r}" for key in schema["required"] if key not in tool_input]
    errors += [f"unexpected {key!r}" for key in tool_input if key not in schema["properties"]]
    types = {"string": str, "boolean": bool}
    for key, value in tool_input.items():
        spec = schema["properties"].get(key)
        if spec is None:
            continue
        if not isinstance(value, types[spec["type"]]):
            errors.append(f"{key!r} must be a {spec['type']}")
        elif "enum" in spec and value not in spec["enum"]:
            errors.append(f"{key!r} must be one of {', '.join(spec['enum'])}")
        elif isinstance(value, str) and key in schema["required"] and not value.strip():
            errors.append(f"{key!r} must not be empty")
    return errors
