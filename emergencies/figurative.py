"""Hazard words in figures of speech, which a built-in rule should not take
for the hazard.

Tenants borrow the hazards' words for anger ("aż mi dym z uszu leci", "sunt
foc și pară", "estoy que echo chispas", "a deitar fumo pelas orelhas"), for
being busy ("flooded with emails", "zawalony robotą") and for "no hurry"
("nothing's on fire", "nic nie pali się", "nu arde nimic"). ``figures_remove``
gives the text the rules read with those expressions taken out; the detector
stands down a built-in rule whose words were only inside one, and lets the
classifier decide (``emergencies.detector``). An organization's own rules,
and the rules when the classifier is off, still read every word.

Each expression is a whole figure with its person ("estoy que echo chispas",
not "está que echa chispas", which a socket does too), matched within one
clause: the text is cut at every mark that is not part of a word first, so
"Nie! Pali się kuchnia" or "nothing - on fire now" are two clauses and keep
their hazard. None relies on punctuation to be a figure (a voice note's
transcript may have none): "Nie pali się!" alone stays a rule's hit. The
expressions are written as ``normalise`` leaves text (lower case, no
accents, a repeated letter squeezed: "flooded" is "floded").
"""

from __future__ import annotations

import re

from emergencies.normalise import normalise

FIGURES: dict[str, list[str]] = {
    "en": [
        r"nothing s on fire(?! now| again)",
        r"floded with (?:emails|cals|mesages|texts|work|requests|complaints|orders|aplications|queries)",
        r"floding (?:my|his|her|our) (?:inbox|dms|emails)",
        r"(?:smoke|steam) (?:coming |pouring )?out (?:of )?(?:my|his|her|their|our) ears",
    ],
    "pl": [
        r"(?:dym|para) (?:mi |mu |jej |nam )?(?:idzie |leci |wali |bucha )?(?:z uszu|uszami)",
        r"(?:z uszu|uszami) (?:mi|mu|jej|nam) (?:idzie |leci |wali |bucha )?(?:dym|para)",
        r"nic (?:sie )?nie pali(?: sie)?",
        r"nie pali sie z tym",
        r"pali (?:mi |nam |mu |jej )?sie grunt pod nogami",
        r"zawalon[aeyi] (?:robota|praca|mailami|obowiazkami|papierami|zleceniami|zadaniami)",
        r"wybuch\w* smiechem",
    ],
    "es": [
        r"(?:estoy|estamos|ando|andamos) que (?:echo|echamos) (?:humo|chispas|fuego)",
        r"(?:echando|echo|echamos|me sale|nos sale) humo por (?:las )?orejas",
        r"inundad[oa]s? de (?:trabajo|coreos|mensajes|lamadas|emails|mails|pedidos)",
    ],
    "pt": [
        r"(?:deitar|deitando|deito|soltar|soltando|solto|saindo|sai me) (?:fumo|fumaca|fogo)"
        r" pel[ao]s? (?:orelhas|ventas|narinas)",
        r"inundad[oa]s? de (?:trabalho|emails|mails|mensagens|chamadas|pedidos)",
    ],
    "ro": [
        r"(?:sunt|suntem|sintem|eram) foc si para",
        r"(?:sunt|suntem|sintem|eram) foc pe (?:voi|tine|el|ea|ei|dumneavoastra|proprietar\w*)",
        r"nu arde nimic",
        r"scot (?:fum|aburi) (?:pe nas|pe nari|pe urechi)",
        r"inundat\w* de (?:mesaje|emailuri|mailuri|munca|apeluri|cereri)",
    ],
}

_FIGURES = re.compile(r"\b(?:" + "|".join(p for patterns in FIGURES.values() for p in patterns) + r")\b")
# Where a clause ends: a figure never reaches across one. Anything but a
# letter, a digit, a space or a word's own apostrophe or hyphen ("s-a"): a
# full stop, a dash, a slash, a quote, an emoji.
_CLAUSE_END = re.compile(r"[^\w\s'’-]+|\s-+\s|\n")


def figures_remove(text: str) -> str:
    """``normalise(text)`` with each figure of speech replaced by ``_``, which
    no rule's words contain and which keeps the words on either side apart."""
    clauses = (_FIGURES.sub(" _ ", normalise(clause)) for clause in _CLAUSE_END.split(text))
    return " ".join(" ".join(clauses).split())
