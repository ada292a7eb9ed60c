"""Made-up home addresses, to teach and to test that an address in a message
does not change the classifier's mind.

Tenants often give their address in the same message as the problem ("boiler's
dead, 12 Harbour Street LS1 4AB"). Few training messages carry one, and in
the embedding a street name or a postcode moves a routine report towards an
emergency: "My boiler has stopped, no heating or hot water" scored 0.57,
followed by "12 Oak Street, LS1 4AB" 0.82, and by "12 Harbour Street" it read
as flooding. Training therefore also learns each of its messages with an
address added (``address_add`` with ``TRAINING_STREETS``), and
``measure_emergencies --addresses`` measures a split with addresses from a
separate list of streets (``MEASURING_STREETS``) that training never saw.
"""

from __future__ import annotations

import random
import string

# Street names, many of them hazard-sounding words people do live on.
TRAINING_STREETS = [
    "Harbour", "Brook", "Mill", "Marsh", "Well", "Oak", "Church", "Station", "Bridge", "Ash",
    "Burnside", "Furnace", "Waterloo", "Kiln", "Victoria", "Park", "Ferry", "Ashburn", "Queen", "Lime",
    "Długa", "Polna", "Mayor", "Río", "Fonte", "Pescadores", "Mării", "Morii", "Fântânii", "Lacului",
]  # fmt: skip
MEASURING_STREETS = [
    "River", "Spring", "Lake", "Tower", "Forge", "Castle", "Canal", "Firth", "Garden", "Elm",
    "Wodna", "Ogniowa", "Fuente", "Molino", "Poço", "Ribeira", "Izvorului", "Podului", "Flood", "Smithy",
]  # fmt: skip

TYPES = {
    ("en", "GB"): ["Street", "Road", "Lane", "Close", "Terrace"],
    ("en", "IE"): ["Street", "Road", "Park", "Avenue", "Grove"],
    ("en", "US"): ["St", "Ave", "Blvd", "Drive", "Court"],
}


def _postcode(rng: random.Random, country: str) -> str:
    letter = lambda: rng.choice(string.ascii_uppercase)  # noqa: E731
    if country == "US":
        return f"{rng.randint(10000, 99999)}"
    if country == "IE":
        return f"D{rng.randint(1, 24):02d} {letter()}{rng.randint(1, 9)}{letter()}{rng.randint(1, 9)}"
    return f"{letter()}{letter()}{rng.randint(1, 20)} {rng.randint(1, 9)}{letter()}{letter()}"


def address_make(rng: random.Random, *, language: str, country: str, streets: list[str]) -> str:
    street, number, flat = rng.choice(streets), rng.randint(1, 240), rng.randint(1, 30)
    if language == "pl":
        return f"ul. {street} {number}/{flat}"
    if language == "es":
        return f"Calle {street} {number}, {flat % 6 + 1}º"
    if language == "pt":
        return f"Rua da {street}, {number}, {flat % 5 + 1}º"
    if language == "ro":
        return f"Str. {street} nr. {number}, ap. {flat}"
    kinds = TYPES.get(("en", country), TYPES[("en", "GB")])
    flat_part = rng.choice(["", f"Flat {flat}, ", f"Apt {flat}, " if country == "US" else f"{flat} "])
    return f"{flat_part}{number} {street} {rng.choice(kinds)}, {_postcode(rng, country)}"


LEADS = {
    "en": ["", "I live at ", "address is ", "im at "],
    "pl": ["", "mieszkam na ", "adres: "],
    "es": ["", "vivo en ", "la direccion es "],
    "pt": ["", "moro na ", "morada: "],
    "ro": ["", "stau pe ", "adresa: "],
}


def address_add(text: str, rng: random.Random, *, language: str, country: str, streets: list[str]) -> str:
    """``text`` with an address before or after it, as tenants write one."""
    address = rng.choice(LEADS.get(language, LEADS["en"])) + address_make(
        rng, language=language, country=country, streets=streets
    )
    return f"{address}. {text}" if rng.random() < 0.3 else f"{text} {address}"
