"""How the scripted model reads a tenant's words, without Claude: a small
word table in English, Spanish and Polish, and nothing else (no network, no
model weights, the same answer every time).

It finds, in the order the tenant wrote them, the things (boiler, tap, oven),
what is wrong with them (not working, leaking, blocked, mould), the conditions
that make a repair urgent (no heating, no hot water, no water, no power,
locked out) and the place (kitchen, bathroom ...). From those it writes the
title, category, urgency and location of an issue; when it finds none of
them it says it has not understood rather than guess.

It is the demo's stand-in for a model, not a classifier: what it does not
know it leaves to a question, and with ``ANTHROPIC_API_KEY`` set none of it
runs."""

from __future__ import annotations

import re
from dataclasses import dataclass

# --- The word table ---------------------------------------------------------
# Each pattern is matched on the lowercased text at a word start; stems end in
# \w* where the word inflects (Polish and Spanish endings, English plurals).


@dataclass(frozen=True)
class Thing:
    name: str  # as it appears in a title
    category: str
    usual_place: str  # where it usually is ("" when that varies, e.g. a boiler)
    pattern: str
    term: str = ""  # an English search word, for matching passages (default: name)


THINGS = [
    Thing("Boiler", "heating", "", r"boilers?\b|combi\b|caldera\w*|calentador\w*|kocio[łl]\w*|kot[łl]\w*|bojler\w*"),
    Thing("Radiator", "heating", "", r"radiators?\b|radiador\w*|kaloryfer\w*|grzejnik\w*"),
    Thing("Heating", "heating", "", r"heating\b|heaters?\b|calefacci[oó]n|ogrzewani\w*"),
    Thing("Tap", "plumbing", "", r"taps?\b|faucets?\b|grifos?\b|kran\w*"),
    Thing("Sink", "plumbing", "", r"sinks?\b|fregadero|lavabos?\b|zlew\w*|umywalk\w*"),
    Thing("Toilet", "plumbing", "bathroom", r"toilets?\b|loo\b|wc\b|inodoro|v[aá]ter|retrete|sedes\w*|toalet\w*"),
    Thing("Shower", "plumbing", "bathroom", r"showers?\b|ducha\w*|prysznic\w*"),
    Thing("Bath", "plumbing", "bathroom", r"bath\b|bathtub|bañera|wann\w*"),
    Thing("Pipe", "plumbing", "", r"pipes?\b|tuber[ií]a\w*|ruras?\b|rury\b|rurze\b|rur\b"),
    Thing("Drain", "plumbing", "", r"drains?\b|desag[uü]e\w*|odp[łl]yw\w*"),
    Thing("Washing machine", "appliances", "kitchen", r"washing machine|washer\b|lavadora\w*|pralk\w*"),
    Thing("Dishwasher", "appliances", "kitchen", r"dishwasher|lavavajillas|zmywark\w*"),
    Thing(
        "Fridge",
        "appliances",
        "kitchen",
        r"fridge|freezer|refrigerator|nevera|frigor[ií]fico|congelador|lod[oó]wk\w*|zamra[żz]ark\w*",
    ),
    Thing("Oven", "appliances", "kitchen", r"ovens?\b|hob\b|cooker|stove|horno|vitro\w*|piekarnik\w*|kuchenk\w*"),
    Thing("Extractor fan", "appliances", "kitchen", r"extractor|campana extractora|okap\w*"),
    Thing("Smoke alarm", "safety", "", r"smoke alarm|fire alarm|co alarm|alarm\w*|detector\w*|czujnik\w*"),
    Thing("Lights", "electrical", "", r"lights?\b|bulbs?\b|luz\b|luces|bombilla\w*|[śs]wiat[łl]\w*|[żz]ar[óo]wk\w*"),
    Thing("Socket", "electrical", "", r"sockets?\b|plugs?\b|outlets?\b|enchufe\w*|gniazd\w*"),
    Thing(
        "Fuse box",
        "electrical",
        "",
        r"fuses?\b|fuse ?box|breakers?\b|trip switch|consumer unit|fusibles?\b|diferencial|bezpiecznik\w*",
    ),
    Thing("Electrics", "electrical", "", r"electric\w*|electricidad|pr[ąa]d\w*|elektry\w*"),
    Thing("Window", "structural", "", r"windows?\b|ventana\w*|okn[oaie]\w*|okien\w*"),
    Thing("Door", "structural", "", r"doors?\b|puertas?\b|drzwi\w*"),
    Thing("Roof", "structural", "roof", r"roofs?\b|tejado\w*|dach\w*"),
    Thing("Ceiling", "structural", "", r"ceilings?\b|techo\w*|sufit\w*"),
    Thing("Wall", "structural", "", r"walls?\b|pared\w*|[śs]cian\w*"),
    Thing("Lock", "security", "front door", r"locks?\b|keys?\b|cerradura\w*|llaves?\b|zam(ek|ka|ku|kiem)\b|klucz\w*"),
    Thing("Gas", "gas", "", r"gas\b|gaz\w*"),
    Thing("Fence", "exterior", "garden", r"fences?\b|valla\w*|p[łl]ot\w*"),
    Thing("Bins", "exterior", "outside", r"bins?\b|basura|contenedor\w*|[śs]mietnik\w*"),
    Thing("Gutter", "exterior", "outside", r"gutters?\b|canal[oó]n\w*|rynn\w*"),
]


@dataclass(frozen=True)
class Fault:
    name: str  # after the thing in a title ("Tap leaking"), or alone ("Leaking")
    category: str  # "" when the thing decides (a broken oven is an appliance)
    pattern: str
    alone: str = ""  # the title when no thing is named


FAULTS = [
    Fault(
        "smell of gas",
        "gas",
        r"smell\w* (of )?gas|gas smell|olor a gas|huele a gas|czu[ćc] gaz\w*|zapach gazu|ulatnia\w*",
        "Smell of gas",
    ),
    Fault(
        "leaking",
        "plumbing",
        r"leak\w*|drip\w*|water (is )?(coming|pouring|running) (in|through|down|from)"
        r"|flood\w*|gotea\w*|gotera\w*|fugas?\b|inunda\w*|cieknie|ciekn\w*|przeciek\w*|wyciek\w*"
        r"|kapie|przecieka\w*|zala\w*",
        "Leak",
    ),
    Fault(
        "blocked",
        "plumbing",
        r"block\w*|clog\w*|(won'?t|doesn'?t|does not|will not) drain|not draining"
        r"|atasca\w*|obstru\w*|zatka\w*|zapcha\w*",
        "Blocked drain",
    ),
    Fault(
        "mould",
        "damp_mould",
        r"mou?ld\w*|damp\w*|condensation|moho\w*|humedad\w*|hongos|ple[śs][ńn]\w*|wilgo\w*|grzyb\w*",
        "Damp and mould",
    ),
    Fault(
        "pests",
        "pests",
        r"mice|mouse|rats?\b|cockroach\w*|bed ?bugs?|ants\b|wasps?\b|pests?\b|ratones|ratas?\b|cucaracha\w*"
        r"|chinches|hormigas|myszy|mysz\b|szczur\w*|karalu\w*|pluskw\w*|mr[óo]wk\w*",
        "Pests",
    ),
    Fault(
        "not closing or opening",
        "",
        r"(won'?t|doesn'?t|can'?t|does not|will not|cannot) (close|shut|lock|open)|no (se )?(cierra|abre)"
        r"|nie (zamyka|otwiera|domyka)\w*|nie da si[ęe] (zamkn|otworz)\w*",
        "Not closing or opening",
    ),
    Fault("cracked", "structural", r"crack\w*|grieta\w*|p[ęe]kni[ęe]\w*|p[ęe]ka\w*", "Crack"),
    Fault(
        "not working",
        "",
        r"not working|isn'?t working|aren'?t working|doesn'?t work|don'?t work|stopped working|has stopped|stopped"
        r"|broken|broke\b|won'?t (turn|switch|start|come) on|not (turning|coming|switching) on|faulty|dead\b"
        r"|no funciona\w*|ha dejado de funcionar|dej[óo] de funcionar|se ha roto|rot[oa]s?\b|averiad\w*"
        r"|estropead\w*|nie dzia[łl]a\w*|przesta[łl]\w* dzia[łl]a[ćc]|zepsu\w*|popsu\w*|uszkodz\w*",
        "Not working",
    ),
]


@dataclass(frozen=True)
class Condition:
    name: str  # in a title: "no heating"
    category: str
    usual_place: str
    pattern: str


CONDITIONS = [
    Condition(
        "no heating",
        "heating",
        "",
        r"no (heating|heat)\b|no hot water (or|and|nor|/|&) heat|heating (is )?(not|isn'?t|doesn'?t|won'?t)"
        r"|radiators? (are |is )?(cold|freezing)"
        r"|(sin|no hay|no tengo|no tenemos) calefacci[oó]n|(nie ma|brak|bez) ogrzewani\w*|(nie ma|brak) ciep[łl]a\b",
    ),
    Condition(
        "no hot water",
        "heating",
        "",
        r"no hot water|hot water (is )?(not|isn'?t)|no (heating|heat|power|electricity) (or|and|nor|/|&) hot water"
        r"|(sin|no hay|no tengo|no tenemos) agua caliente|(sin|no hay) calefacci[oó]n (ni|y) agua caliente"
        r"|(nie ma|brak|bez) ciep[łl]ej wody|(nie ma|brak|bez) ogrzewani\w* (i|ani) ciep[łl]ej wody",
    ),
    Condition(
        "no water",
        "plumbing",
        "whole property",
        r"no (running )?water\b|(sin|no hay|no tengo|no tenemos) agua\b(?! caliente)|(nie ma|brak|bez) wody",
    ),
    Condition(
        "no power",
        "electrical",
        "whole property",
        r"no (power|electricity|electrics)\b|power (cut|outage)|(sin|no hay|no tengo|no tenemos) "
        r"(luz|electricidad|corriente)\b|(nie ma|brak|bez) pr[ąa]du",
    ),
    Condition(
        "locked out",
        "security",
        "front door",
        r"locked out|lost (my |the )?keys?|can'?t get in|me he quedado fuera|no puedo entrar|perd[ií] (las|mis) llaves"
        r"|nie mog[ęe] (si[ęe] dosta[ćc]|wej[śs][ćc])|zgubi[łl]\w* klucz\w*|zatrzasn\w*",
    ),
]

# (place, pattern), in the order they are tried at each position of the text.
PLACES = [
    (
        "whole property",
        r"whole (flat|house|property|place|home)|everywhere|all (the )?rooms|toda la casa|todo el piso"
        r"|toda la vivienda|ca[łl]\w* mieszkani\w*|ca[łl]\w* dom\w*|wsz[ęe]dzie",
    ),
    ("front door", r"front door|back door|puerta principal|puerta de (la )?entrada|drzwi wej[śs]ciow\w*"),
    ("living room", r"living ?room|lounge|sitting room|front room|sal[oó]n\w*|comedor|pok[oó]j\w* dzienn\w*"),
    ("kitchen", r"kitchen\w*|cocina\w*|kuchni\w*"),
    ("bathroom", r"bathrooms?\b|shower room|en-?suite|baños?\b|bano\b|[łl]azien\w*|[łl]azience"),
    ("bedroom", r"bedrooms?\b|dormitorio\w*|habitaci[oó]n\w*|sypialn\w*"),
    ("hallway", r"hall(way)?\b|corridor|landing\b|pasillo|recibidor|korytarz\w*|przedpok\w*"),
    ("loft", r"loft|attic|desv[aá]n|buhardilla|strych\w*|poddasz\w*"),
    ("basement", r"basement|cellar|s[oó]tano|piwnic\w*"),
    ("utility room", r"utility( room)?|lavadero|pralni\w*"),
    ("balcony", r"balcon\w*|balkon\w*"),
    ("garage", r"garage|garaje|gara[żz]\w*"),
    ("garden", r"garden|yard|patio|jard[ií]n|ogr[oó]d\w*|podw[oó]r\w*"),
    ("stairs", r"stairs|staircase|escalera\w*|schod\w*"),
    ("upstairs", r"upstairs|arriba|na g[óo]rze"),
    ("downstairs", r"downstairs|abajo|na dole"),
]

URGENT_CONDITIONS = {"no heating", "no hot water", "no water", "no power", "locked out"}


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w'])(?:{pattern})", re.I)


_THINGS = [(t, _compile(t.pattern)) for t in THINGS]
_FAULTS = [(f, _compile(f.pattern)) for f in FAULTS]
_CONDITIONS = [(c, _compile(c.pattern)) for c in CONDITIONS]
_PLACES = [(name, _compile(pattern)) for name, pattern in PLACES]

# --- Languages --------------------------------------------------------------


def _wordset(*chunks: str) -> frozenset[str]:
    return frozenset(" ".join(chunks).split())


_LANGUAGE_WORDS = {
    "en": _wordset(
        "the is my i and not it a in of to have has no hi hello what how where there it's isn't won't doesn't "
        "please thanks thank you who was be will this that",
    ),
    "es": _wordset(
        "el la los las de que y hay mi es en por para con una un está tengo hola gracias cómo como dónde qué "
        "quién ayer mañana funciona se ha muy buenos días buenas",
    ),
    "pl": _wordset(
        "nie jest się w i na mam mój moja moje z że co jak dzień dobry dziękuję czy jutro będzie jaka jaki gdzie "
        "kiedy mieszkaniu już cześć witam proszę",
    ),
}
_LANGUAGE_LETTERS = {"es": "ñ¿¡áéíóú", "pl": "ąćęłńśźż"}


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.lower())


def language_of(text: str) -> str:
    """en, es or pl: which language's common words and letters the text has
    most of (English when none stands out)."""
    words = _words(text)
    scores = {lang: sum(w in common for w in words) for lang, common in _LANGUAGE_WORDS.items()}
    for lang, letters in _LANGUAGE_LETTERS.items():
        scores[lang] += 2 * sum(ch in letters for ch in text.lower())
    best = max(scores, key=lambda lang: scores[lang])
    return best if scores[best] > scores["en"] else "en"


PHRASES: dict[str, dict[str, str]] = {
    "not_understood": {
        "en": "Sorry, I didn't understand — could you tell me what needs repairing and where?",
        "es": "Lo siento, no te he entendido: ¿podrías decirme qué hay que reparar y dónde?",
        "pl": "Przepraszam, nie zrozumiałem — czy możesz napisać, co wymaga naprawy i gdzie?",
    },
    "ask_where": {
        "en": "Sorry to hear that. Where in your home is it (which room), and since when?",
        "es": "Siento oírlo. ¿En qué parte de la vivienda está (qué habitación) y desde cuándo?",
        "pl": "Przykro mi to słyszeć. W którym pomieszczeniu to jest i od kiedy?",
    },
    "ask_what": {
        "en": "Thanks. What exactly is wrong there, and since when?",
        "es": "Gracias. ¿Qué es exactamente lo que falla y desde cuándo?",
        "pl": "Dziękuję. Co dokładnie jest zepsute i od kiedy?",
    },
    "ask_since": {
        "en": "Sorry to hear that. Since when, and what exactly happens?",
        "es": "Siento oírlo. ¿Desde cuándo, y qué ocurre exactamente?",
        "pl": "Przykro mi to słyszeć. Od kiedy i co dokładnie się dzieje?",
    },
    "ask_photo_what": {
        "en": "Thanks for the photo. What does it show, and where in your home is it?",
        "es": "Gracias por la foto. ¿Qué muestra y en qué parte de la vivienda está?",
        "pl": "Dziękuję za zdjęcie. Co przedstawia i w którym miejscu mieszkania to jest?",
    },
    "ask_photo": {
        "en": "Thanks, that helps. Could you send a photo of it?",
        "es": "Gracias, eso ayuda. ¿Puedes enviar una foto?",
        "pl": "Dziękuję, to pomaga. Czy możesz wysłać zdjęcie?",
    },
    "photo_later": {
        "en": "No rush, send the photo whenever you're ready.",
        "es": "Sin prisa, envía la foto cuando puedas.",
        "pl": "Nie ma pośpiechu, wyślij zdjęcie, kiedy będziesz gotowy.",
    },
    "photo_remind": {
        "en": "Thanks. When you can, please send a photo of the problem.",
        "es": "Gracias. Cuando puedas, envía una foto del problema.",
        "pl": "Dziękuję. Kiedy będziesz mógł, wyślij zdjęcie problemu.",
    },
    "logged": {
        "en": "Thanks, I've logged this repair with your landlord.",
        "es": "Gracias, he registrado esta reparación con tu casero.",
        "pl": "Dziękuję, zgłosiłem tę naprawę właścicielowi.",
    },
    "welcome": {
        "en": "You're welcome! Message me any time if something needs fixing.",
        "es": "¡De nada! Escríbeme cuando necesites una reparación.",
        "pl": "Nie ma za co! Napisz, jeśli coś będzie wymagało naprawy.",
    },
    "hello": {
        "en": "Hello! How can I help with your home today?",
        "es": "¡Hola! ¿En qué puedo ayudarte con tu vivienda?",
        "pl": "Dzień dobry! W czym mogę pomóc w sprawie mieszkania?",
    },
    "ask_address": {
        "en": "Hello! Which property do you live in? Please send the address or postcode.",
        "es": "¡Hola! ¿En qué vivienda vives? Envía la dirección o el código postal.",
        "pl": "Dzień dobry! W którym mieszkaniu mieszkasz? Podaj adres lub kod pocztowy.",
    },
    "ask_address_problem": {
        "en": "Sorry to hear that. First, which property do you live in? Please send the address or postcode.",
        "es": "Siento oírlo. Primero, ¿en qué vivienda vives? Envía la dirección o el código postal.",
        "pl": "Przykro mi to słyszeć. Najpierw: w którym mieszkaniu mieszkasz? Podaj adres lub kod pocztowy.",
    },
    "closed": {
        "en": "Glad it's sorted. I've closed this report; message me any time if something else needs fixing.",
        "es": "Me alegro de que esté resuelto. He cerrado este aviso; escríbeme cuando necesites otra reparación.",
        "pl": "Cieszę się, że problem zniknął. Zamknąłem to zgłoszenie; napisz, jeśli coś jeszcze będzie do naprawy.",
    },
    "glad": {
        "en": "Glad to hear it. Message me any time if something needs fixing.",
        "es": "Me alegro. Escríbeme cuando necesites una reparación.",
        "pl": "Cieszę się. Napisz, jeśli coś będzie wymagało naprawy.",
    },
    "more": {
        "en": "Sorry, could you tell me a bit more?",
        "es": "Lo siento, ¿puedes contarme un poco más?",
        "pl": "Przepraszam, czy możesz napisać coś więcej?",
    },
    "emergency_noted": {
        "en": "Your landlord has been alerted. Please follow the safety advice above and keep yourself safe.",
        "es": "Hemos avisado a tu casero. Sigue los consejos de seguridad de arriba y ponte a salvo.",
        "pl": "Właściciel został powiadomiony. Postępuj zgodnie z powyższymi wskazówkami bezpieczeństwa.",
    },
    "not_in_documents": {
        "en": "I couldn't find that in your landlord's documents. I'll pass the question on.",
        "es": "No he encontrado eso en los documentos de tu casero. Pasaré la pregunta.",
        "pl": "Nie znalazłem tego w dokumentach właściciela. Przekażę pytanie dalej.",
    },
    "from_guide": {
        "en": "From your home's guide:",
        "es": "Según la guía de tu vivienda:",
        "pl": "Z przewodnika po Twoim mieszkaniu:",
    },
}


def say(key: str, language: str, **values: str) -> str:
    texts = PHRASES[key]
    return texts.get(language, texts["en"]).format(**values)


# --- Reading a report -------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    title: str
    description: str
    category: str
    urgency: str
    location: str  # "" when it is not known and must be asked
    place_stated: bool  # the tenant named a place (not only a thing that usually is somewhere)
    problem: bool  # something is recognisably wrong (a thing, a fault or a condition)
    language: str


def _found(pairs: list, text: str) -> list[tuple[int, object]]:
    hits = []
    for item, pattern in pairs:
        match = pattern.search(text)
        if match:
            hits.append((match.start(), item))
    return sorted(hits, key=lambda hit: hit[0])


def _things(text: str) -> list[Thing]:
    return [t for _, t in _found(_THINGS, text)]  # type: ignore[misc]


def _faults(text: str) -> list[Fault]:
    return [f for _, f in _found(_FAULTS, text)]  # type: ignore[misc]


def _conditions(text: str) -> list[Condition]:
    return [c for _, c in _found(_CONDITIONS, text)]  # type: ignore[misc]


def place_of(text: str) -> str:
    """The first place named in the text ("" when none)."""
    found = _found(_PLACES, text)
    return str(found[0][1]) if found else ""


def understood(text: str) -> bool:
    """Whether the text names anything a repair is about: a thing, a fault,
    a condition or a place. Gibberish and small talk name none."""
    return bool(_things(text) or _faults(text) or _conditions(text) or place_of(text))


def has_problem(text: str) -> bool:
    """Whether the text says something is wrong (not only where, or what thing)."""
    return bool(_faults(text) or _conditions(text))


def looks_like_words(text: str) -> bool:
    """Whether the text reads as words at all (a short answer such as "next
    to the telly"), not a keyboard mash: most words have vowels and no long
    runs of consonants."""
    words = _words(text)
    if not words:
        return False
    plausible = [
        w
        for w in words
        if re.search(r"[aeiouyąęóáéíúàèìòù]", w)
        and not re.search(r"[^aeiouyąęóáéíúàèìòù\W]{5,}", w)
        and not re.search(r"(\w{2,3})\1", w)
    ]
    return len(plausible) * 3 >= len(words) * 2


_GREETING = (
    r"(hi|hello|hey|hiya|good (morning|afternoon|evening)|dear \w+|hola|buen[oa]s( d[ií]as| tardes| noches)?|"
    r"dzie[ńn] dobry|cze[śs][ćc]|witam|sorry|please|pls|um+|so|ok(ay)?|yes|no|thanks|thank you|gracias|dzi[ęe]kuj[ęe])"
)
_FILLER = r"(my|mi|mis|m[óo]j|moja|moje|i think|i'?m afraid|just to say|the)"
_LEADING = re.compile(rf"^\s*(?:(?:{_GREETING}|{_FILLER})\b[\s,.!:;-]*)+", re.I)
_TRAILING = re.compile(r"[\s\d.,!?;:()\-]+$")


def clean_words(text: str, limit: int = 60) -> str:
    """The tenant's words without greetings, fillers ("my") at the start or
    numbers and punctuation at the end, cut at a word under ``limit``."""
    text = _TRAILING.sub("", _LEADING.sub("", text.strip()))
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0].rstrip(",;:-")
    return text[:1].upper() + text[1:]


_FILLER_ONLY = re.compile(rf"^\s*(?:(?:{_GREETING})\b[\s,.!:;-]*)*$", re.I)


def is_filler(text: str) -> bool:
    """Greetings, thanks, yes / no: nothing about the problem."""
    return bool(_FILLER_ONLY.match(text))


def _title(things: list[Thing], faults: list[Fault], conditions: list[Condition], place: str, words: str) -> str:
    # A thing the place already names ("door" in "front door") adds nothing either.
    things = [t for t in things if t.name.lower() not in place] or things[:0]
    thing = things[0] if things else None
    # A thing that only names the fault again ("gas" in "smell of gas") adds nothing.
    if thing is not None and faults and thing.category == faults[0].category == "gas":
        thing = None
    fault = faults[0] if faults else None
    # "Heating not working: no heating" says it twice.
    conds = [c.name for c in conditions if thing is None or thing.name.lower() not in c.name.split()]
    conds_text = " or ".join([conds[0]] + [re.sub(r"^no ", "", c) for c in conds[1:]]) if conds else ""
    where = {"": "", "whole property": "", "upstairs": " upstairs", "downstairs": " downstairs"}.get(place)
    if where is None:
        where = f" {'at' if place == 'front door' else 'on' if place == 'stairs' else 'in'} {place}"
    if thing is not None and fault is not None and fault.category in ("damp_mould", "pests", "structural"):
        title = f"{fault.alone} ({thing.name.lower()}){where}"  # mould is on a wall, not a wall that moulds
    elif thing is not None and fault is not None:
        title = f"{thing.name} {fault.name}{where}"
    elif fault is not None:
        title = f"{fault.alone}{where}"
    elif conds_text:
        return conds_text[:1].upper() + conds_text[1:] + where
    elif thing is not None:
        title = f"{thing.name} problem{where}"
    else:
        return words or "Repair"
    return f"{title}: {conds_text}" if conds_text else title


def _joined(said: list[str]) -> str:
    """The messages as one text: each one a sentence of its own."""
    text = ""
    for message in said:
        if text:
            text += " " if text[-1] in ".!?;:," else ". "
            message = message[:1].upper() + message[1:]
        text += message
    return text


def report_summary(messages: list[str], *, emergency: bool = False) -> Summary:
    """What an issue for these report messages should say. ``emergency``: an
    emergency alert was raised for the conversation (only that makes the
    urgency ``emergency``)."""
    said = [m.strip() for m in messages if m.strip() and not is_filler(m)]
    text = " ".join(said)
    things, faults, conditions = _things(text), _faults(text), _conditions(text)
    place = place_of(text)
    usual = next((c.usual_place for c in conditions if c.usual_place), "") or next(
        (t.usual_place for t in things if t.usual_place), ""
    )
    things = [t for t in things if t.name.lower() not in place] or things  # "front door lock": the lock
    specific = [f.category for f in faults if f.category]
    strong = [t.category for t in things if t.category in ("gas", "safety", "appliances", "heating", "electrical")]
    category = next(
        iter(
            [f.category for f in faults if f.category == "gas"]
            + strong
            + specific
            + [t.category for t in things]
            + [c.category for c in conditions]
            + (["exterior"] if place in ("garden", "balcony", "garage") else [])
        ),
        "other",
    )
    if emergency:
        urgency = "emergency"
    elif any(c.name in URGENT_CONDITIONS for c in conditions):
        urgency = "urgent"
    else:
        urgency = "routine"
    first_words = next((clean_words(m) for m in said if understood(m) or looks_like_words(m)), "")
    return Summary(
        title=_title(things, faults, conditions, place, first_words),
        description=_joined(said)[:2000],
        category=category,
        urgency=urgency,
        location=place or usual,
        place_stated=bool(place),
        problem=bool(things or faults or conditions),
        language=language_of(text),
    )


# --- The problem went away --------------------------------------------------

_WENT_AWAY = re.compile(
    r"never ?mind|(it'?s|is|all|that'?s) (all )?(fixed|sorted|resolved|fine now|ok now|good now)|fixed (it|itself|now)"
    r"|^\s*sorted\b|sorted (now|it|itself)|(working|works) (again|fine now|now)|(went|gone) away"
    r"|stopped (leaking|dripping)|false alarm|ignore (that|it|my)|problem solved"
    r"|don'?t need (it|a repair|anyone|help) any ?more|cancel (it|that|the)"
    r"|ya funciona|ya est[aá] (arreglad|solucionad|bien)\w*|se (ha )?arregl\w*|se solucion\w*|olv[ií]dal[oa]|no importa"
    r"|ya no hace falta|ya no es necesario|falsa alarma"
    r"|ju[żz] dzia[łl]a|dzia[łl]a ju[żz]|naprawion\w*|niewa[żz]ne|ju[żz] nie trzeba|ju[żz] nie potrzeb\w*"
    r"|sprawa za[łl]atwiona"
    r"|problem rozwi[ąa]zany|samo przesz[łl]o|fa[łl]szywy alarm",
    re.I,
)
_STILL = re.compile(
    r"\b(not|still|isn'?t|hasn'?t|wasn'?t|aren'?t|sigue|todav[ií]a|a[úu]n no|nadal|wci[ąa][żz]|jeszcze nie)\b", re.I
)


def went_away(text: str) -> bool:
    """The tenant says the problem is gone ("it's fixed now", "never mind",
    "ya funciona", "już działa"), and not that it is still there."""
    return bool(_WENT_AWAY.search(text)) and not _STILL.search(text)


# --- Does a passage answer the question? ------------------------------------

_STOPWORDS = _wordset(
    "the a an and or but is are was were be been do does did how what when where which who why can could would "
    "should i my me we our you your it its this that there here to of in on at for with from about please help "
    "get got have has had not no any some into out up down if then than them they he she his her will just also "
    "home house flat property thanks thank hello need want know tell",
    # Spanish and Polish question words and particles
    "cómo como qué que la el los las de del mi mis por para con una uno hay dónde donde cuándo puedo puede "
    "jak gdzie czy mój moja moje się nie na co mogę można kiedy jest",
)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _terms(text: str) -> set[str]:
    terms = {_stem(w) for w in _words(text) if len(w) >= 3 and w not in _STOPWORDS}
    # The word table says in English what a Spanish or Polish word is about.
    terms |= {_stem(w) for t in _things(text) for w in _words(t.term or t.name)}
    return terms


def passage_fits(query: str, passage: str) -> bool:
    """Whether a passage shares enough of the question's words to be an
    answer to it: at least one, and a third of them for longer questions.
    A search always returns its nearest passages, fitting or not."""
    wanted = _terms(query)
    if not wanted:
        return False
    shared = wanted & _terms(passage)
    return bool(shared) and len(shared) * 3 >= min(len(wanted), 6)
