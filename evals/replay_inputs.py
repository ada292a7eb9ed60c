"""What a model would pass to a tool, derived from the conversation, for
replaying a scenario turn that has no ``model`` block.

``replay_view_load`` reads what a model is shown (the states, the candidate
property, the tenant's homes, the report's messages, whether a photo or an
alert arrived) once the turn's message is stored; ``replay_script`` turns that
into the scripted answers for the turn: one per acceptable tool in the
scenario's ``expect.tools``, in order, so that when gating refuses the first
the model tries the next, as a model reading the refusal would.

The guesses are deliberately simple (keywords, no language model): they stand
in for a competent model, so a turn fails for what the product does with a
sensible call, not for a placeholder no model would send.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from conversations.models import Conversation, GatheringState, Message, message_text
from conversations.selectors import message_list
from emergencies.models import EmergencyAlert
from issues.services import report_photos
from orchestration.context import gathering_is_stale
from orchestration.models import Turn as TurnTrace
from orchestration.tool_definitions import SCHEMAS
from properties.models import Tenant
from properties.selectors import tenancies_current
from retrieval.models import Document

OUTCOMES = ("fallback", "flag_off", "paused")  # expectations that are not tools (evals.scenarios.OUTCOMES)
REPORT_ENDING_TOOLS = ("create_issue", "close_report")
REPORT_TOOLS = ("ask_for_details", "ask_for_photo", "create_issue", "close_report")

POSTCODE = re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b|\b[AC-FHKNPRTV-Y]\d[\dW]\s?[\dA-Z]{4}\b", re.I)
STREET_WORDS = (
    r"street|st|road|rd|lane|ln|avenue|ave|close|drive|dr|way|court|ct|place|pl|crescent|terrace|gardens|"
    r"square|sq|hill|row|walk|park|grove|mews|parade|view|rise|green"
)
STREET = re.compile(
    r"\b(?:(?:flat|apartment|apt|unit|no\.?|number)\s*\d+[a-z]?\s*,?\s*)?\d+[a-z]?\s*,?\s+"
    r"(?:[a-z'’]+\s+){0,3}(?:"
    + STREET_WORDS
    + r")\b\.?(?:\s*,?\s*[a-z]+(?:\s+[a-z]+)?(?=\s*(?:,|$|\.|\s+[A-Z]{1,2}\d)))?",
    re.I,
)
UNIT = re.compile(r"\b(?:flat|apartment|apt|unit)\s*\d+[a-z]?\b", re.I)
NAMED_STREET = re.compile(
    r"\b(?:(?!(?:the|my|a|on|at|in|our|this|that|of|to|from|near|by|house|flat|home|one)\b)[a-z'’]+\s+){1,2}"
    r"(?:" + STREET_WORDS + r")\b",
    re.I,
)
HOUSE_NUMBER = re.compile(r"(?:\b(?:flat|apartment|apt|unit)\s*\d+[a-z]?\s*,?\s*)?\b\d+[a-z]?,?\s+[a-z]", re.I)

YES = re.compile(
    r"^\s*(yes|yeah|yep|yup|ya|y|ok|okay|correct|right|exactly|that'?s (it|right|me|correct|the one)|"
    r"si|sí|tak|da|sim|oui|ja)\b",
    re.I,
)
NO = re.compile(
    r"^\s*(no|nope|nah|not|wrong|incorrect|negative|nie|non|nein)\b|\b(not (my|me|mine|it|right|correct|the one)|"
    r"wrong (address|flat|house|property|one)|i don'?t live there)\b",
    re.I,
)
DECLINE = re.compile(
    r"^\s*(no|nope|nah|nie|non)\b|\b(can'?t|cannot|can not|won'?t|unable to|not able to|don'?t want to|rather not|"
    r"no (photo|pic|picture|camera)s?|don'?t have a (photo|pic|camera|phone)|no puedo|nie mog[eę])\b",
    re.I,
)
GREETING = re.compile(
    r"^\s*(hi|hello|hey|hiya|good (morning|afternoon|evening)|thanks|thank you|cheers|ta|ok|okay|hola|gracias|"
    r"cześć|dzień dobry|dziękuję|bonjour|merci)\b[\s!.,]*$",
    re.I,
)
GREETING_LEAD = re.compile(r"^\s*(hi|hello|hey|hiya|good (morning|afternoon|evening)|hola|cześć)\b[\s!,.]*", re.I)
PHOTO_TALK = re.compile(r"\b(photo|photos|pic|pics|picture|pictures|camera|foto|fotos|zdj[eę]cie|image)\b", re.I)
QUESTION = re.compile(r"\?|^\s*(how|where|when|what|which|why|can i|do i|should i|is it|am i)\b", re.I)
ERROR_CODE = re.compile(r"\b(?:error|fault) code\b|\b[A-Z]{1,2}\d{1,3}\b")
HUMAN = re.compile(r"\b(human|real person|a person|someone|somebody|manager|agent|office|call me|useless)\b", re.I)
URGENT = re.compile(
    r"\b(urgent|asap|no heating|no heat|no hot water|no water|no power|no electric(ity)?|pouring|through the "
    r"ceiling|can'?t lock|won'?t lock|baby|elderly|pregnant)\b",
    re.I,
)

# Rooms and places in a home; a part of the room that follows is kept ("bathroom ceiling").
ROOMS = (
    r"living room|sitting room|front room|dining room|utility room|shower room|spare room|box room|en[- ]?suite|"
    r"kitchen|bathroom|bedroom|lounge|hallway|hall|landing|stairs|staircase|loft|attic|cellar|basement|garage|"
    r"garden|balcony|porch|toilet|wc|front door|back door|roof|driveway|bin store|"
    r"cocina|baño|bano|salón|salon|dormitorio|habitación|kuchni[ai]?|łazien(ce|ka)|sypialni[ai]?|pokoju?|"
    r"cuisine|salle de bain|chambre"
)
PARTS = r"ceiling|wall|walls|floor|window|windows|sink|door|cupboard|worktop|radiator|light|socket"
ROOM = re.compile(
    r"\b(?:(?:main|master|back|front|upstairs|downstairs|first|second|small|big)\s+)?(?:" + ROOMS + r")\b", re.I
)
ROOM_PART = re.compile(r"\s+(" + PARTS + r")\b", re.I)
PART_OF_ROOM = re.compile(r"\b(" + PARTS + r")\s+(?:in|of|on)\s+(?:the\s+|my\s+|our\s+)?(" + ROOMS + r")\b", re.I)

# (category, words): the first category whose words appear; the order settles overlaps.
# (category, words): the first category whose words appear (whole words; "\w*" ends a stem), so the
# order settles overlaps ("hot water" is heating before "water" is plumbing).
CATEGORY_WORDS: list[tuple[str, str]] = [
    ("gas", r"gas|carbon monoxide|co alarm"),
    ("safety", r"smoke alarm|fire alarm|smoke|fire|burning|sparks?"),
    (
        "electrical",
        r"electric\w*|sockets?|fuse\w*|trip switch|power cut|no power|lights? (?:went|gone|keeps?|flicker\w*)|"
        r"wiring|shock\w*|extractor fan|fan",
    ),
    ("heating", r"boilers?|heating|radiators?|hot water|thermostat|calefacci\w*|ogrzewani\w*|chauffage"),
    (
        "plumbing",
        r"leak\w*|drip\w*|taps?|pipes?|toilets?|sinks?|drains?|blocked|flood\w*|water|showers?|bath|bathtub|"
        r"sewage|overflow\w*|grifo|fuga|kran\w*|przeciek\w*",
    ),
    ("damp_mould", r"damp|mou?ld\w*|condensation|humedad|moho|wilgo\w*|pleś\w*"),
    ("appliances", r"oven|hob|cooker|fridge|freezer|washing machine|dishwasher|dryer|microwave"),
    ("security", r"locks?|keys?|break.?in|broken into|burglar\w*|intruder"),
    ("pests", r"mice|mouse|rats?|cockroach\w*|bugs|bed ?bugs|wasps?|ants|pests?|slugs"),
    ("structural", r"windows?|doors?|roof|ceiling|walls?|crack\w*|floors?|stairs|collapse\w*|tiles?"),
    ("exterior", r"garden|fence|bins?|gutters?|driveway|gate|shed"),
]
FIXTURES = (
    r"carbon monoxide alarm|smoke alarm|fire alarm|washing machine|hot water|extractor fan|front door|back door|"
    r"boiler|heating|radiator|tap|pipe|toilet|sink|shower|bath|drain|oven|hob|cooker|fridge|freezer|dishwasher|"
    r"window|door|lock|roof|ceiling|wall|floor|socket|light|lights|fuse box|electrics|fence|gutter|mould|damp|"
    r"fan|extractor|hood|thermostat|doorbell|intercom|blind|curtain rail|tiles|grout|bin|gate|"
    r"gas|water|power|alarm"
)
FIXTURE = re.compile(r"\b(" + FIXTURES + r")\b", re.I)
PROBLEMS = [
    (
        r"no longer work|not working|doesn'?t work|does not work|stopped working|stopped|isn'?t working|won'?t work|"
        r"not on|went off|gone off|off|dead|broken|broke|bust",
        "not working",
    ),
    (r"leak(?:s|ing|ed)?|drip(?:s|ping)?|overflow(?:s|ing)?|pouring|flood(?:ed|ing)?", "leaking"),
    (r"blocked|clogged|won'?t drain|not draining", "blocked"),
    (r"smell(?:s|ing)?|stinks?|odou?r", "smell"),
    (r"crack(?:ed|s)?", "cracked"),
    (r"stuck|jammed|won'?t (?:open|close|shut|lock)", "stuck"),
    (r"beep(?:s|ing)?|chirp(?:s|ing)?", "beeping"),
    (r"mould|mold|damp", "damp and mould"),
    (r"no heat(?:ing)?|cold", "no heating"),
]
ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "last": -1}


@dataclass
class ReplayView:
    """What a model is shown at the start of the turn, as far as the replay needs it."""

    identity: str = "unidentified"
    gathering: str = GatheringState.IDLE
    emergency: bool = False
    photo_received: bool = False
    candidate_code: str = ""
    homes: list[tuple[str, str, str]] = field(default_factory=list)  # the tenant's tenancies: (code, address, postcode)
    report: list[str] = field(default_factory=list)  # the report's tenant messages, this turn's last
    latest: str = ""  # this turn's words
    earlier: list[str] = field(default_factory=list)  # every tenant message before this turn, oldest first
    documents: bool = False  # the landlord has documents to search


# Reading the conversation -----------------------------------------------------------------------


def replay_view_load(
    *, conversation: Conversation, messages: list[Message], emergency_hint: bool = False
) -> ReplayView:
    """The view of ``conversation`` once this turn's ``messages`` are stored
    (the emergency path has run) and before the turn. ``emergency_hint``:
    the scenario says this turn is an emergency, which the model judges
    itself when no alert was raised."""
    ids = [m.pk for m in messages]
    tenant_messages = [
        m
        for m in message_list(conversation=conversation).order_by("created_at", "id")
        if m.direction == Message.Direction.INBOUND and m.author == Message.Author.TENANT
    ]
    earlier = [m for m in tenant_messages if m.pk not in ids]
    start = _report_start(conversation, earlier)
    report = [m for m in earlier if start is None or (m.created_at, m.pk) > start] + list(messages)
    tenant = (
        conversation.tenant
        or Tenant.objects.filter(organization_id=conversation.organization_id, phone=conversation.phone).first()
    )
    homes = (
        [(t.property.code, t.property.address, t.property.postcode) for t in tenancies_current(tenant=tenant)]
        if tenant
        else []
    )
    identity = conversation.identity_status
    if identity == "unidentified" and conversation.tenant_id is None and homes:
        identity = "confirmed" if len(homes) == 1 else "identified"  # the phone lookup at the turn's start
    gathering = GatheringState.IDLE if gathering_is_stale(conversation) else conversation.gathering_state
    since = min((m.created_at for m in report), default=timezone.now())
    alerted = EmergencyAlert.objects.filter(conversation=conversation, created_at__gte=since).exclude(
        status="dismissed"
    )
    return ReplayView(
        identity=identity,
        gathering=gathering,
        emergency=bool(conversation.emergency_category) or alerted.exists() or emergency_hint,
        photo_received=report_photos(conversation=conversation, message_ids=ids).exists(),
        candidate_code=conversation.candidate_property.code if conversation.candidate_property is not None else "",
        homes=homes,
        report=[text for m in report if (text := message_text(m))],
        latest="\n".join(text for m in messages if (text := message_text(m))).strip(),
        earlier=[text for m in earlier if (text := message_text(m))],
        documents=Document.objects.filter(organization_id=conversation.organization_id).exists(),
    )


def _report_start(conversation: Conversation, earlier: list[Message]):
    """(created_at, id) of the last tenant message that belongs to an earlier
    report, or None when all of them may belong to this one. A report ends
    with a turn that created an issue or closed the report, or a stale restart."""
    if gathering_is_stale(conversation) and earlier:
        return (earlier[-1].created_at, earlier[-1].pk)
    ended = [
        t for t in TurnTrace.objects.filter(conversation=conversation).order_by("created_at", "id") if _ends_report(t)
    ]
    if not ended or not ended[-1].message_ids:
        return None
    last_id = max(ended[-1].message_ids)
    last = next((m for m in earlier if m.pk == last_id), None)
    return (last.created_at, last.pk) if last else None


def _ends_report(turn: TurnTrace) -> bool:
    applied = [c.get("name") for c in turn.tool_calls if c.get("name") and not c.get("is_error")]
    if applied and applied[-1] in REPORT_ENDING_TOOLS:
        return True
    return turn.gathering_before in ("gathering_details", "awaiting_photo") and turn.gathering_after == "idle"


# Deriving the answers ---------------------------------------------------------------------------


def replay_script(tools: list[str], view: ReplayView) -> list[dict[str, Any]]:
    """The scripted answers for a turn: one per acceptable tool, in order
    (a refused call is followed by the next). A first expectation that is an
    outcome plays it: ``fallback`` an outage, ``flag_off`` and ``paused`` no
    model call at all."""
    tools = tools or ["respond"]
    if tools[0] == "fallback":
        return [{"error": "unavailable"}]
    if tools[0] in OUTCOMES:
        return []
    names = [t for t in dict.fromkeys(tools) if t in SCHEMAS]
    if names and names[0] in REPORT_TOOLS and _names_home(view):
        # Identity first: a model confirms the home the tenant just named, and the turn goes on with the report.
        names.insert(0, "confirm_property")
    lookup = QUESTION.search(view.latest) or ERROR_CODE.search(view.latest)
    if names and names[0] == "respond" and view.documents and lookup and _settled(view):
        names[0] = "search_documents"  # a question or an error code is looked up first; the answer is what was found
    if names and names[0] == "search_documents":
        # After a lookup the scripted model answers from the passages found: nothing may be queued behind it.
        return [{"tool": "search_documents", "input": replay_input("search_documents", view)}]
    return [{"tool": name, "input": replay_input(name, view)} for name in names if name != "search_documents"]


def replay_input(tool: str, view: ReplayView) -> dict[str, Any]:
    """A valid input for ``tool`` in this view, with only the fields its schema has."""
    derive = DERIVERS.get(tool, _generic)
    values = derive(view)
    properties = SCHEMAS[tool]["properties"]
    values = {k: v for k, v in values.items() if k in properties and v not in ("", None)}
    for key in SCHEMAS[tool]["required"]:
        if key not in values:
            values[key] = _filler(key, properties[key], view)
    return values


def _names_home(view: ReplayView) -> bool:
    """Identity waits for the tenant, who has just said yes to the candidate or named one of their homes."""
    if view.identity != "identified":
        return False
    if view.candidate_code:
        return bool(YES.search(view.latest)) and not NO.search(view.latest)
    return bool(home_named(view.latest, view.homes))


def _settled(view: ReplayView) -> bool:
    return view.identity in ("confirmed", "active")


def _filler(key: str, spec: dict, view: ReplayView) -> Any:
    if "enum" in spec:
        return "other" if "other" in spec["enum"] else spec["enum"][0]
    if spec.get("type") == "boolean":
        return True
    return _words(view) or "(no text)"


def _generic(view: ReplayView) -> dict[str, Any]:
    return {}


def _words(view: ReplayView) -> str:
    """This turn's words, else the report's."""
    return view.latest or " ".join(view.report).strip()


def _find_property(view: ReplayView) -> dict[str, Any]:
    for text in [view.latest, *reversed(view.earlier)]:
        address = address_in(text)
        if address:
            return {"address": address}
    return {"address": view.latest or "(no text)"}


def address_in(text: str) -> str:
    """The address or postcode in ``text`` as the tenant wrote it, without the
    words around it; "" when there is none."""
    spans = [m.span() for m in POSTCODE.finditer(text)]
    spans += [m.span() for m in STREET.finditer(text)]
    spans += [m.span() for m in UNIT.finditer(text)]
    if not spans:
        spans = [m.span() for m in NAMED_STREET.finditer(text)]
    if not spans:
        return ""
    spans.sort()
    # A postcode after a street we did not recognise (a typo): start at the house number before it.
    clause_start = max(text.rfind(stop, 0, spans[0][0]) for stop in (".", "!", "?", "\n")) + 1
    number = HOUSE_NUMBER.search(text, clause_start, spans[0][0])
    if number and spans[0][0] - number.start() <= 60:
        spans.insert(0, (number.start(), spans[0][0]))
    # Join the spans that sit in one stretch of the text (separated by commas or spaces only).
    start, end = spans[0]
    for s, e in spans[1:]:
        if re.fullmatch(r"[\s,]*", text[end:s]) or s <= end:
            end = max(end, e)
    return text[start:end].strip(" ,.")


def _confirm_property(view: ReplayView) -> dict[str, Any]:
    text = view.latest
    if view.candidate_code:
        if NO.search(text) and not YES.search(text):
            return {"confirmed": False}
        return {"confirmed": True, "property_code": view.candidate_code}
    code = home_named(text, view.homes) or next(
        (c for t in reversed(view.earlier) if (c := home_named(t, view.homes))), ""
    )
    return {"confirmed": True, "property_code": code}


def home_named(text: str, homes: list[tuple[str, str, str]]) -> str:
    """The code of the home among ``homes`` that ``text`` names (its code, its
    postcode, words of its address no other home has, or "the first/second"), else ""."""
    lowered = text.lower()
    squashed = re.sub(r"\s+", "", lowered)
    for code, _address, postcode in homes:
        if code.lower() in lowered or (postcode and re.sub(r"\s+", "", postcode.lower()) in squashed):
            return code
    words = {code: set(re.findall(r"[a-z]{3,}|\d+", address.lower())) for code, address, _ in homes}
    said = set(re.findall(r"[a-z]{3,}|\d+", lowered))
    scores = {}
    for code, mine in words.items():
        others = set().union(*(w for c, w in words.items() if c != code)) if len(words) > 1 else set()
        scores[code] = len((mine - others) & said)
    best = max(scores.values(), default=0)
    if best and list(scores.values()).count(best) == 1:
        return next(code for code, score in scores.items() if score == best)
    for word, index in ORDINALS.items():
        if re.search(rf"\b{word}\b", lowered) and homes:
            return homes[index][0]
    return ""


def problem_texts(view: ReplayView) -> list[str]:
    """The report's messages that describe the problem: without greetings,
    addresses, yes/no answers and talk about photos."""
    texts = []
    for text in view.report:
        address = address_in(text)
        rest = text.replace(address, " ") if address else text
        rest = GREETING_LEAD.sub("", rest).strip(" ,.!")
        if not rest or GREETING.match(rest) or (len(rest.split()) < 2 and not FIXTURE.search(rest)):
            continue
        if (YES.match(rest) or NO.match(rest)) and len(rest.split()) <= 4:
            continue
        if PHOTO_TALK.search(rest) and len(rest.split()) <= 12 and not FIXTURE.search(rest):
            continue
        texts.append(rest)
    return texts


def location_in(text: str) -> str:
    """The room or place ``text`` names ("bathroom ceiling", "kitchen"), else ""."""
    part = PART_OF_ROOM.search(text)
    if part:
        return f"{part.group(2)} {part.group(1)}".lower()
    room = ROOM.search(text)
    if not room:
        return ""
    following = ROOM_PART.match(text, room.end())
    return (room.group(0) + (f" {following.group(1)}" if following else "")).lower()


def category_of(text: str) -> str:
    for category, words in CATEGORY_WORDS:
        if re.search(rf"\b(?:{words})\b", text, re.I):
            return category
    return "other"


def title_of(text: str) -> str:
    """A short title: the thing and what is wrong with it ("Kitchen tap leaking"),
    else the first words of the report."""
    fixture = FIXTURE.search(text)
    problem = next((label for words, label in PROBLEMS if re.search(rf"\b(?:{words})\b", text, re.I)), "")
    room = location_in(text)
    if fixture and problem:
        thing = fixture.group(1).lower()
        if problem == "damp and mould" or thing in ("damp", "mould"):
            return f"Damp and mould{' in ' + room if room else ''}".capitalize()
        if room and thing in room:
            thing = room
        elif room:
            thing = f"{room.split()[0]} {thing}"
        return f"{thing} {problem}".capitalize()
    words = re.sub(r"\s+", " ", text).strip()
    short = words[:60].rsplit(" ", 1)[0] if len(words) > 60 else words
    return (short.strip(" ,.!?") or "Repair reported over WhatsApp")[:1].upper() + short.strip(" ,.!?")[1:]


def _report_facts(view: ReplayView) -> tuple[str, str, str]:
    """(title, description, location) from the report's words."""
    texts = problem_texts(view)
    description = "\n".join(texts)
    return title_of(description) if texts else "", description, location_in(description)


def _create_issue(view: ReplayView) -> dict[str, Any]:
    title, description, location = _report_facts(view)
    said_no = bool(DECLINE.search(view.latest))
    if view.photo_received:
        photo = "provided"
    elif view.gathering == GatheringState.AWAITING_PHOTO and said_no:
        photo = "declined"
    elif view.emergency:
        photo = "not_needed"
    else:
        photo = "declined"
    fixture = FIXTURE.search(description)
    return {
        "title": title or ("Photo sent by the tenant" if view.photo_received else "Repair reported over WhatsApp"),
        "description": description
        or ("The tenant sent a photo." if view.photo_received else "Reported over WhatsApp."),
        "category": category_of(description),
        "urgency": "emergency" if view.emergency else ("urgent" if URGENT.search(description) else "routine"),
        "location": location or (fixture.group(1).lower() if fixture else "not stated"),
        "photo": photo,
        "message": "Thanks, I've logged this repair with your landlord; they will be in touch about a visit.",
    }


def _ask_for_details(view: ReplayView) -> dict[str, Any]:
    _, description, location = _report_facts(view)
    if not description:
        question = "Sorry to hear something's wrong. What is the problem, and where in your home is it?"
    elif not location:
        question = "Sorry to hear that. Where in your home is it, and since when has it been like this?"
    else:
        question = "Thanks. Since when has it been like this, and how bad is it?"
    return {"question": question}


def _ask_for_photo(view: ReplayView) -> dict[str, Any]:
    title, description, location = _report_facts(view)
    return {
        "message": "Thanks, that's clear. Could you send a photo of it?",
        "problem": title if FIXTURE.search(description) else "",
        "location": location,
    }


def _respond(view: ReplayView) -> dict[str, Any]:
    text = view.latest
    if view.identity == "unidentified":
        message = "Hello! Which property do you live in? Please send the address or postcode."
    elif view.identity == "identified" and not view.candidate_code and len(view.homes) > 1:
        homes = " or ".join(f"{code} ({address})" for code, address, _ in view.homes)
        message = f"Which home is this about: {homes}?"
    elif view.gathering == GatheringState.AWAITING_PHOTO and not view.photo_received:
        message = "No rush, send the photo whenever you're ready."
    elif GREETING.match(text) and re.search(r"thank|cheers|gracias|dzięk|merci|\bta\b", text, re.I):
        message = "You're welcome! Message me here any time."
    elif GREETING.match(text) or not text:
        message = "Hello! How can I help with your home today?"
    else:
        message = "Thanks for letting me know."
    return {"message": message}


def _search_documents(view: ReplayView) -> dict[str, Any]:
    return {"query": _words(view)}


def _escalate(view: ReplayView) -> dict[str, Any]:
    text = _words(view)
    reason = "the tenant asked for a person" if HUMAN.search(text) else f"needs a person: {text[:200]}"
    return {"reason": reason, "message": "I've passed this to the team at the office; a person will reply to you here."}


def _close_report(view: ReplayView) -> dict[str, Any]:
    return {
        "reason": f"the tenant says: {view.latest[:200]}" if view.latest else "the tenant no longer needs a repair",
        "message": "Glad to hear it. I've closed this report; message me any time if it comes back.",
    }


# Words asking to delete rather than to see (five languages); anything else is a copy.
ERASE = re.compile(r"\b(delet\w*|eras\w*|remove|wipe|forget|usu[nń]\w*|borr\w*|elimin\w*|apag\w*|(ș|s)terge\w*)", re.I)


def _data_request(view: ReplayView) -> dict[str, Any]:
    kind = "erasure" if ERASE.search(view.latest) else "export"
    return {"kind": kind, "message": "Thanks, I've passed your request to the agency; they will reply to you."}


DERIVERS = {
    "data_request": _data_request,
    "find_property": _find_property,
    "confirm_property": _confirm_property,
    "create_issue": _create_issue,
    "ask_for_details": _ask_for_details,
    "ask_for_photo": _ask_for_photo,
    "respond": _respond,
    "search_documents": _search_documents,
    "escalate": _escalate,
    "close_report": _close_report,
}
