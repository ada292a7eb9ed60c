"""The scripted model's reading of a tenant's words (``llm.scripted_summary``):
what the title, category, urgency and place of a report are, which language it
is in, when it has nothing to go on, and whether a passage answers a question.

The messages were written from situations (a tenant with no heating, a
Spanish tenant with a dripping tap, gibberish, a football question) before the
code, in English, Spanish and Polish and in several phrasings."""

from __future__ import annotations

import pytest

from llm.scripted_summary import (
    language_of,
    looks_like_words,
    passage_fits,
    report_summary,
    say,
    understood,
    went_away,
)

# (messages of one report, category, urgency, location ("" = must be asked), words the title must contain)
REPORTS = [
    (
        ["Hi, my boiler has stopped working, no heating or hot water"],
        "heating",
        "urgent",
        "",
        ["Boiler", "not working", "no heating", "hot water"],
    ),
    (["The kitchen tap is leaking"], "plumbing", "routine", "kitchen", ["Tap", "leak"]),
    (["hello", "water dripping from the tap in the bathroom!!"], "plumbing", "routine", "bathroom", ["Tap", "leak"]),
    (["Hola, la caldera no funciona y no hay agua caliente"], "heating", "urgent", "", ["Boiler", "hot water"]),
    (["Buenos días, el grifo de la cocina gotea"], "plumbing", "routine", "kitchen", ["Tap", "leak"]),
    (["Dzień dobry, w łazience cieknie kran"], "plumbing", "routine", "bathroom", ["Tap", "leak"]),
    (["Nie ma prądu w całym mieszkaniu"], "electrical", "urgent", "whole property", ["power"]),
    (["I'm locked out, I lost my keys"], "security", "urgent", "front door", ["locked out"]),
    (["There's black mould on the bedroom wall"], "damp_mould", "routine", "bedroom", ["ould"]),
    (["Hay moho en el dormitorio"], "damp_mould", "routine", "bedroom", ["ould"]),
    (["mice in the kitchen cupboards 2"], "pests", "routine", "kitchen", ["Pests"]),
    (["the oven won't turn on"], "appliances", "routine", "kitchen", ["Oven", "not working"]),
    (["Lodówka przestała działać"], "appliances", "routine", "kitchen", ["Fridge", "not working"]),
    (["the toilet is blocked"], "plumbing", "routine", "bathroom", ["Toilet", "blocked"]),
    (["The smoke alarm in the hallway keeps beeping"], "safety", "routine", "hallway", ["alarm"]),
    (["No tenemos agua en todo el piso"], "plumbing", "urgent", "whole property", ["No water"]),
    (["the radiators are cold", "in the living room"], "heating", "urgent", "living room", ["heating"]),
    (["the front door lock is broken"], "security", "routine", "front door", ["Lock not working"]),
    (["There is a wasp nest in the garden"], "pests", "routine", "garden", ["Pests in garden"]),
    (["The shower in the bathroom doesn't drain"], "plumbing", "routine", "bathroom", ["Shower blocked"]),
    (["W kuchni nie działa zmywarka"], "appliances", "routine", "kitchen", ["Dishwasher not working"]),
]


@pytest.mark.parametrize(("messages", "category", "urgency", "location", "title_words"), REPORTS)
def test_report_is_summarised_categorised_and_placed(messages, category, urgency, location, title_words):
    summary = report_summary(messages)
    assert summary.problem
    assert summary.category == category
    assert summary.urgency == urgency
    assert summary.location == location
    for word in title_words:
        assert word.lower() in summary.title.lower(), summary.title
    assert len(summary.title) <= 80
    # The landlord reads what the tenant said about the problem, all of it.
    for message in messages:
        if understood(message):
            assert message.strip(" !")[1:] in summary.description


def test_boiler_title_reads_like_a_job_not_a_chat_line():
    summary = report_summary(["Hi, my boiler has stopped working, no heating or hot water"])
    assert summary.title == "Boiler not working: no heating or hot water"
    assert summary.description == "Hi, my boiler has stopped working, no heating or hot water"


def test_a_title_says_each_thing_once():
    assert report_summary(["my heating isn't working in the bedroom"]).title == "Heating not working in bedroom"
    assert report_summary(["the front door lock is broken"]).title == "Lock not working at front door"


def test_title_from_unrecognised_words_drops_greetings_fillers_and_trailing_numbers():
    summary = report_summary(["Hello, my strange noise coming from behind the wardrobe 1"])
    assert summary.title == "Strange noise coming from behind the wardrobe"


def test_an_emergency_alert_makes_the_report_an_emergency():
    summary = report_summary(["I can smell gas in the kitchen"], emergency=True)
    assert (summary.category, summary.urgency, summary.location) == ("gas", "emergency", "kitchen")
    assert report_summary(["I can smell gas in the kitchen"]).urgency != "emergency"  # only the alert decides


def test_a_fixture_is_not_a_stated_place_but_a_room_is():
    assert not report_summary(["my boiler is broken"]).place_stated
    assert not report_summary(["the oven won't turn on"]).place_stated  # kitchen is where ovens are, not what they said
    assert report_summary(["the boiler in the kitchen is broken"]).place_stated


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Hi, my boiler has stopped working", "en"),
        ("Hola, la caldera no funciona", "es"),
        ("¿Quién ganó el partido ayer?", "es"),
        ("Dzień dobry, nie ma ciepłej wody", "pl"),
        ("Jaka będzie jutro pogoda?", "pl"),
        ("asdkjh qwpoeiru zzxv", "en"),
    ],
)
def test_language_is_guessed_from_common_words_and_letters(text, language):
    assert language_of(text) == language


@pytest.mark.parametrize(
    "text",
    [
        "asdkjh qwpoeiru zzxv",
        "lkjlkj hgfhgf",
        "What's the weather going to be like tomorrow?",
        "Who won the football yesterday",
        "¿Quién ganó el partido ayer?",
        "Jaka będzie jutro pogoda?",
        "ok",
    ],
)
def test_gibberish_and_off_topic_text_is_not_understood(text):
    assert not understood(text)


@pytest.mark.parametrize(
    "text", ["the shower is broken", "se ha roto la ducha", "zepsuł się prysznic", "in the kitchen", "no hot water"]
)
def test_repair_words_are_understood(text):
    assert understood(text)


def test_gibberish_does_not_look_like_words_but_a_place_answer_does():
    assert not looks_like_words("asdkjh qwpoeiru zzxv")
    assert not looks_like_words("lkjlkj hgfhgf")
    assert looks_like_words("next to the telly")


@pytest.mark.parametrize(
    "text",
    [
        "Never mind, it's working again now",
        "it's fixed now thanks",
        "sorted, thanks",
        "ignore that, the problem went away",
        "Ya funciona, gracias",
        "olvídalo, ya está arreglado",
        "Już działa, dziękuję",
        "nieważne, naprawione",
    ],
)
def test_the_problem_went_away(text):
    assert went_away(text)


@pytest.mark.parametrize(
    "text", ["it's still not fixed", "not sorted yet", "it never works", "sigue sin funcionar", "nadal nie działa"]
)
def test_the_problem_did_not_go_away(text):
    assert not went_away(text)


BOILER_PASSAGE = (
    "[1] Boiler manual > Resetting the boiler\n"
    "If the boiler shows a fault, press and hold the reset button for five seconds."
)
KEYS_PASSAGE = "[1] House guide > Keys\nSpare keys can be cut at the hardware shop on the corner; tell the office."


def test_a_passage_fits_a_question_that_shares_its_words():
    assert passage_fits("how do I reset the boiler?", BOILER_PASSAGE)
    assert passage_fits("¿Cómo reinicio la caldera?", BOILER_PASSAGE)  # the word table bridges languages
    assert passage_fits("can I get a spare key cut?", KEYS_PASSAGE)


def test_a_passage_does_not_fit_gibberish_or_an_unrelated_question():
    assert not passage_fits("asdkjh qwpoeiru zzxv", KEYS_PASSAGE)
    assert not passage_fits("who won the football yesterday?", KEYS_PASSAGE)
    assert not passage_fits("how do I reset the boiler?", KEYS_PASSAGE)


def test_nothing_to_say_is_said_in_the_tenants_language():
    assert say("not_understood", "en") == (
        "Sorry, I didn't understand — could you tell me what needs repairing and where?"
    )
    assert say("not_understood", "es").startswith("Lo siento")
    assert say("not_understood", "pl").startswith("Przepraszam")
    assert say("not_understood", "xx") == say("not_understood", "en")
