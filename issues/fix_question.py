"""The question "Is it fixed?" asked when the landlord resolves an issue
(``issues/status.py``), and the product's texts of the whole check, in the
tenant's language (the conversation's; English when unknown). What the
answers do: ``issues/fix_check.py``."""

from __future__ import annotations

from django.utils import timezone

from conversations.models import Conversation, Message
from conversations.outbound import Choice, outbound_choice_queue
from issues.models import Issue

FIX_ACTION = "issue_fixed"  # payloads issue_fixed:yes:<reference>, issue_fixed:no:<reference>
FIX_PURPOSE = "issue_fixed"  # the question, and its template's key in WHATSAPP_TEMPLATES

TEXTS: dict[str, dict[str, str]] = {
    "question": {
        "en": "Update on your repair {reference} ({title}): your landlord has marked it as fixed. Is it fixed?",
        "pl": "Aktualizacja zgłoszenia {reference} ({title}): właściciel oznaczył usterkę jako naprawioną. "
        "Czy jest naprawiona?",
        "es": "Novedades de tu reparación {reference} ({title}): el propietario la ha marcado como arreglada. "
        "¿Está arreglada?",
        "ro": "Noutăți despre reparația {reference} ({title}): proprietarul a marcat-o ca rezolvată. Este rezolvată?",
        "pt": "Atualização da sua reparação {reference} ({title}): o senhorio marcou-a como resolvida. Está resolvida?",
    },
    "yes_no": {
        "en": "Reply 1 for Yes, 2 for No.",
        "pl": "Odpowiedz 1, jeśli tak, lub 2, jeśli nie.",
        "es": "Responde 1 para Sí o 2 para No.",
        "ro": "Răspundeți 1 pentru Da sau 2 pentru Nu.",
        "pt": "Responda 1 para Sim ou 2 para Não.",
    },
    "yes": {"en": "Yes", "pl": "Tak", "es": "Sí", "ro": "Da", "pt": "Sim"},
    "no": {"en": "No", "pl": "Nie", "es": "No", "ro": "Nu", "pt": "Não"},
    "rating": {
        "en": "Glad it's fixed. How would you rate the repair, from 1 (poor) to 5 (excellent)? Reply with a number.",
        "pl": "Cieszymy się, że działa. Jak oceniasz naprawę, od 1 (źle) do 5 (świetnie)? Odpowiedz liczbą.",
        "es": "Nos alegra que esté arreglado. ¿Qué nota le das a la reparación, de 1 (mala) a 5 (excelente)? "
        "Responde con un número.",
        "ro": "Ne bucurăm că s-a rezolvat. Ce notă dați reparației, de la 1 (slab) la 5 (excelent)? "
        "Răspundeți cu un număr.",
        "pt": "Ainda bem que está resolvido. Que nota dá à reparação, de 1 (má) a 5 (excelente)? "
        "Responda com um número.",
    },
    "comment": {
        "en": "Thank you. If you'd like to add a comment for your landlord, just reply here.",
        "pl": "Dziękujemy. Jeśli chcesz dodać komentarz dla właściciela, po prostu odpisz.",
        "es": "Gracias. Si quieres añadir un comentario para el propietario, responde aquí.",
        "ro": "Mulțumim. Dacă doriți să adăugați un comentariu pentru proprietar, răspundeți aici.",
        "pt": "Obrigado. Se quiser deixar um comentário ao senhorio, responda aqui.",
    },
    "not_fixed": {
        "en": "Sorry it's not fixed. I've reopened {reference} and told your landlord. What is still wrong?",
        "pl": "Przykro nam, że nie działa. Ponownie otworzyłem {reference} i powiadomiłem właściciela. "
        "Co jest nadal nie tak?",
        "es": "Sentimos que no esté arreglado. He reabierto {reference} y avisado al propietario. ¿Qué sigue mal?",
        "ro": "Ne pare rău că nu s-a rezolvat. Am redeschis {reference} și l-am anunțat pe proprietar. "
        "Ce nu este încă în regulă?",
        "pt": "Lamentamos que não esteja resolvido. Reabri {reference} e avisei o senhorio. O que continua mal?",
    },
}


def text(key: str, language: str, **values: str) -> str:
    variants = TEXTS[key]
    return variants.get(language, variants["en"]).format(**values)


def language_of(conversation: Conversation) -> str:
    return conversation.language or "en"


def fix_question_ask(*, issue: Issue, conversation: Conversation, author: str = Message.Author.SYSTEM) -> Message:
    """Ask the tenant whether ``issue`` is fixed (inside the caller's
    transaction; it sets and saves ``fix_asked_at``). ``author``: who resolved
    it (the landlord, or the system)."""
    language = language_of(conversation)
    question = text("question", language, reference=issue.reference, title=issue.title)
    choices = [
        Choice(payload=f"{FIX_ACTION}:yes:{issue.reference}", title=text("yes", language)),
        Choice(payload=f"{FIX_ACTION}:no:{issue.reference}", title=text("no", language)),
    ]
    message = outbound_choice_queue(
        conversation=conversation,
        body=f"{question}\n{text('yes_no', language)}",
        choices=choices,
        purpose=FIX_PURPOSE,
        content_variables={"1": f"{issue.reference} ({issue.title})", "2": issue.reference},
        language=language,
        author=author,
    )
    issue.fix_asked_at, issue.fix_answer, issue.fix_answered_at = timezone.now(), "", None
    issue.rating, issue.rating_comment = None, ""
    issue.save(update_fields=["fix_asked_at", "fix_answer", "fix_answered_at", "rating", "rating_comment"])
    return message
