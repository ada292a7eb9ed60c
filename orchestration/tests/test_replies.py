"""The texts the product writes itself reach the tenant in their language,
also when no model is called."""

from __future__ import annotations

import pytest

from issues.models import Issue
from orchestration.replies import REPLIES, language_guess
from orchestration.testing.fixtures import call, conversation_for, issue_call

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("My boiler is not working and there is no hot water", "en"),
        ("Mam przeciek w łazience, woda kapie z sufitu", "pl"),
        ("Nie działa ogrzewanie", "pl"),
        ("Tengo una fuga de agua en el baño", "es"),
        ("Hola, la caldera no funciona", "es"),
        ("Am o scurgere de apă în baie și nu merge boilerul", "ro"),
        ("Tenho uma fuga de água na casa de banho", "pt"),
        ("A caldeira não funciona", "pt"),
        ("ok", None),
        ("", None),
        ("F22", None),
    ],
)
def test_language_is_guessed_from_the_tenants_words(text, language):
    assert language_guess(text) == language


def test_every_text_exists_in_every_language_with_the_same_placeholders():
    for key, texts in REPLIES.items():
        assert set(texts) == {"en", "pl", "es", "ro", "pt"}, key
        placeholders = {
            language: sorted(part.split("}")[0] for part in text.split("{")[1:]) for language, text in texts.items()
        }
        assert len({tuple(p) for p in placeholders.values()}) == 1, key


def test_the_reference_line_follows_the_tenants_language(home, tenant_says):
    tenant_says("W łazience kapie kran przy umywalce", model=[call("ask_for_details", question="Od kiedy?")])
    tenant_says("Od wczoraj, kapie cały czas", model=[call("ask_for_photo", message="Czy możesz przysłać zdjęcie?")])
    [reply] = tenant_says(
        "Nie mogę zrobić zdjęcia, proszę przysłać kogoś",
        model=[issue_call(photo="declined", message="Zgłoszenie przyjęte.")],
    )
    issue = Issue.objects.get()
    assert reply == f"Zgłoszenie przyjęte.\nNumer Twojego zgłoszenia: {issue.reference}."
    assert conversation_for().language == "pl"


def test_a_short_reply_keeps_the_language_already_known(home, tenant_says):
    tenant_says("Tengo una fuga de agua en el baño", model=[call("ask_for_details", question="¿Desde cuándo?")])
    tenant_says("ok", model=[call("respond", message="Vale.")])
    assert conversation_for().language == "es"


def test_the_fallback_after_an_outage_is_in_the_tenants_language(home, tenant_says):
    [reply] = tenant_says("Hola, la caldera no funciona", model=[{"error": "unavailable"}])
    assert reply.startswith("Lo siento, ahora mismo tengo problemas para responder.")
    assert "Harbour Lettings" in reply


def test_with_the_assistant_off_the_acknowledgement_is_in_the_tenants_language(home, tenant_says):
    home.llm_orchestration_enabled = False
    home.save()
    [reply] = tenant_says("Dzień dobry, nie działa ogrzewanie")
    # The first reply greets by the WhatsApp profile name the webhook posted ("Tenant" in the tests).
    assert reply.startswith("Dzień dobry, Tenant! Dziękujemy za wiadomość.") and "Harbour Lettings" in reply
