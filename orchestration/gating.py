"""What the model may do now, and where each tool moves the two states.

``TRANSITIONS`` is the one table of allowed moves: for each tool, the
gathering states it may be called in and the state it leads to. Identity moves
are in ``IDENTITY_TRANSITIONS``. Handlers apply these; tests walk them. A call
that is not allowed gets a rejection the model reads as an ``is_error`` tool
result, saying what to do instead.

Some moves also depend on the call's content: ``ask_for_photo`` may open a
report (from ``idle`` or after an issue) only when it names the problem and a
place in the home that the tenant's own words name too (``ROOM_WORDS``).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from conversations.models import GatheringState as G
from conversations.models import IdentityStatus as I

# tool -> {gathering state it may be called in: gathering state after}
TRANSITIONS: dict[str, dict[str, str]] = {
    "ask_for_details": {
        G.IDLE: G.GATHERING_DETAILS,
        G.GATHERING_DETAILS: G.GATHERING_DETAILS,
        G.AWAITING_PHOTO: G.GATHERING_DETAILS,
        G.ISSUE_CREATED: G.GATHERING_DETAILS,
    },
    # From idle or after an issue only with a clear problem and location (``_ask_for_photo_rejection``).
    "ask_for_photo": {
        G.IDLE: G.AWAITING_PHOTO,
        G.GATHERING_DETAILS: G.AWAITING_PHOTO,
        G.AWAITING_PHOTO: G.AWAITING_PHOTO,
        G.ISSUE_CREATED: G.AWAITING_PHOTO,
    },
    # Dropping a report in progress without an issue: the tenant says it is sorted or gone.
    "close_report": {G.GATHERING_DETAILS: G.IDLE, G.AWAITING_PHOTO: G.IDLE},
    "create_issue": {
        G.IDLE: G.ISSUE_CREATED,
        G.GATHERING_DETAILS: G.ISSUE_CREATED,
        G.AWAITING_PHOTO: G.ISSUE_CREATED,
        G.ISSUE_CREATED: G.ISSUE_CREATED,
    },
    **{
        tool: {state: state for state in G.values}
        for tool in ("respond", "escalate", "search_documents", "data_request")
    },
    **{tool: {state: state for state in G.values} for tool in ("find_property", "confirm_property")},
}

# (tool, outcome) -> {identity before: identity after}; outcomes other than
# "ok" come from the handler (a property found or not, confirmed or not).
IDENTITY_TRANSITIONS: dict[tuple[str, str], dict[str, str]] = {
    ("find_property", "match"): {I.UNIDENTIFIED: I.IDENTIFIED, I.IDENTIFIED: I.IDENTIFIED},
    ("find_property", "no_match"): {I.UNIDENTIFIED: I.UNIDENTIFIED, I.IDENTIFIED: I.UNIDENTIFIED},
    ("confirm_property", "confirmed"): {I.IDENTIFIED: I.CONFIRMED},
    ("confirm_property", "rejected"): {I.IDENTIFIED: I.UNIDENTIFIED},
    # A number with several tenancies turned down the one proposed: still known, it chooses among them.
    ("confirm_property", "rejected_own"): {I.IDENTIFIED: I.IDENTIFIED},
    ("create_issue", "ok"): {I.CONFIRMED: I.ACTIVE, I.ACTIVE: I.ACTIVE},
    # Before any turn, from the phone number alone (no model involved).
    ("phone_lookup", "one_tenancy"): {I.UNIDENTIFIED: I.CONFIRMED},
    ("phone_lookup", "several_tenancies"): {I.UNIDENTIFIED: I.IDENTIFIED},
    # Several tenancies, and the first message names one of them ("the Orchard Lane house has a leak").
    ("phone_lookup", "named_tenancy"): {I.UNIDENTIFIED: I.CONFIRMED},
}

IDENTITY_FOR_TOOL: dict[str, set[str]] = {
    "find_property": {I.UNIDENTIFIED, I.IDENTIFIED},
    # Confirmed already: only to move to another of the tenant's own homes (see the rejection).
    "confirm_property": {I.IDENTIFIED, I.CONFIRMED, I.ACTIVE},
    "create_issue": {I.CONFIRMED, I.ACTIVE},
}


@dataclass(frozen=True)
class Snapshot:
    """What gating needs to know about the conversation at the start of a turn."""

    identity: str
    gathering: str
    emergency: bool = False
    photo_received: bool = False  # a usable photo arrived for this report, not yet on an issue
    property_codes: tuple[str, ...] = ()  # the tenant's current tenancies
    candidate_code: str = ""
    property_code: str = ""  # the confirmed property, the only one issues may be created for
    report_text: str = ""  # the tenant's own words in the current report (since the last one closed or was filed)
    extra: dict[str, Any] = field(default_factory=dict)


def gathering_after(tool: str, gathering: str) -> str:
    return TRANSITIONS[tool][gathering]


def identity_after(tool: str, outcome: str, identity: str) -> str:
    return IDENTITY_TRANSITIONS.get((tool, outcome), {}).get(identity, identity)


def rejection(tool: str, tool_input: dict[str, Any], snapshot: Snapshot) -> str | None:
    """None when the call is allowed now, else why not and what to do instead."""
    allowed_identity = IDENTITY_FOR_TOOL.get(tool)
    if allowed_identity and snapshot.identity not in allowed_identity:
        if tool == "create_issue":
            return (
                f"create_issue is not allowed: identity_status is {snapshot.identity}. Confirm which property the "
                "tenant lives in first (find_property / confirm_property), or ask for the address with respond."
            )
        return f"{tool} is not allowed while identity_status is {snapshot.identity}."
    if tool == "ask_for_photo" and snapshot.emergency:
        return "This is an emergency: do not ask for a photo; create the issue now with urgency emergency."
    if tool == "close_report" and snapshot.emergency:
        return (
            "An emergency report is not dropped: a person at the agency checks it. Reply with respond, "
            "or create_issue with urgency emergency if it is not recorded yet."
        )
    if snapshot.gathering not in TRANSITIONS[tool]:
        if tool == "close_report":
            return (
                f"close_report is only for a report in progress; gathering_state is {snapshot.gathering}, "
                "so there is nothing to close. Reply with respond."
            )
        return f"{tool} is not allowed while gathering_state is {snapshot.gathering}."
    if tool == "ask_for_photo" and snapshot.gathering in (G.IDLE, G.ISSUE_CREATED):
        return _ask_for_photo_rejection(tool_input, snapshot)
    if tool == "create_issue":
        return _create_issue_rejection(tool_input, snapshot)
    if tool == "find_property" and snapshot.property_codes:
        # A number with tenancies chooses among its own homes; an address
        # search over the organization would let it claim anyone's.
        return (
            "find_property is only for numbers not linked to a tenancy. This tenant rents "
            f"{', '.join(snapshot.property_codes)}: ask which one and call confirm_property with its code. "
            "They cannot act for any other property."
        )
    if tool == "confirm_property":
        return _confirm_property_rejection(tool_input, snapshot)
    return None


def _confirm_property_rejection(tool_input: dict[str, Any], snapshot: Snapshot) -> str | None:
    if snapshot.identity in (I.CONFIRMED, I.ACTIVE):
        return _home_move_rejection(tool_input, snapshot)
    if not tool_input.get("confirmed"):
        if not snapshot.candidate_code:
            return "There is no candidate property to reject; ask which property the tenant means."
        return None
    code = tool_input.get("property_code") or ("" if snapshot.property_codes else snapshot.candidate_code)
    if not code:
        return "Say which property: property_code must be one of the tenant's properties in the context."
    # With tenancies on record only those count; otherwise only the address the tenant gave and we matched.
    allowed = snapshot.property_codes or (snapshot.candidate_code,)
    if code not in allowed:
        return f"{code!r} is not one of this tenant's properties; use a code from the context."
    return None


def _home_move_rejection(tool_input: dict[str, Any], snapshot: Snapshot) -> str | None:
    """A confirmed tenant who rents several homes says the problem is at another of them."""
    others = [code for code in snapshot.property_codes if code != snapshot.property_code]
    if not others:
        return f"The property is confirmed already ({snapshot.property_code}); carry on with the report."
    code = tool_input.get("property_code", "")
    if not tool_input.get("confirmed") or code not in others:
        return (
            f"The property is confirmed ({snapshot.property_code}). Only if the tenant says the problem is at "
            f"another of their homes, call confirm_property with confirmed=true and its code: {', '.join(others)}."
        )
    if snapshot.emergency:
        return (
            f"An emergency is being handled at {snapshot.property_code}: do not move it. If the tenant says it is "
            "at another home, escalate so a person at the agency corrects it at once."
        )
    if snapshot.gathering not in (G.IDLE, G.ISSUE_CREATED):
        # Its words and photos would go with it: a second problem must not take the first one's.
        return (
            f"A report at {snapshot.property_code} is in progress. Finish it first (create_issue), or close_report "
            "if the tenant says it is at another home and ask them to describe it again; then move."
        )
    return None


def _create_issue_rejection(tool_input: dict[str, Any], snapshot: Snapshot) -> str | None:
    if not snapshot.property_code:
        return "create_issue needs the tenant's property confirmed first (confirm_property)."
    photo = tool_input.get("photo")
    emergency = snapshot.emergency or tool_input.get("urgency") == "emergency"
    if photo == "provided" and not snapshot.photo_received:
        return "photo='provided' but no photo has arrived. Ask for one (ask_for_photo) or wait for it."
    if photo == "declined" and snapshot.gathering != G.AWAITING_PHOTO:
        return "photo='declined' needs the tenant to have been asked for a photo first (ask_for_photo)."
    if photo == "not_needed" and not emergency:
        return "photo='not_needed' is only for emergencies; otherwise ask for a photo (ask_for_photo)."
    if snapshot.gathering in (G.IDLE, G.ISSUE_CREATED) and not (emergency or snapshot.photo_received):
        # After an issue is created, a new problem starts over: its details first.
        return "Too early to create an issue: ask for the details first (ask_for_details)."
    return None


def create_issue_possible(snapshot: Snapshot) -> bool:
    """Whether some create_issue call would pass gating now (leaving aside an
    emergency the model declares itself): the model routing sends such turns
    to the large model."""
    return any(
        rejection("create_issue", {"urgency": "routine", "photo": photo}, snapshot) is None
        for photo in ("provided", "declined", "not_needed")
    )


# --- where in the home: the location check of ask_for_photo from idle ---------------------------

# Places in a home (rooms and parts of the building), by what they are, in the
# languages tenants here write in (en, pl, es, ro, pt). A word ending in "*"
# matches any word it begins (Polish and Romanian inflect: "w kuchni",
# "în bucătărie"); the others match whole words, with a plural "s". Letters
# are compared without accents. Appliances and fixtures (boiler, tap, oven,
# toilet bowl, radiator) are deliberately absent: they are what is broken,
# not where. Surfaces alone (ceiling, wall, floor, window) are not places
# either: "the ceiling" needs the room it is in.
_ROOMS: dict[str, str] = {
    "kitchen": "kitchen kitchenette kuchn* cocina cocinas bucatari* cozinha*",
    "bathroom": "bathroom shower-room ensuite en-suite wc loo toilet toaleta toalet* lazien* bano* aseo* baie baia "
    "casa-de-banho banheiro*",
    "bedroom": "bedroom box-room spare-room nursery sypialn* dormitor* habitacion* quarto*",
    "living": "living-room lounge sitting-room front-room dining-room reception-room living salon* jadalni* "
    "comedor* sala sala-de-estar sufragerie* camera-de-zi",
    "hall": "hall hallway landing corridor entrance porch stairs staircase stairwell understairs front-door "
    "back-door przedpok* korytarz* klatk* schody schodach schodow pasillo* entrada* escalera* hol holul scari "
    "scara intrare* corredor* escada*",
    "utility": "utility utility-room laundry airing-cupboard cupboard pantry larder pralni* spizarni* lavadero* "
    "despensa* lavandaria*",
    "outside": "garden yard patio balcony terrace driveway shed garage conservatory ogrod* balkon* taras* garaz* "
    "jardin* terraza* balcon* garaje* gradin* curte* garaj* jardim* varanda* garagem* quintal*",
    "roof": "roof loft attic cellar basement dach* strych* piwnic* tejado* atico* sotano* acoperis* mansard* "
    "pivnit* subsol* telhado* sotao* cave",
    "room": "room pokoj* cuarto",
}
_ROOM_WORDS: dict[str, str] = {}
_ROOM_STEMS: list[tuple[str, str]] = []
for _place, _words in _ROOMS.items():
    for _word in _words.split():
        if _word.endswith("*"):
            _ROOM_STEMS.append((_word[:-1], _place))
        else:
            _ROOM_WORDS[_word] = _place
ROOM_WORDS = frozenset(_ROOM_WORDS) | frozenset(stem for stem, _ in _ROOM_STEMS)
_TOKEN = re.compile(r"[a-z0-9]+")


def _plain(text: str) -> str:
    text = text.lower().replace("ł", "l")
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def places_named(text: str) -> set[str]:
    """The kinds of place in the home that ``text`` names ("kitchen",
    "bathroom", ...): the same place in any of the five languages gives the
    same kind, so a location the model wrote in English is checked against
    the tenant's Polish."""
    words = _TOKEN.findall(_plain(text))
    # "living room" is one place: also try each pair of neighbouring words joined.
    candidates = words + ["-".join(pair) for pair in itertools.pairwise(words)]
    candidates += ["-".join(words[i : i + 3]) for i in range(len(words) - 2)]
    found = set()
    for word in candidates:
        place = _ROOM_WORDS.get(word) or (_ROOM_WORDS.get(word[:-1]) if word.endswith("s") else None)
        if place is None:
            place = next((p for stem, p in _ROOM_STEMS if word.startswith(stem)), None)
        if place is not None:
            found.add(place)
    return found


def _ask_for_photo_rejection(tool_input: dict[str, Any], snapshot: Snapshot) -> str | None:
    """Opening a report with a photo request (no ask_for_details first): the
    call must say what is wrong and where, and the place must be one the
    tenant named."""
    problem = str(tool_input.get("problem", "")).strip()
    location = str(tool_input.get("location", "")).strip()
    if not problem or not location:
        return (
            "ask_for_photo is too early: find out what the problem is and where it is first (ask_for_details). "
            "If the tenant has already said both, call ask_for_photo again with problem and location filled in."
        )
    places = places_named(location)
    if not places:
        return (
            f"{location!r} is not a place in the home (a room or part of the building; an appliance or fixture "
            "such as a boiler or a tap is not a location). Ask where it is with ask_for_details."
        )
    if not places & places_named(snapshot.report_text):
        return (
            f"The tenant has not said the problem is in the {location}. Ask where it is with ask_for_details; "
            "do not guess."
        )
    return None
