"""A home address in a message is taken out before the rules and the
classifier read it; the sentence around it, and any hazard in it, stay."""

from __future__ import annotations

import pytest

from emergencies.home_address import address_coverage, address_remove
from emergencies.matching import emergency_match
from emergencies.measure import addresses_measure

# (message, the address in it) in each country's and language's own format,
# on streets named after water, fire and forges.
ADDRESSES = [
    ("boiler's dead, 12 Flood Street LS1 4AB", "12 Flood Street LS1 4AB"),
    ("Flat 3, 7 Smoke House Lane, SE1 2AB. the fridge is warm", "Flat 3, 7 Smoke House Lane, SE1 2AB"),
    ("handle came off the window, Apt 4B, 221 Firehouse Rd, NY 10001", "Apt 4B, 221 Firehouse Rd, NY 10001"),
    ("hi, 5 Brook Park D12 X4F9, tap is dripping", "5 Brook Park D12 X4F9"),
    ("the bath leaks, I live on Smokehouse Lane, Leeds.", "Smokehouse Lane, Leeds"),
    ("ul. Ogniowa 3/14, kran cieknie", "ul. Ogniowa 3/14"),
    ("zamek sie zacina, mieszkam na ulicy Wodnej 8 m. 2, 30-001", "ulicy Wodnej 8 m. 2, 30-001"),
    ("C/ de la Fuente 12, 3º B: la persiana no baja", "C/ de la Fuente 12, 3º B"),
    ("vivo en Calle Incendio 4, piso 2 y el grifo gotea", "Calle Incendio 4, piso 2"),
    ("Rua do Poço, 45, 2º Esq, 1200-001 Lisboa - a sanita não descarrega", "Rua do Poço, 45, 2º Esq, 1200-001 Lisboa"),
    ("Str. Izvorului nr. 7, bl. A2, ap. 14 - nu merge interfonul", "Str. Izvorului nr. 7, bl. A2, ap. 14"),
    # a flat and a building's name before the street, in the tenant's language
    (
        "Flat 14, The Old Fire Station, Windmill Lane, E1 6AB: the lock sticks",
        "Flat 14, The Old Fire Station, Windmill Lane, E1 6AB",
    ),
    ("Mieszkanie 9, 112 Well Road - kran cieknie", "Mieszkanie 9, 112 Well Road"),
    ("el grifo gotea, apto 4D, 560 W 180th St, NY 10033", "apto 4D, 560 W 180th St, NY 10033"),
    ("7 Millbrook Lawns, Tallaght, D24 K2W8 - the blind is stuck", "7 Millbrook Lawns, Tallaght, D24 K2W8"),
]


@pytest.mark.parametrize(("text", "address"), ADDRESSES)
def test_an_address_in_any_of_the_five_formats_is_taken_out_and_the_rest_kept(text, address):
    remaining = address_remove(text)
    assert address not in remaining
    for word in text.replace(address, " ").split():
        assert word.strip(",.:-") in remaining


# Numbers and street words in sentences that are not addresses: the hazard must stay.
SENTENCES = [
    "2 pipes burst in the street and water is coming under the door",
    "there's been 3 floods in the road this week",
    "la calle esta inundada desde hace 3 dias y entra agua",
    "os canos rebentaram 2 vezes hoje",
    "smoke alarm-ul piuie din 5 in 5 min si e fum",
    "w pl. 2 razy iskrzylo z gniazdka",
    "the boiler is 10 years old",
    "FIRE IN THE BIN ROOM its coming up the stairs, called 911",
    "room 3 is freezing and the window wont shut",
]


def test_a_word_that_starts_with_a_flat_word_stays():
    assert address_remove("my flatmate 12 Oak Street lost the key") == "my flatmate lost the key"


@pytest.mark.parametrize("text", SENTENCES)
def test_a_sentence_with_numbers_and_street_words_is_not_an_address(text):
    assert address_remove(text) == text


@pytest.mark.django_db
def test_a_one_word_rule_does_not_fire_on_a_street_named_after_the_hazard():
    assert emergency_match("no hot water, 14 Flood Court, 11201", organization_id=None, country="US").category is None
    portuguese = emergency_match("Boa noite, Rua da Fumo 3, sem aquecimento", organization_id=None, country="GB")
    assert portuguese.category is None
    assert emergency_match("14 Flood Court: the kitchen is flooding", organization_id=None, country="US").category == (
        "flooding"
    )


def test_coverage_measures_how_much_of_a_labelled_address_is_taken_out():
    assert address_coverage("tap drips, 12 Flood Street LS1 4AB", "12 Flood Street LS1 4AB") == 1.0
    assert address_coverage("tap drips, Rose Cottage, Little Wenham", "Rose Cottage, Little Wenham") == 0.0
    assert (
        0 < address_coverage("tap drips, 12 Flood Street, Leeds, West Yorks", "12 Flood Street, Leeds, West Yorks") < 1
    )
    with pytest.raises(ValueError):
        address_coverage("tap drips", "12 Flood Street")


def test_measuring_reports_the_labelled_addresses_whole_in_part_and_missed():
    rows = [
        {"text": "tap drips, 12 Flood Street LS1 4AB", "provenance": {"address": "12 Flood Street LS1 4AB"}},
        {
            "text": "tap drips, 12 Flood Street, Leeds, W Yorks",
            "provenance": {"address": "12 Flood Street, Leeds, W Yorks"},
        },
        {"text": "tap drips, Rose Cottage", "provenance": {"address": "Rose Cottage"}},
        {"text": "tap drips", "provenance": {}},
    ]
    found = addresses_measure(rows)
    assert (found["n"], found["whole"], found["in_part"], found["not_at_all"]) == (3, 1, 1, 1)
    assert addresses_measure(rows[3:]) is None


def test_a_capitalised_hazard_after_an_address_is_not_taken_for_a_town():
    assert address_remove("12 Mill Road, Gas smell in the kitchen") == ", Gas smell in the kitchen"
    assert address_remove("12 Mill Road, Leeds. Gas smell in the kitchen") == ". Gas smell in the kitchen"
