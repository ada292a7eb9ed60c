"""The home address in a tenant's message, so that a street's name does not decide.

Tenants give their address in the same message as the problem ("boiler's dead,
12 Flood Street LS1 4AB"), and streets are named after wells, brooks, forges,
mills and fire stations. A one-word rule then fires on "Flood Court", and in the
classifier's embedding "Rua da Fonte" pulls a routine report towards flooding.
``address_remove`` takes out what postal conventions mark as an address before
either stage reads the message:

- a number, one to three name words and a street type ("12 Flood Street",
  "Apt 4, 33 Forge Ave, NY 10001");
- a street type, a name and a number, as Polish, Spanish, Portuguese and
  Romanian write them ("ul. Wodna 3/14", "C/ de la Fuente 12, 3º B",
  "Rua do Poço, 45, 2º Esq", "Str. Izvorului nr. 7, bl. A2, ap. 14");
- a street named in capitals without a number ("on Smokehouse Lane");
- after any of these, a flat, a town and a postcode; before any of them, a flat
  and a building's name ("Flat 14, The Old Fire Station, Windmill Lane"); and
  UK, Irish, Polish and Portuguese postcodes wherever they stand.

A span whose "name" holds an ordinary word of a sentence ("2 pipes burst in the
street", "la calle esta inundada 3 dias") is not an address and stays: the
hazard in it must still be read. The patterns come from postal formats, not
from any labelled message; ``measure_emergencies --addresses`` and the blind
address batch (docs/emergencies.md) measure what they are worth.
"""

from __future__ import annotations

import re

_NAME = r"(?:[^\W\d_][\w'’.\-]*|\d{1,3}(?:st|nd|rd|th))"  # a word, or an ordinal ("W 180th St")
_NUMBER = r"\d{1,4}[a-z]?"

# A number, a name and a street type (English; the type ends the span).
_EN_TYPES = (
    "street|st|road|rd|lane|ln|avenue|ave|av|drive|dr|close|court|ct|terrace|tce|grove|place|pl|crescent"
    "|cres|way|boulevard|blvd|square|sq|gardens|gdns|row|hill|mews|walk|parade|park|green|rise|vale|wharf"
    "|quay|circle|cir|highway|hwy|parkway|pkwy|pike|trail|alley|estate|heights|view|lawns|end|broadway|yard"
    "|meadows?|grange|croft"
)
# A flat, a room or a floor, in the five languages ("Flat 5", "apto 4D", "Mieszkanie 9", "ap. 14", "2nd floor");
# the word whole ("Flat4B", not "flatmate").
_UNIT_WORDS = (
    r"flat|apartamentul|apartamento|apartament|apartment|apto\.?|apt|ap\.|unit|suite|room|#|mieszkanie"
    r"|pok[oó]j|lokal|piso|depto\.?|departamento"
)
_UNIT = rf"(?:(?:{_UNIT_WORDS})(?![^\W\d_])\s*(?:nr\.?\s*|no\.?\s*)?\w{{1,4}}|\d{{1,2}}(?:st|nd|rd|th)\s+floor)"
_EN_UNIT = rf"(?:(?:{_UNIT}|no\.?\s*\w{{1,4}})[,.]?\s+)?"
_UK = r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}"
_EIRCODE = r"(?:[AC-FHKNPRTV-Y]\d{2}|D6W)\s?[0-9A-Z]{4}"
_PL_PT = r"\d{2}-\d{3}|\d{4}-\d{3}"
# Any country's postcode where it follows an address (a bare number is one only there).
_POSTCODE_AFTER = rf"(?:{_UK}|{_EIRCODE}|(?:[A-Z]{{2}}\s+)?\d{{5}}(?:-\d{{4}})?|{_PL_PT}|\d{{6}})\b"
# After an address: a flat, a town of capitalised words ("Leeds", "Dublin 8")
# where a postcode or the end of a sentence follows it, and a postcode.
_TOWN = r"(?-i:(?:Co\.?\s+)?[A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+){0,2})(?:\s+\d{1,2}\b)?"
_TAIL = (
    rf"(?:,?\s*{_UNIT}\b)?"
    rf"(?:,\s*{_TOWN}(?=\s*(?:[.,!?;:\-]|$|{_POSTCODE_AFTER})))?"
    rf"(?:,?\s*{_POSTCODE_AFTER}(?:\s+{_TOWN}(?=\s*(?:[.,!?;:\-]|$)))?)?"
)
_ENGLISH = re.compile(
    rf"\b{_EN_UNIT}(?P<number>{_NUMBER}),?\s+(?P<name>(?:{_NAME}\s+){{0,2}}{_NAME})\s+(?:{_EN_TYPES})\b\.?{_TAIL}",
    re.IGNORECASE,
)
# A street named without a number, in capitals as on the sign ("on Flood Street").
_EN_NAMED = re.compile(
    r"(?-i:\b(?P<name>(?:[A-Z][\w'’\-]+\s+){0,2}[A-Z][\w'’\-]+)\s+"
    r"(?:Street|St|Road|Rd|Lane|Ln|Avenue|Ave|Drive|Close|Court|Terrace|Grove|Crescent|Way|Boulevard|Blvd"
    r"|Square|Gardens|Mews|Parade|Place|Row|Walk)\b)\.?" + _TAIL,
    re.IGNORECASE,
)

# A street type, a name and a number (Polish, Spanish, Portuguese, Romanian).
# Abbreviations that are also words of another language ("al", "os", "pl") need their dot.
_TYPE_FIRST = (
    r"ul\.?|ulica|ulicy|al\.|aleja|alei|os\.|osiedle|osiedlu|pl\.|plac|placu"
    r"|calle|c/|avenida|avda\.?|av\.|plaza|pza\.|paseo|camino|carretera|ctra\.|ronda|traves[ií]a|urb\."
    r"|rua|r\.|travessa|tv\.|largo|pra[çc]a|estrada|alameda|cal[çc]ada|beco|rotunda"
    r"|str\.?|strada|bd\.|b-dul|bulevardul|calea|aleea|[sș]os\.|[sș]oseaua|splaiul|pia[tț]a|intrarea"
)
_CONNECTORS = r"(?:(?:de|del|de\s+la|de\s+los|de\s+las|la|el|da|do|das|dos|lui)\s+)?"
_NUMBER_MARK = r"(?:n[º°o]\.?\s*|nr\.?\s*|n[uú]mero\s+)?"
_FLAT_PARTS = (
    r"(?:\s*(?:/|m\.?|lok\.?)\s*\d{1,4}"  # Polish 3/14, m. 14
    r"|,?\s*\d{1,2}\s*[º°ª]\s*(?:[a-z]\b|andar|esq\w*|dt\w*|dir\w*|frente|izq\w*|dcha)?"  # 3º B, 2º Esq
    r"|,?\s*(?:piso|puerta|pta\.?|esc\.?|bajo|[aá]tico|andar|bl\.?|bloc|sc\.?|scara|et\.?|etaj|ap\.?|apartament)"
    r"\s*\w{1,4})*"
)
_TYPE_FIRST_RE = re.compile(
    rf"(?<![\w-])(?:{_TYPE_FIRST})(?:(?<=[./])|\b)\s*{_CONNECTORS}(?P<name>(?:{_NAME}\s+){{0,2}}{_NAME}),?\s*{_NUMBER_MARK}"
    rf"(?P<number>{_NUMBER})\b{_FLAT_PARTS}{_TAIL}",
    re.IGNORECASE,
)

# Before an address: a flat and the building's name ("Flat 14, The Old Fire
# Station, Windmill Lane"), taken only where an address follows at once.
_LEAD = re.compile(
    rf"(?<![\w-]){_UNIT}\b[,.]?\s*(?:(?-i:(?:The\s+)?[A-Z][\w'’\-]+(?:\s+[A-Z][\w'’\-]+){{0,3}}),\s*)?",
    re.IGNORECASE,
)

# Postcodes that are one wherever they stand (case kept: "co2 2am" is none).
_POSTCODES = re.compile(rf"\b(?:{_UK}|{_EIRCODE}|{_PL_PT})\b")

# Words of a sentence that no street name is made of: if the "name" holds one,
# the span is a sentence ("3 floods in the street"), not an address.
_SENTENCE_WORDS = frozenset(
    """
    in on at the my our your a an of to from is are was were and or but has have had been for with all this
    that it its down up since about every each hour hours day days week weeks min mins minutes times years
    months people kids degrees just now still again
    esta está hay se no que y con sin un una unos unas por para hace desde lleva son es muy mas más
    dias días horas veces ya
    há ha não nao e com sem é tem estão estao vezes
    nie jest się sie i w na z od juz już dni godzin razy ma
    nu este si și în cu fara fără zile ore ori are
    """.split()  # noqa: SIM905 (a list literal of 130 words reads worse)
)


_COMPASS = frozenset(["N", "S", "E", "W", "NE", "NW", "SE", "SW"])  # "560 W 180th St", in capitals only


def _is_address(match: re.Match[str]) -> bool:
    words = [word for word in match.group("name").split() if word not in _COMPASS]
    return not any(word.casefold() in _SENTENCE_WORDS for word in words)


def address_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` gives an address or a postcode, as (start, end) pairs."""
    patterns = (_ENGLISH, _EN_NAMED, _TYPE_FIRST_RE)
    spans = [m.span() for pattern in patterns for m in pattern.finditer(text) if _is_address(m)]
    spans += [m.span() for m in _POSTCODES.finditer(text)]
    starts = [start for start, _ in spans]
    spans += [m.span() for m in _LEAD.finditer(text) if any(m.start() < s <= m.end() for s in starts)]
    return sorted(spans)


def address_remove(text: str) -> str:
    """``text`` without the addresses and postcodes it gives (itself when it gives none)."""
    spans = address_spans(text)
    if not spans:
        return text
    kept, end = [], 0
    for start, stop in spans:
        if start >= end:
            kept.append(text[end:start])
        end = max(end, stop)
    kept.append(text[end:])
    return re.sub(r"\s{2,}", " ", " ".join(part.strip() for part in kept if part.strip()))


def address_coverage(text: str, address: str) -> float:
    """The share of ``address``'s letters and digits in ``text`` that
    ``address_spans`` finds (for measuring against a labelled address)."""
    start = text.find(address)
    if start < 0 or not address:
        raise ValueError(f"{address!r} is not in the message")
    found = {i for begin, end in address_spans(text) for i in range(begin, end)}
    letters = [i for i in range(start, start + len(address)) if text[i].isalnum()]
    return sum(i in found for i in letters) / len(letters) if letters else 1.0
