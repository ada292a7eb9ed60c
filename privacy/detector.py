"""Does a tenant's message ask for a copy of their data ("send me my data")?

Rules in five languages (en, pl, es, ro, pt), on text lowered and stripped of
accents: a legal term (GDPR / RODO / RGPD, subject access, right of access)
is enough; otherwise the message must name *their data or their history* and
*ask for it*. Two tempting negatives are ruled out: mobile data ("my data
isn't working", "dane mobilne") and a tenant giving their details ("mis
datos: María, piso 2"). A hit only records a pending request for the
landlord (``privacy.receiver``): a false positive costs a landlord a click,
a miss costs a tenant asking again, nothing is ever sent automatically.

Measured by ``manage.py measure_data_requests`` on the own set and the
held-out set (``privacy/tests/data/``; docs/data-protection.md).
"""

from __future__ import annotations

import re
import unicodedata


def normalise(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return re.sub(r"\s+", " ", stripped.replace("ł", "l").replace("ß", "ss"))


LEGAL = re.compile(
    r"\b(gdpr|rodo|rgpd|lgpd|sar|dsar|subject access|data subject|right of access|derecho de acceso|"
    r"dreptul de acces|direito de acesso|prawo dostepu)\b"
)

# Their data, or their messages and photos, or what is kept about them.
OBJECT = re.compile(
    r"\b("
    # en
    r"my (personal )?(data|information|info)|personal (data|information)|data (about|on) me|"
    r"(info|information|data) (on|about) me|chat history|message history|conversation history|"
    r"(all|every) (of )?(my|our|the) (messages|chats?|photos|pictures|pics)|"
    r"(everything|anything|all|what) (you|u) (have|hold|keep|store|got) (on|about) me|"
    r"(record|records|history) of (my|our)|(keep|hold|store|have) (about|on) me|"
    # what is kept about me, with any verb of keeping ("what you've got stored on me")
    r"(have|hold|keep|kept|store|stored|saved|got|collect\w*|process\w*)\b[^.?!]{0,25}\b(about|on) me|"
    # all my messages or photos, or everything we said
    r"(all|every|copy of|copies of) (of )?(my|our|the) (\w+ )?(messages|msgs|texts|chats?|photos|pics|pictures|"
    r"voice notes|conversations?)|everything (we|i) (talked|discussed|said|sent|wrote)|"
    # pl
    r"(moich|moje|mojich) dan\w*|danych osobowych|dane osobowe|dane o mnie|na moj temat|o mnie|"
    r"histori\w* (naszej |mojej )?rozmow\w*|(cala|cal[aą]) (nasza |moja )?rozmow\w*|"
    r"wszystk\w* (moich |moje |nasz\w* )?wiadomosc\w*|"
    # es
    r"mis datos|datos personales|sobre mi|historial|todos (mis|los) mensajes|"
    r"lo que (teneis|tienen|tenes|guardais|guardan|habeis guardado|han guardado)\b[^.?!]{0,20}\b(de|sobre) mi|"
    # ro
    r"datele mele|datelor mele|date(le)? personale|datelor personale|despre mine|istoricul|toate mesajele|"
    # pt
    r"(os )?meus dados|dados pessoais|sobre mim|historico|todas as (nossas )?(mensagens|conversas)"
    r")\b"
)

# Asking for it.
REQUEST = re.compile(
    r"\b("
    # en
    r"send|copy|give|get|download|provide|want|need|request|export|forward|access|can i have|could i have|"
    r"would like|i.?d like|like to see|what (personal )?(data|information|info)|what (do|does|did) (you|u)|"
    # pl
    r"wysl\w*|przesl\w*|kopi\w*|chce|chcialbym|chcialabym|dostac|otrzyma\w*|jakie|prosze o|udostepni\w*|"
    r"potrzebuje|dostep\w*|"
    # es
    r"envi[ae]\w*|mand[ae]\w*|copia|quiero|quisiera|que datos|facilit\w*|necesito|pas[ae]\w*|acceso|solicit\w*|"
    # ro
    r"trimite\w*|copie|vreau|as vrea|as dori|doresc|primesc|primi\w*|ce date|furniza\w*|acces\w*|solicit\w*|"
    # pt
    r"mand[ae]\w*|copia|quero|gostaria|receber|que dados|fornec\w*|preciso|necessito|acesso|solicit\w*"
    r")\b"
)

# Mobile data, not personal data.
MOBILE = re.compile(
    r"\b(mobile data|data (is|isn.?t|not|doesn.?t)|dane mobiln\w*|danych mobiln\w*|datos (del )?movil|"
    r"datos moviles|date(le)? mobile|dados moveis|dados (do|no) (celular|telemovel)|sin datos|sem dados|"
    r"nie mam danych|nu am date|no tengo datos|run out of data|out of data)\b"
)

# Giving their details ("my details: ...", "mis datos son ...").
GIVING = re.compile(
    r"(my (details|data)|moje dane|mis datos|datele mele( de contact)?|(os )?meus dados)\s*(:|son\b|sao\b|are\b|to\b)"
    r"|\b(here are|podaje|te mando|les mando|va trimit|vă trimit|seguem|segue)\b"
)


def data_request_detect(text: str) -> bool:
    """True when ``text`` asks for a copy of the sender's data."""
    words = normalise(text)
    if not words:
        return False
    if LEGAL.search(words):
        return True
    if MOBILE.search(words) or GIVING.search(words):
        return False
    return bool(OBJECT.search(words) and REQUEST.search(words))
