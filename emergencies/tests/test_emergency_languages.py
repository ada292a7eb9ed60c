"""The safety reply is in the language the tenant wrote in, where the product
has one for that danger; otherwise in English."""

from __future__ import annotations

import pytest

from emergencies.defaults import SAFETY_NUMBERS, SAFETY_TRANSLATIONS
from emergencies.models import SafetyMessage
from emergencies.testing import safety_texts, screen_waiting
from orchestration.testing.fixtures import ORG_NUMBER, PHONE

pytestmark = pytest.mark.django_db


def safety_text(post_inbound, body: str) -> str:
    """The safety text the tenant gets (from the emergency worker)."""
    response = post_inbound(phone=PHONE, to=ORG_NUMBER, body=body)
    assert response.status_code == 200
    screen_waiting()
    return "\n".join(safety_texts(PHONE))


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Czuję gaz w kuchni", "Jeśli czujesz gaz"),
        ("Huele a gas en la cocina", "Si huele a gas"),
        ("Miroase a gaz în bucătărie", "Dacă simțiți miros de gaz"),
        ("Cheira a gás na cozinha", "Se cheirar a gás"),
        ("I can smell gas in the kitchen", "If you smell gas"),
    ],
)
def test_a_gas_leak_is_answered_in_the_tenants_language_with_the_countrys_number(home, post_inbound, body, expected):
    reply = safety_text(post_inbound, body)
    assert expected in reply
    assert "0800 111 999" in reply  # the organization is in Great Britain


def test_a_danger_without_a_translation_gets_the_english_advice(home, post_inbound):
    assert "turn off the water at the stopcock" in safety_text(post_inbound, "Zalało mieszkanie, woda leci z sufitu")


def test_the_organizations_own_text_in_the_language_comes_first(home, post_inbound):
    SafetyMessage.objects.create(
        organization=home, country="GB", category="gas", language="pl", body="Wyjdź i dzwoń: 0800 111 999 (Harbour)"
    )
    SafetyMessage.objects.create(organization=home, country="GB", category="gas", body="Our own English gas text")
    assert "Wyjdź i dzwoń: 0800 111 999 (Harbour)" in safety_text(post_inbound, "Czuję gaz w kuchni")


def test_the_organizations_own_english_text_follows_the_default_in_the_tenants_language(home, post_inbound):
    SafetyMessage.objects.create(
        organization=home, country="GB", category="gas", body="Our on-call engineer: +447700900999."
    )
    reply = safety_text(post_inbound, "Czuję gaz w kuchni")
    assert reply.index("Jeśli czujesz gaz") < reply.index("Our on-call engineer: +447700900999.")


def test_every_translation_is_seeded_for_every_country_with_its_numbers():
    for country, numbers in SAFETY_NUMBERS.items():
        for language, templates in SAFETY_TRANSLATIONS.items():
            for category in templates:
                body = SafetyMessage.objects.get(
                    organization=None, country=country, category=category, language=language
                ).body
                assert "{" not in body
                assert numbers["gas_line" if category == "gas" else "emergency"] in body
