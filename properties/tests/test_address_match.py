"""Which property a tenant's words name. The situations come first: what
tenants (and a model passing their words on) really write, including the
near misses that must never be proposed: another street, another house in the
same street, another flat in the same building, another organization's home.
Ambiguity must end in a question, never in a guess."""

import pytest

from properties.address_match import (
    address_match,
    address_parse,
    building_label,
    property_address_match,
    tokens,
    word_close,
)
from properties.models import Property
from properties.tests.factories import OrganizationFactory, PropertyFactory

PORTFOLIO = [
    ("FLAT-1", "Flat 1, 12 Harbour Street, Leeds", "LS1 4AB"),
    ("FLAT-2", "Flat 2, 12 Harbour Street, Leeds", "LS1 4AB"),
    ("HS-14", "14 Harbour Street, Leeds", "LS1 4AB"),
    ("HOUSE-7", "7 Orchard Lane, Headingley, Leeds", "LS6 3HN"),
    ("ROSE", "Rose Cottage, Mill Lane, Otley", "LS21 1AA"),
    ("HR-3", "3 Harbour Road, Leeds", "LS2 7XY"),
    ("WL-4B", "Flat 4B, Canal Wharf, 9 Water Lane, Leeds", "LS11 5QN"),
    ("SJ-22", "22 St John's Road, Leeds", "LS3 1AB"),
    ("GR-5", "5 Grove Road, Leeds", "LS7 1AA"),
    ("DR-5", "5 Drove Road, Leeds", "LS8 1AA"),
    ("CH-2", "Flat 2, 40 Church Street, Hull", "HU1 2AB"),
    ("CL-2", "Flat 2, 40 Church Street, Leeds", "LS9 8CD"),
]

# (what the tenant wrote, the property it names)
MATCHES = [
    ("Flat 1, 12 Harbour Street, Leeds", "FLAT-1"),
    ("flat 1 12 harbor st", "FLAT-1"),  # typo and abbreviation
    ("Flat 1, 12 Harbor St, Leeds LS1 4AB", "FLAT-1"),
    ("12 Harbour Street, flat 1", "FLAT-1"),  # flat after the street
    ("I live at flat 1, 12 harbour street in leeds", "FLAT-1"),  # extra words
    ("Apartment 1, 12 Harbour St.", "FLAT-1"),
    ("apt 2 12 harbour st", "FLAT-2"),
    ("2/12 Harbour Street", "FLAT-2"),  # flat/house
    ("12/2 Harbour Street", "FLAT-2"),  # house/flat, the Scottish way
    ("2, 12 Harbour St", "FLAT-2"),  # "Flat 2," without the word
    ("Flat 2,  12 harbour street", "FLAT-2"),
    ("Flat 1, LS1 4AB", "FLAT-1"),  # flat and postcode
    ("flat1 ls14ab", "FLAT-1"),
    ("14 Harbour Street", "HS-14"),
    ("Harbour Street 14", "HS-14"),  # the number after the street, as many tenants write it
    ("Harbour Street 12, flat 2", "FLAT-2"),
    ("harbour st 12/1", "FLAT-1"),
    ("14 harbour st ls1 4ab", "HS-14"),
    ("no. 14 Harbour Street", "HS-14"),
    ("7 Orchard Lane", "HOUSE-7"),
    ("7 orchad ln", "HOUSE-7"),  # typo in the street name
    ("7 Orchard Lane Headingly", "HOUSE-7"),
    ("LS6 3HN", "HOUSE-7"),  # postcode alone, one home there
    ("ls63hn", "HOUSE-7"),
    ("LS6 3hn", "HOUSE-7"),
    ("the orchard lane house", "HOUSE-7"),
    ("Rose Cottage", "ROSE"),  # a house name
    ("rose cotage, otley", "ROSE"),
    ("Rose Cottage, Mill Lane", "ROSE"),
    ("Mill Lane, Otley", "ROSE"),  # the only home in that street
    ("HOUSE-7", "HOUSE-7"),  # the agency's code
    ("my code is house-7", "HOUSE-7"),
    ("Flat 4b, 9 Water Lane", "WL-4B"),
    ("4B 9 water ln", "WL-4B"),
    ("9 Water Lane, Leeds", "WL-4B"),  # the only flat there: proposed, the tenant confirms
    ("Canal Wharf, Water Lane", "WL-4B"),
    ("22 St Johns Rd", "SJ-22"),
    ("22 St. John's Road", "SJ-22"),
    ("3 Harbour Road", "HR-3"),
    ("5 Grove Road", "GR-5"),  # Grove and Drove both exist: the exact spelling wins
    ("5 Drove Road", "DR-5"),
    ("Flat 2, 40 Church Street, Hull", "CH-2"),  # same address in two towns: the town decides
    ("flat 2 40 church st LS9 8CD", "CL-2"),  # ... or the postcode
]

# Words that name none of the homes: another street, house, flat, postcode or town.
NO_MATCH = [
    "16 Harbour Street",  # a house number we do not manage in that street
    "Harbour Street 16",
    "Flat 3, 12 Harbour Street",  # a flat we do not manage in the building
    "3/12 Harbour Street",
    "12 Harbour Road",  # another street type
    "3 Harbour Street",  # the number of the Harbour Road house
    "12 Harbourside",  # another street that starts the same
    "7 Orchard Close",
    "8 Orchard Lane",
    "Flat 2, 7 Orchard Lane",  # a flat in a house let whole
    "5 Mill Lane, Otley",  # Rose Cottage has no number
    "5 Hill Lane",  # one letter from Mill Lane: short words are exact
    "10 Baker Street, London",
    "LS9 9ZZ",
    "7 Orchard Lane, LS9 9ZZ",  # another postcode: another Orchard Lane
    "hello",
    "",
    "flat 1",  # which building?
    "FLAT",
]

# Words that fit several homes equally: the caller must ask.
AMBIGUOUS = [
    ("12 Harbour Street", {"FLAT-1", "FLAT-2"}, True),
    ("12 harbor st, leeds", {"FLAT-1", "FLAT-2"}, True),
    ("LS1 4AB", {"FLAT-1", "FLAT-2", "HS-14"}, False),
    ("ls14ab", {"FLAT-1", "FLAT-2", "HS-14"}, False),
    ("12, LS1 4AB", {"FLAT-1", "FLAT-2"}, True),
    ("Harbour Street, Leeds", {"FLAT-1", "FLAT-2", "HS-14"}, False),
    ("Flat 2, 40 Church Street", {"CH-2", "CL-2"}, False),
]


@pytest.fixture(scope="module")
def homes():
    return [Property(code=code, address=address, postcode=postcode) for code, address, postcode in PORTFOLIO]


@pytest.mark.parametrize(("text", "code"), MATCHES)
def test_words_that_name_one_home_match_it(homes, text, code):
    result = address_match(text=text, properties=homes)
    assert result.property is not None, f"{text!r} matched nothing (candidates {result.candidates})"
    assert result.property.code == code


@pytest.mark.parametrize("text", NO_MATCH)
def test_words_that_name_another_home_match_nothing(homes, text):
    result = address_match(text=text, properties=homes)
    assert result.property is None, f"{text!r} matched {result.property.code}"
    assert not result.ambiguous


@pytest.mark.parametrize(("text", "codes", "same_building"), AMBIGUOUS)
def test_words_that_fit_several_homes_are_ambiguous(homes, text, codes, same_building):
    result = address_match(text=text, properties=homes)
    assert result.property is None
    assert {p.code for p in result.candidates} == codes
    assert result.same_building is same_building


# Free text from a tenant with two homes: only a clear mention names one.
OWN_HOMES = [
    ("FLAT-1", "Flat 1, 12 Harbour Street, Leeds", "LS1 4AB"),
    ("HOUSE-7", "7 Orchard Lane, Headingley, Leeds", "LS6 3HN"),
]
FREE_TEXT = [
    ("the Orchard Lane house has a leak", "HOUSE-7"),
    ("Hi, there's a leak at 12 harbour st", "FLAT-1"),
    ("water coming through the ceiling at orchard ln for 3 days now", "HOUSE-7"),
    ("boiler broken at LS6 3HN", "HOUSE-7"),
    ("hi the heating is off", None),
    ("the house has a leak", None),
    ("my orchard is flooded", None),  # a street name without its type or number is not a mention
    ("the boiler at orchard lane and the tap at harbour street", None),  # both homes: ask
]


@pytest.mark.parametrize(("text", "code"), FREE_TEXT)
def test_free_text_names_a_home_only_when_clear(text, code):
    homes = [Property(code=c, address=a, postcode=p) for c, a, p in OWN_HOMES]
    result = address_match(text=text, properties=homes, strict=True)
    assert (result.property.code if result.property else None) == code


def test_address_parts_are_read_from_the_stored_address():
    parsed = address_parse(address="Flat 4B, Canal Wharf, 9 Water Lane, Leeds", postcode="LS11 5QN", code="WL-4B")
    assert (parsed.flat, parsed.house, parsed.street_name, parsed.street_type) == ("4b", "9", ("water",), "lane")
    assert parsed.names == (("canal", "wharf"),)
    assert parsed.towns == (("leeds",),)
    assert parsed.postcode == "ls115qn"


def test_normalising_spells_out_abbreviations_and_drops_punctuation():
    assert tokens("Apt. 4, 12 Harbor St., LS1-4AB") == ["flat", "4", "12", "harbor", "street", "ls1", "4ab"]
    assert word_close("harbor", "harbour")
    assert word_close("orchad", "orchard")
    assert not word_close("hill", "mill")
    assert not word_close("harbourside", "harbour")


@pytest.mark.django_db
def test_matching_stays_inside_the_organization():
    alice, bob = OrganizationFactory(), OrganizationFactory()
    PropertyFactory(organization=alice, code="A-1", address="Flat 1, 12 Harbour Street, Leeds", postcode="LS1 4AB")
    PropertyFactory(organization=bob, code="B-3", address="Flat 3, 12 Harbour Street, Leeds", postcode="LS1 4AB")
    assert property_address_match(organization=alice, text="flat 3 12 harbour st").property is None
    assert property_address_match(organization=bob, text="flat 3 12 harbour st").property.code == "B-3"
    assert property_address_match(organization=alice, text="LS1 4AB").property.code == "A-1"


def test_the_building_of_a_flat_is_its_address_without_the_flat():
    assert building_label("Flat 1, 12 Harbour Street, Leeds") == "12 Harbour Street, Leeds"
    assert building_label("Apartment 4B 9 Water Lane") == "9 Water Lane"
    assert building_label("7 Orchard Lane, Leeds") == "7 Orchard Lane, Leeds"
