"""Text as the rules see it: case-folded, accents folded, punctuation gone,
letters repeated for emphasis squeezed, common misspellings corrected. Rules
and messages go through the same function, so "GAAAS!!", "gas" and "gás" meet."""

from __future__ import annotations

import re
import unicodedata

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


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("ł", "l").replace("ß", "ss")
    text = _NON_WORD.sub(" ", text)
    text = _REPEATS.sub(r"\1", text)
    words = [MISSPELLINGS.get(word, word) for word in text.split()]
    return " ".join(words)
