"""Which of an organization's properties a tenant's words name.

A model passes what the tenant wrote: "12 Harbor St", "ls14ab", "Flat 4,",
"I live at flat 2 12 harbour street", a house name, the agency's code. Both
sides are normalised the same way (case, accents, punctuation, "St" ->
"street", "apt" -> "flat"), then each property is checked piece by piece:

- the street name, word by word, with a typo or two allowed in long words
  (never in short ones: Mill Lane is not Hill Lane); a street type the tenant
  gives must be the property's (Harbour Road is not Harbour Street);
- the house number just before the street and any flat number ("flat 4",
  "4, 12 ...", "4/12 ...") must be the property's own: a different house or
  flat in the same street is never proposed;
- a postcode compared without spaces or case; a different full postcode rules
  the property out;
- a house name ("Rose Cottage") or the agency's code ("HOUSE-7").

The best candidates decide: one property named completely is a match; one
property named with a part left out (no flat number, postcode only) is a match
the tenant confirms; several equally good ones are ambiguous, and the caller
asks (which flat, or the full address) instead of guessing.

The organization's properties are read in one query (four columns) and
checked in Python; everything stays inside one organization.
"""

from __future__ import annotations

import builtins
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from properties.models import Organization, Property

STREET_TYPES = frozenset(
    {
        *("street", "road", "lane", "avenue", "drive", "close", "court", "crescent", "gardens", "grove", "place"),
        *("square", "terrace", "way", "walk", "row", "mews", "parade", "boulevard", "wharf", "yard"),
    }
)
ABBREVIATIONS = {
    "st": "street",
    "str": "street",
    "rd": "road",
    "ln": "lane",
    "ave": "avenue",
    "av": "avenue",
    "dr": "drive",
    "cl": "close",
    "ct": "court",
    "cres": "crescent",
    "cresc": "crescent",
    "gdns": "gardens",
    "gr": "grove",
    "gro": "grove",
    "pl": "place",
    "sq": "square",
    "ter": "terrace",
    "terr": "terrace",
    "tce": "terrace",
    "wy": "way",
    "apartment": "flat",
    "apt": "flat",
    "flt": "flat",
    "unit": "flat",
}
FLAT_WORD = "flat"
NAME_STOPWORDS = frozenset({"the"})
_UNIT = re.compile(r"^(\d+[a-z]?|[a-z])$")  # a house or flat number: 12, 12a, 4b, or a lone letter (flat B)
_NUMBER = re.compile(r"^\d+[a-z]?$")
_GB_POSTCODE = re.compile(r"^[a-z]{1,2}\d[a-z\d]?\d[a-z]{2}$")


def tokens(text: str) -> list[str]:
    """Lower case, accents and apostrophes gone, punctuation as spaces,
    abbreviations spelt out, "no." before a number dropped."""
    text = unicodedata.normalize("NFKD", text.lower())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = re.sub(r"['’`]", "", text)
    words = [ABBREVIATIONS.get(w, w) for w in re.split(r"[^a-z0-9]+", text) if w]
    # "flat4" -> "flat 4"
    split: list[str] = []
    for w in words:
        m = re.match(r"^flat(\d+[a-z]?)$", w)
        split += [FLAT_WORD, m.group(1)] if m else [w]
    return [
        w
        for i, w in enumerate(split)
        if not (w in ("no", "number") and i + 1 < len(split) and split[i + 1][0].isdigit())
    ]


def compact(text: str) -> str:
    return "".join(tokens(text))


def _edits(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (adjacent transpositions count once)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def word_close(said: str, ours: str) -> bool:
    """The same word, or a typo of it: one slip in a word of 5-7 letters, two
    from 8; short words and numbers must be exact."""
    if said == ours:
        return True
    if not (said.isalpha() and ours.isalpha()) or len(ours) < 5:
        return False
    return _edits(said, ours) <= (1 if len(ours) < 8 else 2)


@dataclass(frozen=True)
class ParsedAddress:
    flat: str = ""
    house: str = ""
    street_name: tuple[str, ...] = ()
    street_type: str = ""
    names: tuple[tuple[str, ...], ...] = ()  # house or building names: ("rose", "cottage")
    towns: tuple[tuple[str, ...], ...] = ()
    postcode: str = ""  # compact: "ls14ab"
    code: str = ""  # lower case, punctuation kept: "house-7"


def address_parse(*, address: str, postcode: str = "", code: str = "") -> ParsedAddress:
    """The parts of a property's address. The segment with a house number is
    the street; segments before it are names, after it towns."""
    segments = [tokens(s) for s in re.split(r"[,\n;]+", address)]
    flat = house = street_type = ""
    street_name: tuple[str, ...] = ()
    street_at = -1
    rest: list[list[str]] = []
    for n, words in enumerate(segments):
        kept: list[str] = []
        i = 0
        while i < len(words):
            w = words[i]
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if w == FLAT_WORD and _UNIT.match(nxt):
                flat, i = nxt, i + 2
                continue
            if _NUMBER.match(w) and _NUMBER.match(nxt) and not flat:  # "1/12 Harbour Street"
                flat, i = w, i + 1
                continue
            if street_at < 0 and _NUMBER.match(w) and nxt.isalpha():
                house, street_at = w, n
                street_words = words[i + 1 :]
                types = [k for k, s in enumerate(street_words) if s in STREET_TYPES]
                end = types[-1] + 1 if types else len(street_words)
                street_name, street_type = _street_split(street_words[:end])
                kept += street_words[end:]  # "12 Harbour Street Leeds": the town
                break
            kept.append(w)
            i += 1
        rest.append(kept)
    if street_at < 0:  # no house number: the first segment that ends in a street type
        for n, words in enumerate(rest):
            if words and words[-1] in STREET_TYPES and len(words) > 1:
                street_name, street_type = _street_split(words)
                street_at, rest[n] = n, []
                break
    names = tuple(tuple(w for w in words if w not in NAME_STOPWORDS) for words in rest[: max(street_at, 0)])
    towns = tuple(tuple(words) for words in rest[max(street_at, 0) :] if words)
    return ParsedAddress(
        flat=flat,
        house=house,
        street_name=street_name,
        street_type=street_type,
        names=tuple(n for n in names if n),
        towns=towns,
        postcode=compact(postcode),
        code=code.strip().lower(),
    )


def _street_split(words: list[str]) -> tuple[tuple[str, ...], str]:
    name = [w for w in words if w not in NAME_STOPWORDS]
    if len(name) > 1 and name[-1] in STREET_TYPES:
        return tuple(name[:-1]), name[-1]
    return tuple(name), ""  # "The Crescent", "Broadway": the name is the whole street


@dataclass
class Said:
    """What the tenant's words contain, read once for all properties."""

    raw: str
    words: list[str]
    postcodes: set[str]  # full GB postcodes written in the text, compact
    postcode_spans: set[int]  # word positions that belong to a postcode
    flats: set[str]  # numbers after "flat" / "apartment" / "unit"
    flat_spans: set[int]


def said_read(text: str) -> Said:
    words = tokens(text)
    postcodes: set[str] = set()
    spans: set[int] = set()
    for i, w in enumerate(words):
        pairs = [(i, w)] + ([(i + 1, w + words[i + 1])] if i + 1 < len(words) else [])
        for j, joined in pairs:  # "ls14ab" or "ls1 4ab"
            if _GB_POSTCODE.match(joined):
                postcodes.add(joined)
                spans.update(range(i, j + 1))
    flats: set[str] = set()
    flat_spans: set[int] = set()
    for i, w in enumerate(words[:-1]):
        if w == FLAT_WORD and _UNIT.match(words[i + 1]):
            flats.add(words[i + 1])
            flat_spans.update((i, i + 1))
    return Said(
        raw=text.lower(), words=words, postcodes=postcodes, postcode_spans=spans, flats=flats, flat_spans=flat_spans
    )


@dataclass
class Candidate:
    property: Property
    complete: bool  # named completely (nothing left out that tells two homes apart)
    quality: int  # tie-break among equally complete ones: exact spelling, postcode, town
    building: tuple[str, ...] = ()  # street and house number: candidates sharing it differ by flat


@dataclass
class AddressMatch:
    """``property`` when one property fits; ``candidates`` when several fit
    equally (ask which); neither when nothing fits."""

    property: Property | None = None
    candidates: list[Property] = field(default_factory=list)
    same_building: bool = False  # the candidates differ only by flat number

    @builtins.property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1


def _window(said: Said, phrase: tuple[str, ...]) -> tuple[int, bool] | None:
    """Where ``phrase`` is in the tenant's words (start, spelt exactly), the
    exact place preferred."""
    k = len(phrase)
    best: tuple[int, bool] | None = None
    for i in range(len(said.words) - k + 1):
        window = said.words[i : i + k]
        if all(word_close(w, p) for w, p in zip(window, phrase, strict=True)):
            exact = tuple(window) == phrase
            if best is None or (exact and not best[1]):
                best = (i, exact)
    return best


def _street(said: Said, parsed: ParsedAddress) -> tuple[int, int, bool, bool] | None:
    """(start, end, exact, typed) of the property's street in the tenant's
    words, or None. A different street type after the name rules it out."""
    if not parsed.street_name:
        return None
    k = len(parsed.street_name)
    found = None
    for i in range(len(said.words) - k + 1):
        window = said.words[i : i + k]
        if not all(word_close(w, p) for w, p in zip(window, parsed.street_name, strict=True)):
            continue
        after = said.words[i + k] if i + k < len(said.words) else ""
        typed = bool(parsed.street_type) and word_close(after, parsed.street_type)
        if after in STREET_TYPES and parsed.street_type and after != parsed.street_type:
            continue  # Harbour Road is not Harbour Street
        exact = tuple(window) == parsed.street_name
        hit = (i, i + k + (1 if typed else 0), exact, typed)
        if found is None or (exact, typed) > (found[2], found[3]):
            found = hit
    return found


def _loose_numbers(said: Said) -> set[str]:
    skip = said.postcode_spans | said.flat_spans
    return {w for i, w in enumerate(said.words) if i not in skip and _NUMBER.match(w)}


def candidate_check(said: Said, parsed: ParsedAddress, prop: Property, *, strict: bool) -> Candidate | None:
    """Whether the tenant's words name ``prop``, and how completely. ``strict``
    (free text rather than an address) asks more of a street mention: its type
    or a house number beside it, so "the park" does not name Park Lane."""
    if (
        parsed.postcode
        and said.postcodes
        and parsed.postcode not in said.postcodes
        and min(_edits(parsed.postcode, p) for p in said.postcodes) > 1
    ):
        return None  # another full postcode: another place
    postcode_hit = bool(parsed.postcode) and any(
        parsed.postcode in (w, w + (said.words[i + 1] if i + 1 < len(said.words) else ""))
        for i, w in enumerate(said.words)
    )
    code_hit = len(parsed.code) >= 3 and bool(re.search(rf"(?<![\w-]){re.escape(parsed.code)}(?![\w-])", said.raw))
    street = _street(said, parsed)
    before: list[str] = []
    if street is not None:
        i = street[0] - 1
        while i >= 0 and len(before) < 2 and _NUMBER.match(said.words[i]) and i not in said.flat_spans:
            before.append(said.words[i])
            i -= 1
        # None before: "Harbour Street 12" (or "12/1"), as many tenants write it.
        after = [(j, w) for j, w in enumerate(said.words[street[1] : street[1] + 2], street[1]) if _NUMBER.match(w)]
        taken = said.flat_spans | said.postcode_spans
        if not before and after and after[0][0] == street[1]:
            before = [w for n, (j, w) in enumerate(after) if j == street[1] + n and j not in taken]
        if strict and not (street[3] or before):
            street = None
    name_hit = any(_window(said, name) is not None for name in parsed.names if sum(map(len, name)) >= 5)
    if not (postcode_hit or code_hit or street is not None or name_hit):
        return None
    if code_hit:
        return Candidate(property=prop, complete=True, quality=3)
    flats = set(said.flats)
    if street is not None:
        house = before[0] if before else ""
        if len(before) == 2:
            if parsed.flat and set(before) == {parsed.flat, parsed.house}:  # "2/12" or "12/2"
                house, flats = parsed.house, flats | {parsed.flat}
            else:
                flats.add(before[1])
        if house and house != parsed.house:
            return None  # another house in the same street (or a number this home does not have)
        if flats and parsed.flat not in flats:
            return None  # another flat, or a flat in a house we let whole
        house_missing = bool(parsed.house) and not house
        flat_missing = bool(parsed.flat) and not flats
    else:
        # A postcode, a house name or a code: any other number must be this home's.
        loose = _loose_numbers(said)
        if not loose <= {parsed.house, parsed.flat} - {""} or (flats and parsed.flat not in flats):
            return None
        house_missing = bool(parsed.house) and parsed.house not in loose and not name_hit
        flat_missing = bool(parsed.flat) and not flats and parsed.flat not in loose - {parsed.house}
    town_hit = any(_window(said, town) is not None for town in parsed.towns)
    quality = (2 if postcode_hit else 0) + (1 if street is not None and street[2] else 0) + (1 if town_hit else 0)
    return Candidate(
        property=prop,
        complete=not (house_missing or flat_missing),
        quality=quality,
        building=(
            *parsed.street_name,
            parsed.street_type,
            parsed.house,
            parsed.postcode,
            *(parsed.towns[0] if parsed.towns else ()),
        ),
    )


def address_match(*, text: str, properties: Iterable[Property], strict: bool = False) -> AddressMatch:
    """The property among ``properties`` that ``text`` names (see the module
    docstring for the rules)."""
    said = said_read(text[:500])
    if not said.words:
        return AddressMatch()
    found = []
    for prop in properties:
        parsed = address_parse(address=prop.address, postcode=prop.postcode, code=prop.code)
        candidate = candidate_check(said, parsed, prop, strict=strict)
        if candidate is not None:
            found.append(candidate)
    if not found:
        return AddressMatch()
    complete = [c for c in found if c.complete] or found
    top = max(c.quality for c in complete)
    best = [c for c in complete if c.quality == top]
    if len(best) == 1:
        return AddressMatch(property=best[0].property)
    return AddressMatch(
        candidates=sorted((c.property for c in best), key=lambda p: p.code),
        same_building=len({c.building for c in best}) == 1,
    )


def building_label(address: str) -> str:
    """The address without its flat: "Flat 1, 12 Harbour Street, Leeds" -> "12 Harbour Street, Leeds"."""
    return re.sub(r"^\s*(flat|apartment|apt\.?|unit)\s*[\w-]+\s*[,/]?\s*", "", address, flags=re.IGNORECASE) or address


def property_address_match(*, organization: Organization, text: str) -> AddressMatch:
    """``address_match`` over one organization's properties."""
    properties = Property.objects.filter(organization=organization).only("id", "code", "address", "postcode")
    return address_match(text=text, properties=properties)
