"""Whether a rule's words are denied where they stand: "nu scoate scantei",
"there's no smell of gas now", "sin humo", "nie ma dymu", "not a gas leak".

Only hazards that are there when named can be denied: no heat for a baby
and a door that will not lock are said with a negation, so their rules
(``ABSENCE_CATEGORIES``) never are.

A match is denied when one of the two words right before it, in its own
clause, is a negation of the five languages, and the word between them (if
any) does not turn the sense back: "doesn't stop sparking", "no puede parar el
agua" and "nie da sie zakrecic gazu" describe the hazard going on. A rule
whose own words hold a negation ("no heating", "nie ma pradu") is never
denied. Clauses end at punctuation and at "but" in each language, so "no hay
humo pero huele a quemado" denies only the smoke.

The words are normalised (``emergencies.normalise``): accents folded, so
"não" is "nao" and "fără" is "fara"; an apostrophe splits "doesn't" into
"doesn t". "can't" and "won't" are not negations here: "can't turn the gas
off" is the hazard.
"""

from __future__ import annotations

import re

from emergencies.normalise import normalise

ABSENCE_CATEGORIES = frozenset({"no_heat_vulnerable", "security"})
_NEGATIONS = {
    "en": "no not never without nothing none nor dont doesnt didnt isnt arent wasnt werent hasnt havent",
    "es": "no sin ni nunca tampoco nada ningun ninguna",
    "pt": "nao sem nem nunca nenhum nenhuma nada",
    "pl": "nie bez ani zadnego zadnej zadnych",
    "ro": "nu fara niciun nicio nici",
}
NEGATIONS = frozenset(word for words in _NEGATIONS.values() for word in words.split())
# "doesn t": the "t" of an English negative contraction (not "can t", "won t").
_CONTRACTED = frozenset(["don", "doesn", "didn", "isn", "aren", "wasn", "weren", "hasn", "haven", "hadn", "ain"])
# A word between the negation and the rule's words that makes the hazard go on
# ("doesn't stop", "no para de", "nie przestaje", "nu se opreste") or says the
# tenant cannot act on it ("no puedo", "nao consigo", "nie moge", "nu pot").
_TURNS_BACK = {
    "en": "stop stops stopping stopped only just",
    "es": "para paran parar deja dejan dejar puedo puede podemos pueden solo",
    "pt": "para param parar deixa consigo consegue conseguimos pode posso so apenas",
    "pl": "przestaje przestaja przestalo moge moze mozemy da tylko",
    "ro": "opreste opresc inceteaza pot poate putem doar numai",
}
TURNS_BACK = frozenset(word for words in _TURNS_BACK.values() for word in words.split())
_CLAUSE_END = re.compile(r"[.;:!?\n,()]+|\s(?:but|pero|mas|ale|lecz|dar|insa|însă)\s", re.IGNORECASE)


def clauses(text: str) -> list[str]:
    """``text`` cut at punctuation and at "but", each part normalised."""
    parts = (normalise(part) for part in _CLAUSE_END.split(text))
    return [part for part in parts if part]


def _is_negation(words: list[str], index: int) -> bool:
    word = words[index]
    if word == "t":
        return index > 0 and words[index - 1] in _CONTRACTED
    return word in NEGATIONS


def denied(words: list[str], start: int) -> bool:
    """Whether the match starting at word ``start`` of a clause's ``words`` is
    denied by a negation one or two words before it."""
    if start >= 1 and _is_negation(words, start - 1):
        return True
    return start >= 2 and _is_negation(words, start - 2) and words[start - 1] not in TURNS_BACK


def holds_negation(normalised_phrase: str) -> bool:
    words = normalised_phrase.split()
    return any(_is_negation(words, i) for i in range(len(words)))
