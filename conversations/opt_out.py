"""WhatsApp opt-out: STOP and START, recognised at the webhook.

Twilio handles STOP itself only for SMS, so for WhatsApp the product does it.

**What counts as a keyword.** The *whole* message, trimmed, case- and
diacritics-insensitive, punctuation and emoji ignored, with at most a
"please" / "thanks" around it, must be one of ``OPT_OUT_KEYWORDS`` (Twilio's
standard words and their equivalents in en/pl/es/ro/pt) or
``OPT_IN_KEYWORDS``. "STOP", "stop.", "Rezygnuję", "BAJA" opt out; "please
stop the leak", "can you stop by tomorrow", "END of tenancy question" never
do. Only typed text is read (a tapped button, a photo's caption, a voice
note are not keywords).

**The state** is ``Conversation.opted_out_at`` (per organization and
number: one organization's STOP never touches another's). The webhook
(``inbound.message_record_inbound``) applies it in the transaction that
stores the message, so a repeated Twilio delivery (not stored again) changes
nothing and sends no second confirmation:

* a STOP sets it (once: a second STOP while opted out sends nothing), is
  marked processed (no turn: it never reaches the model nor starts a report)
  and gets one confirmation in the tenant's language that says how to turn
  messages back on;
* START while opted out clears it, is marked processed, and gets a short
  confirmation; START from a tenant who never opted out is an ordinary
  message for the turn;
* any other later inbound message (text, photo, voice note, pin; not a
  reaction, which is an acknowledgement rather than a new message) clears it
  too: the tenant has started talking to us again, and the turn answers.

**The gate** (``opt_out_refusal``), applied by the outbound door when a
message is stored (``outbound.outbound_text_queue``,
``outbound.outbound_choice_queue``) and again at send time
(``delivery.message_send``, for messages queued before the STOP): while a
conversation is opted out, nothing goes to the tenant except
``OPT_OUT_EXEMPT_PURPOSES`` (the emergency safety reply to their own message,
and the two confirmations). While opted out the tenant's latest message is
their STOP, so every other message would not be a reply to it: status
updates, reminders, "is it fixed?", appointments, button prompts, a turn
still answering a message sent before the STOP, a landlord's typed message.
A refused message is stored ``failed`` with ``error_code="opted_out"`` and
the reason, so the landlord sees in the conversation what was not sent (the
issue's own update is recorded on the issue as always).

``PROACTIVE_PURPOSES`` names what the product sends on its own initiative.
With a conversation they are refused like everything else not exempt; they
matter where a message goes to a bare number (an issue entered by hand with
only the tenant's phone): then the organization's conversation with that
number is looked up and its opt-out applies. Landlords' own alerts
(``landlord_alert``, ``emergency_alert``) are not tenant messages and are not
gated. The repair loop adds its purposes (reminders, "is it fixed?",
appointments) to ``PROACTIVE_PURPOSES``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from conversations.models import Conversation
from properties.models import Organization

# Sent on the product's or the landlord's initiative, never as a reply to the
# tenant's latest message. The repair-loop issue extends this list.
PROACTIVE_PURPOSES: frozenset[str] = frozenset(
    {"issue_update", "reminder", "fix_check", "appointment", "button_prompt", "generic"}
)
OPT_OUT_CONFIRM_PURPOSE = "opt_out_confirm"
OPT_IN_CONFIRM_PURPOSE = "opt_in_confirm"
# emergencies.screening.SAFETY_PURPOSE (that app is above this one: named, not imported).
SAFETY_PURPOSE = "safety"
# Sent even while a conversation is opted out.
OPT_OUT_EXEMPT_PURPOSES: frozenset[str] = frozenset({SAFETY_PURPOSE, OPT_OUT_CONFIRM_PURPOSE, OPT_IN_CONFIRM_PURPOSE})
OPTED_OUT_CODE = "opted_out"

OPT_OUT = "opt_out"
OPT_IN = "opt_in"

# keyword (normalised) -> the languages it belongs to ("" = international: the conversation's language decides).
_OPT_OUT: dict[str, str] = {
    # Twilio's standard opt-out words, and English
    "stop": "",
    "stopall": "",
    "stop all": "",
    "unsubscribe": "en",
    "unsubscribe me": "en",
    "cancel": "en",
    "end": "en",
    "quit": "en",
    "opt out": "en",
    "optout": "en",
    "stop messages": "en",
    "stop messaging me": "en",
    "stop texting me": "en",
    "stop sending messages": "en",
    "no more messages": "en",
    # Polish
    "rezygnuje": "pl",
    "rezygnacja": "pl",
    "wypisz": "pl",
    "wypisz mnie": "pl",
    "wypisuje sie": "pl",
    "nie wysylaj": "pl",
    "nie wysylajcie": "pl",
    "nie wysylajcie wiecej": "pl",
    "zatrzymaj wiadomosci": "pl",
    # Spanish
    "baja": "es",
    "darme de baja": "es",
    "dar de baja": "es",
    "alto": "es",
    "para": "es",
    "parar": "es pt",
    "cancelar": "es pt",
    "no mas mensajes": "es",
    "no enviar mas": "es",
    # Romanian
    "dezabonare": "ro",
    "dezabonez": "ro",
    "dezaboneaza ma": "ro",
    "opreste": "ro",
    "renunt": "ro",
    "nu mai trimiteti": "ro",
    "nu mai trimiteti mesaje": "ro",
    # Portuguese
    "pare": "pt",
    "sair": "pt",
    "descadastrar": "pt",
    "cancelar inscricao": "pt",
    "nao enviar mais": "pt",
    "chega de mensagens": "pt",
}
_OPT_IN: dict[str, str] = {
    "start": "",
    "unstop": "",
    "opt in": "en",
    "optin": "en",
    "resume": "en",
    "wznow": "pl",
    "wlacz": "pl",
    "alta": "es",
    "reanudar": "es",
    "empezar": "es",
    "iniciar": "es pt",
    "reporneste": "ro",
    "reabonare": "ro",
    "abonare": "ro",
    "voltar": "pt",
    "retomar": "pt",
    "comecar": "pt",
}
# Politeness around a keyword ("stop please", "por favor baja") is not a different message.
_FILLERS = ("please", "pls", "plz", "thanks", "thank you", "prosze", "dziekuje", "por favor", "va rog", "te rog")
_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Keyword:
    kind: str  # OPT_OUT or OPT_IN
    word: str  # normalised
    languages: tuple[str, ...]  # empty: international


def keyword_normalise(text: str) -> str:
    """Lower case, no diacritics (ł and ø folded too), punctuation and emoji as spaces, trimmed."""
    decomposed = unicodedata.normalize("NFKD", text.casefold().replace("ł", "l").replace("ø", "o"))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_NOT_WORD.sub(" ", plain).split())


def _strip_fillers(text: str) -> str:
    changed = True
    while changed:
        changed = False
        for filler in _FILLERS:
            if text.startswith(filler + " "):
                text, changed = text[len(filler) + 1 :], True
            if text.endswith(" " + filler):
                text, changed = text[: -len(filler) - 1], True
    return text


def keyword_read(text: str) -> Keyword | None:
    """The opt-out or opt-in keyword ``text`` is, as a whole; None otherwise."""
    words = _strip_fillers(keyword_normalise(text or ""))
    for kind, table in ((OPT_OUT, _OPT_OUT), (OPT_IN, _OPT_IN)):
        if words in table:
            return Keyword(kind=kind, word=words, languages=tuple(table[words].split()))
    return None


TEXTS: dict[str, dict[str, str]] = {
    OPT_OUT: {
        "en": "You won't get any more messages from {organization} here. If you tell us about an emergency we "
        "will still answer with safety advice. To turn messages back on, reply START or just send us a new "
        "message.",
        "pl": "Nie będziesz już otrzymywać od nas wiadomości ({organization}). Jeśli zgłosisz nagły wypadek, "
        "nadal odpowiemy radą, jak zachować bezpieczeństwo. Aby znów otrzymywać wiadomości, odpowiedz START "
        "lub po prostu napisz do nas.",
        "es": "Ya no recibirás más mensajes de {organization} por aquí. Si nos avisas de una emergencia, te "
        "seguiremos respondiendo con consejos de seguridad. Para volver a recibir mensajes, responde START o "
        "simplemente escríbenos.",
        "ro": "Nu veți mai primi mesaje de la {organization} aici. Dacă ne anunțați o urgență, vă vom răspunde "
        "în continuare cu sfaturi de siguranță. Pentru a primi din nou mesaje, răspundeți START sau trimiteți-ne "
        "un mesaj nou.",
        "pt": "Não vai receber mais mensagens de {organization} por aqui. Se nos comunicar uma emergência, "
        "continuaremos a responder com conselhos de segurança. Para voltar a receber mensagens, responda START "
        "ou envie-nos uma nova mensagem.",
    },
    OPT_IN: {
        "en": "Messages from {organization} are back on. Tell us here if anything needs repairing.",
        "pl": "Wiadomości od {organization} są znowu włączone. Napisz tutaj, jeśli coś wymaga naprawy.",
        "es": "Los mensajes de {organization} vuelven a estar activados. Escríbenos aquí si hay algo que reparar.",
        "ro": "Mesajele de la {organization} sunt din nou active. Scrieți-ne aici dacă trebuie reparat ceva.",
        "pt": "As mensagens de {organization} voltaram a estar ativas. Diga-nos aqui se algo precisar de reparação.",
    },
}


def confirmation_text(*, keyword: Keyword, conversation: Conversation) -> str:
    """The confirmation in the tenant's language: the conversation's when the
    keyword fits it (or is international), else the keyword's own."""
    language = conversation.language or "en"
    if keyword.languages and language not in keyword.languages:
        language = keyword.languages[0]
    texts = TEXTS[keyword.kind]
    return texts.get(language, texts["en"]).format(organization=conversation.organization.name)


def keyword_consumes(*, keyword: Keyword | None, conversation: Conversation) -> bool:
    """Whether the message is the opt-out machinery's alone (no turn): every
    STOP, and START from an opted-out conversation."""
    if keyword is None:
        return False
    return keyword.kind == OPT_OUT or conversation.opted_out_at is not None


def conversation_opt_out(*, conversation: Conversation, at: datetime | None = None) -> bool:
    """Opt the conversation out; True when this call did (it was opted in)."""
    at = at or timezone.now()
    changed = Conversation.objects.filter(pk=conversation.pk, opted_out_at__isnull=True).update(opted_out_at=at)
    if changed:
        conversation.opted_out_at = at
    return bool(changed)


def conversation_opt_in(*, conversation: Conversation) -> bool:
    """Turn messages back on; True when this call did (it was opted out)."""
    changed = Conversation.objects.filter(pk=conversation.pk, opted_out_at__isnull=False).update(opted_out_at=None)
    conversation.opted_out_at = None
    return bool(changed)


def opt_out_refusal(
    *,
    purpose: str,
    conversation: Conversation | None,
    organization: Organization | None = None,
    to: str = "",
) -> str:
    """Why a message of ``purpose`` may not go to this conversation (or bare
    number) now; "" when it may. Reads the conversation as given (the caller
    has it fresh: the turn's lock, the issue's row, the send's select)."""
    if purpose in OPT_OUT_EXEMPT_PURPOSES:
        return ""
    since = None
    if conversation is not None:
        since = conversation.opted_out_at
    elif purpose in PROACTIVE_PURPOSES and organization is not None and to:
        phone = to.removeprefix("whatsapp:")
        since = (
            Conversation.objects.filter(organization=organization, phone=phone, retired_at__isnull=True)
            .values_list("opted_out_at", flat=True)
            .first()
        )
    if since is None:
        return ""
    return (
        f"not sent: the tenant opted out of WhatsApp messages (STOP) at {since:%Y-%m-%d %H:%M} UTC; "
        "they are sent again once the tenant writes"
    )
