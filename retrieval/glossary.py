"""The domain's words in the tenants' other languages, with their English words.

The landlord's documents are in English; a Polish tenant writes "kocioł", a
Romanian one "centrala". The keyword leg can only match words the documents
hold, so ``english_words`` gives the English words for a foreign word, and
``retrieval.search.query_terms`` adds them to the message's own words (which
stay, for codes, names and English loanwords).

The word lists are ``retrieval/glossary/<language>.tsv``: one ``word<TAB>english
words`` a line, inflected and unaccented forms each on their own line, written
from the domain (heating, water, electrics, bins, rent...) without sight of any
evaluation query. Words are compared folded: lower case, diacritics dropped, so
"kociol" finds "kocioł". A landlord's own words go in the same files.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from pathlib import Path

GLOSSARY_DIR = Path(__file__).resolve().parent / "glossary"
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
# Letters NFKD does not split into a base letter and a mark.
_UNSPLIT = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ß": "ss"})


def fold(word: str) -> str:
    """Lower case without diacritics: "Kocioł" -> "kociol", "centrală" -> "centrala"."""
    decomposed = unicodedata.normalize("NFKD", word.casefold().translate(_UNSPLIT))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@cache
def glossary() -> dict[str, tuple[str, ...]]:
    """Folded foreign word -> its English words, from every language's file (read once per process)."""
    merged: dict[str, list[str]] = {}
    for path in sorted(GLOSSARY_DIR.glob("*.tsv")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip() or line.startswith("#"):
                continue
            foreign, tab, english = line.partition("\t")
            if not tab or not foreign.strip() or not english.strip():
                raise ValueError(f"{path.name}:{number}: expected 'word<TAB>english words'")
            words = merged.setdefault(fold(foreign.strip()), [])
            words += [w for w in english.casefold().split() if w not in words]
    return {word: tuple(english) for word, english in merged.items()}


def english_words(word: str) -> tuple[str, ...]:
    """The English words for a foreign word, or () when the glossary does not know it."""
    return glossary().get(fold(word), ())


def with_english(text: str) -> str:
    """``text`` followed by the English words the glossary gives for its words
    (the text itself when it gives none): what the embedding model reads for a
    query, so that a message in Polish lands nearer the English passage."""
    added: list[str] = []
    for match in _WORD.finditer(text):
        added += [word for word in english_words(match.group(0)) if word not in added]
    return f"{text} ({' '.join(added)})" if added else text
