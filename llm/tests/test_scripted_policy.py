"""The scripted model's free-chat policy (no call queued): from a context
block like the one the turn engine renders, which tool it calls and with
what. The tool list is the one offered in the call: the policy uses a tool,
or a tool's optional fields, only when they are offered."""

from __future__ import annotations

from llm.scripted import _policy
from llm.types import PASSAGE_SEPARATOR

NOT_UNDERSTOOD = "Sorry, I didn't understand — could you tell me what needs repairing and where?"


def _tool(name: str, *fields: str) -> dict:
    return {"name": name, "input_schema": {"type": "object", "properties": {f: {"type": "string"} for f in fields}}}


TOOLS = [
    _tool("find_property", "address"),
    _tool("confirm_property", "confirmed", "property_code"),
    _tool("ask_for_details", "question"),
    _tool("ask_for_photo", "message"),
    _tool("create_issue", "title", "description", "category", "urgency", "location", "photo", "message"),
    _tool("search_documents", "query"),
    _tool("respond", "message"),
    _tool("escalate", "reason", "message"),
]
# What the tool list looks like once ask_for_photo takes the problem and its place, and reports can be closed.
TOOLS_NEW = [
    _tool("ask_for_photo", "message", "problem", "location") if t["name"] == "ask_for_photo" else t for t in TOOLS
]
TOOLS_NEW.append(_tool("close_report", "reason", "message"))


def _context(*, new: list[str], history: tuple | list = (), gathering="idle", identity="confirmed", extra=()):
    lines = [
        "Now: 2026-11-24 10:00 (Europe/London; all times below are local). Agency: Harbour Lettings (country GB).",
        "Tenant phone: +447700900123. Tenant: Amira Khan.",
        f"identity_status: {identity}",
        f"gathering_state: {gathering}",
        "Property: FLAT-1 - Flat 1, 12 Harbour Street, Leeds",
        *extra,
        "Photo received for this report: no",
    ]
    if history:
        lines.append("Conversation so far:")
        lines += [f"[2026-11-24 09:{n:02d}] {who}: {body}" for n, (who, body) in enumerate(history)]
    lines.append("New message(s) from the tenant:")
    lines += [f"[2026-11-24 10:00] Tenant: {body}" for body in new]
    return [{"role": "user", "content": "\n".join(lines)}]


def test_a_no_heating_report_without_a_place_is_asked_where():
    name, tool_input = _policy(_context(new=["Hi, my boiler has stopped working, no heating or hot water"]), TOOLS_NEW)
    assert name == "ask_for_details"
    assert "Where" in tool_input["question"]


def test_a_clear_first_message_gets_a_photo_request_with_problem_and_place_when_the_tool_takes_them():
    name, tool_input = _policy(_context(new=["The kitchen tap is leaking"]), TOOLS_NEW)
    assert name == "ask_for_photo"
    assert tool_input["location"] == "kitchen" and "Tap leaking" in tool_input["problem"]
    # Without those fields gating would refuse a photo request from idle: ask a question instead.
    name, tool_input = _policy(_context(new=["The kitchen tap is leaking"]), TOOLS)
    assert name == "ask_for_details" and set(tool_input) == {"question"}


def test_the_issue_is_summarised_from_the_report_not_the_whole_chat():
    history = [
        ("Tenant", "Hi, my boiler has stopped working, no heating or hot water"),
        ("You", "Hello! Which property do you live in? Please send the address or postcode."),
        ("Tenant", "12 Harbour Street, LS1 4AB"),
        ("You", "Thanks! Is your home Flat 1, 12 Harbour Street, Leeds, LS1 4AB? Please reply yes or no."),
        ("Tenant", "yes"),
        ("You", "Sorry to hear that. Where in your home is it (which room), and since when?"),
        ("Tenant", "in the kitchen cupboard, since this morning"),
        ("You", "Thanks, that helps. Could you send a photo of it?"),
    ]
    name, tool_input = _policy(
        _context(new=["sorry I can't take a photo"], history=history, gathering="awaiting_photo"), TOOLS
    )
    assert name == "create_issue"
    assert tool_input["title"] == "Boiler not working in kitchen: no heating or hot water"
    assert (tool_input["category"], tool_input["urgency"], tool_input["location"]) == ("heating", "urgent", "kitchen")
    assert tool_input["photo"] == "declined"
    assert tool_input["description"] == (
        "Hi, my boiler has stopped working, no heating or hot water. In the kitchen cupboard, since this morning"
    )


def test_an_earlier_issue_is_not_part_of_the_next_report():
    history = [
        ("Tenant", "the bathroom tap is leaking"),
        ("You", "Thanks, I've logged this repair with your landlord.\nYour reference is R2611-2A77AB."),
    ]
    name, tool_input = _policy(_context(new=["the oven in the kitchen won't turn on"], history=history), TOOLS_NEW)
    assert name == "ask_for_photo"
    assert tool_input["problem"].startswith("Oven not working") and tool_input["location"] == "kitchen"


def test_a_where_answer_without_a_known_room_is_taken_as_the_place():
    history = [
        ("Tenant", "my boiler is broken"),
        ("You", "Sorry to hear that. Where in your home is it (which room), and since when?"),
    ]
    name, tool_input = _policy(
        _context(new=["next to the telly"], history=history, gathering="gathering_details"), TOOLS_NEW
    )
    assert name == "ask_for_photo" and tool_input["location"] == "next to the telly"


def test_an_emergency_is_filed_at_once_as_an_emergency():
    extra = ["EMERGENCY reported (gas): safety instructions were sent; no photo needed."]
    name, tool_input = _policy(_context(new=["I can smell gas in the kitchen"], extra=extra), TOOLS)
    assert name == "create_issue"
    assert (tool_input["urgency"], tool_input["category"], tool_input["photo"]) == ("emergency", "gas", "not_needed")


def test_gibberish_and_off_topic_text_get_the_sorry_in_the_tenants_language():
    assert _policy(_context(new=["asdkjh qwpoeiru zzxv"]), TOOLS) == ("respond", {"message": NOT_UNDERSTOOD})
    name, tool_input = _policy(_context(new=["Jaka będzie jutro pogoda"]), TOOLS)
    assert name == "respond" and tool_input["message"].startswith("Przepraszam")


def test_a_greeting_gets_a_greeting_and_thanks_a_welcome():
    name, tool_input = _policy(_context(new=["hello"]), TOOLS)
    assert name == "respond" and tool_input["message"].startswith("Hello")
    name, tool_input = _policy(_context(new=["gracias!"], gathering="issue_created"), TOOLS)
    assert name == "respond" and tool_input["message"].startswith("¡De nada")


KEYS = "[1] House guide > Keys\nSpare keys can be cut at the hardware shop on the corner; tell the office."
BOILER = "[2] Boiler manual > Pressure\nIf the pressure is below 1 bar, open the filling loop until it reads 1.5 bar."


def _after_search(query: str, passages: str, **context) -> list[dict]:
    messages = _context(new=[query], **context)
    messages += [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "search_documents", "input": {"query": query}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": passages}]},
    ]
    return messages


def test_a_search_answer_is_the_passage_that_fits_not_the_first_one():
    name, tool_input = _policy(
        _after_search("the boiler pressure is low, what do I do?", KEYS + PASSAGE_SEPARATOR + BOILER), TOOLS
    )
    assert name == "respond"
    assert "filling loop" in tool_input["message"] and "keys" not in tool_input["message"]


def test_a_search_for_gibberish_says_sorry_not_a_passage():
    name, tool_input = _policy(_after_search("qwzx plokij vbnm?", KEYS + PASSAGE_SEPARATOR + BOILER), TOOLS)
    assert (name, tool_input) == ("respond", {"message": NOT_UNDERSTOOD})


def test_a_real_question_with_no_fitting_passage_says_it_was_not_found():
    name, tool_input = _policy(_after_search("when are the bins collected?", KEYS), TOOLS)
    assert name == "respond" and "couldn't find" in tool_input["message"]


PARKING = "[1] House guide > Parking\nParking permits are issued by the council; the office has visitor permits."


def test_passages_in_the_context_answer_only_when_they_fit():
    extra = ["Passages from the landlord's documents that may help (answer from them only if they fit):", PARKING]
    name, tool_input = _policy(
        _context(new=["parking permit for visitors"], extra=extra, gathering="issue_created"), TOOLS
    )
    assert name == "respond" and "visitor permits" in tool_input["message"]
    name, tool_input = _policy(_context(new=["blorp zzkt"], extra=extra, gathering="issue_created"), TOOLS)
    assert (name, tool_input) == ("respond", {"message": NOT_UNDERSTOOD})


def test_a_report_that_went_away_is_closed_when_the_tool_is_offered():
    history = [("Tenant", "the kitchen tap is dripping"), ("You", "Since when?")]
    context = _context(new=["never mind, it's sorted"], history=history, gathering="gathering_details")
    name, tool_input = _policy(context, TOOLS_NEW)
    assert name == "close_report" and set(tool_input) == {"reason", "message"}
    name, tool_input = _policy(context, TOOLS)
    assert name == "respond" and "sorted" in tool_input["message"]


def test_a_refused_photo_request_falls_back_to_a_question():
    messages = _context(new=["The kitchen tap is leaking"])
    messages += [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "ask_for_photo", "input": {"message": "Photo?"}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "too early", "is_error": True}],
        },
    ]
    name, tool_input = _policy(messages, TOOLS_NEW)
    assert name == "ask_for_details" and "?" in tool_input["question"]


def test_an_unknown_number_is_asked_for_the_address_and_the_problem_acknowledged():
    name, tool_input = _policy(_context(new=["Hola, la caldera no funciona"], identity="unidentified"), TOOLS)
    assert name == "respond" and "dirección" in tool_input["message"]
    name, tool_input = _policy(_context(new=["12 Harbour Street, LS1 4AB"], identity="unidentified"), TOOLS)
    assert (name, tool_input) == ("find_property", {"address": "12 Harbour Street, LS1 4AB"})


def test_small_talk_before_the_problem_is_not_in_the_description():
    history = [
        ("Tenant", "Jaka będzie jutro pogoda"),
        ("You", NOT_UNDERSTOOD),
        ("Tenant", "the bathroom tap is leaking"),
        ("You", "Thanks, that helps. Could you send a photo of it?"),
    ]
    name, tool_input = _policy(_context(new=["no photo, sorry"], history=history, gathering="awaiting_photo"), TOOLS)
    assert name == "create_issue"
    assert tool_input["description"] == "the bathroom tap is leaking"


def test_a_photo_sent_first_then_explained_files_the_issue_with_it():
    history = [
        ("Tenant", " [sent 1 photo(s)]"),
        ("You", "Thanks for the photo. What does it show, and where in your home is it?"),
    ]
    messages = _context(
        new=["water coming through the ceiling in the bathroom"], history=history, gathering="gathering_details"
    )
    messages[0]["content"] = messages[0]["content"].replace(
        "Photo received for this report: no", "Photo received for this report: yes"
    )
    name, tool_input = _policy(messages, TOOLS)
    assert name == "create_issue"
    assert (tool_input["photo"], tool_input["location"], tool_input["category"]) == ("provided", "bathroom", "plumbing")


def test_a_photo_with_no_words_first_gets_a_question_about_it():
    messages = _context(new=[""])
    messages[0]["content"] = messages[0]["content"].replace("Tenant: ", "Tenant:  [sent 1 photo(s)]")
    name, tool_input = _policy(messages, TOOLS)
    assert name == "ask_for_details" and "photo" in tool_input["question"]
