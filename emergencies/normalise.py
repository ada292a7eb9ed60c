"""Text as the rules see it, and whether a rule can ever match it: case-folded, accents folded, punctuation gone,
letters repeated for emphasis squeezed, common misspellings corrected. Rules
and messages go through the same function, so "GAAAS!!", "gas" and "gás" meet."""

from __future__ import annotations

import re
import unicodedata

import regex

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_REPEATS = re.compile(r"(\w)\1+", re.UNICODE)
# Applied after squeezing, whole words only.
MISSPELLINGS = {
    "monoxcide": "monoxide",
    "monoxid": "monoxide",
    "monoxyde": "monoxide",
    "carbonmonoxide": "carbon monoxide",
    "elecricity": "electricity",
    "electricty": "electricity",
    "sparkin": "sparking",
    "fier": "fire",
    "smok": "smoke",
    "brokein": "broke in",
    "breakin": "break in",
    "sewerage": "sewage",
    "seage": "sewage",
}


# Words that only say "how much" and sit between a rule's words ("huele
# muchisimo a gas", "smells really strongly of gas"), in the five languages,
# normalised. ``without_intensifiers`` drops them so a phrase still meets.
_INTENSIFIERS = {
    "en": "really very so super quite proper well totally absolutely massively strongly badly seriously",
    "es": "muy mucho muchisimo bastante demasiado tan re",
    "pt": "muito muita muitissimo bastante demais tao mesmo",
    "pl": "bardzo strasznie mocno okropnie mega naprawde",
    "ro": "foarte tare mult prea rau",
}
INTENSIFIERS = frozenset(word for words in _INTENSIFIERS.values() for word in words.split())


def without_intensifiers(normalised: str) -> str:
    """A normalised text without its intensifiers (the text itself when it has none)."""
    words = normalised.split()
    kept = [word for word in words if word not in INTENSIFIERS]
    return " ".join(kept) if len(kept) != len(words) else normalised


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("ł", "l").replace("ß", "ss")
    text = _NON_WORD.sub(" ", text)
    text = _REPEATS.sub(r"\1", text)
    words = [MISSPELLINGS.get(word, word) for word in text.split()]
    return " ".join(words)


_POSIX_CLASS = re.compile(r"\[:\^?[a-z]+:\]")
_ESCAPES = re.compile(r"\\.|\(\?P<\w*>|\{[^}]*\}")
_DOUBLED = re.compile(r"([a-z])\1")


def rule_problem(*, phrase: str, is_pattern: bool) -> str | None:
    """Why a rule could never work as meant, in words for the admin; None when it is fine.
    Patterns run on normalised text (lower case, no accents or punctuation, no
    letter twice in a row), so a pattern that needs anything else never fires."""
    if not is_pattern:
        return None if normalise(phrase) else "The phrase has no letters or digits left after normalising."
    try:
        compiled = re.compile(phrase)
        regex.compile(phrase)  # an organization's own patterns run on the regex package
    except (re.error, regex.error) as exc:
        return f"Not a valid regular expression: {exc}."
    if _POSIX_CLASS.search(phrase):
        return "Write a character class as [a-z] or \\w: [[:alpha:]] means one thing to re and another to regex."
    if compiled.search(""):
        return "This pattern matches an empty message, so every message would be an emergency."
    literal = _ESCAPES.sub(" ", phrase)
    doubled = _DOUBLED.search(literal)
    if doubled:
        return (
            f"Patterns run on normalised text, where no letter appears twice in a row: write "
            f"{doubled.group(1)!r} instead of {doubled.group(0)!r}."
        )
    if any(ch.isupper() or (ch.isalpha() and not ch.isascii()) for ch in literal):
        return "Patterns run on normalised text: write them in lower case without accents."
    return None
