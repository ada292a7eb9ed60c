"""The few texts the product writes itself rather than the model (identity
questions, the issue reference, the duplicate notice, the fallback and the
flag-off acknowledgement), in the languages tenants here write in.

The tenant's language is guessed from their own words (common function words
and letters only one of these languages uses), so it is known even when no
model is called: the fallback after an outage and the acknowledgement with
the assistant switched off reach a Polish tenant in Polish."""

from __future__ import annotations

import re

DEFAULT_LANGUAGE = "en"

# Short words that are common in one language and rare in the others.
_MARKER_WORDS = {
    "en": "the and is my i it have has not there please thanks thank hello hi with this that what can you our",
    "pl": "nie jest mam się że czy jak co mnie mój moja moje ale bardzo dzień dobry cześć proszę dziękuję już",
    "es": "el la los las no que y en es por para con una mi tengo hay está muy hola gracias del pero cuando agua",
    "ro": "și nu este în cu pe am mea meu sunt bună mulțumesc vă rog merge apa avem",
    "pt": "o os não é com um uma meu minha tenho está muito olá obrigado obrigada bom dia da do água temos",
}
MARKER_WORDS = {language: frozenset(words.split()) for language, words in _MARKER_WORDS.items()}
# Letters that mark one language among these five.
MARKER_LETTERS = {"pl": set("ąćęłńśźż"), "es": set("ñ¿¡"), "ro": set("ăâîșşțţ"), "pt": set("ãõç")}
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)

REPLIES: dict[str, dict[str, str]] = {
    "property_not_found": {
        "en": "Sorry, I couldn't find that address among the homes we manage. "
        "Could you send the full address or postcode?",
        "pl": "Przepraszamy, nie znaleźliśmy tego adresu wśród zarządzanych przez nas mieszkań. "
        "Czy możesz podać pełny adres lub kod pocztowy?",
        "es": "Lo siento, no encuentro esa dirección entre las viviendas que gestionamos. "
        "¿Puedes enviar la dirección completa o el código postal?",
        "ro": "Ne pare rău, nu am găsit această adresă printre locuințele pe care le administrăm. "
        "Ne puteți trimite adresa completă sau codul poștal?",
        "pt": "Desculpe, não encontrei essa morada entre as casas que gerimos. "
        "Pode enviar a morada completa ou o código postal?",
    },
    "property_which_flat": {  # the address fits several flats in one building
        "en": "Thanks! We look after more than one flat at {building}. What is your flat number?",
        "pl": "Dziękujemy! Zarządzamy kilkoma mieszkaniami pod adresem {building}. Jaki jest numer Twojego mieszkania?",
        "es": "¡Gracias! Gestionamos más de un piso en {building}. ¿Cuál es el número de tu piso?",
        "ro": "Mulțumim! Administrăm mai multe apartamente la {building}. Care este numărul apartamentului?",
        "pt": "Obrigado! Gerimos mais do que um apartamento em {building}. Qual é o número do seu apartamento?",
    },
    "property_which": {  # the address fits several homes
        "en": "Thanks! That could be more than one of the homes we manage. Could you send the house or flat "
        "number, the street and the postcode?",
        "pl": "Dziękujemy! To może być więcej niż jedno z zarządzanych przez nas mieszkań. Czy możesz podać numer "
        "domu lub mieszkania, ulicę i kod pocztowy?",
        "es": "¡Gracias! Podría ser más de una de las viviendas que gestionamos. ¿Puedes enviar el número de la "
        "casa o del piso, la calle y el código postal?",
        "ro": "Mulțumim! Ar putea fi mai multe dintre locuințele pe care le administrăm. Ne puteți trimite numărul "
        "casei sau al apartamentului, strada și codul poștal?",
        "pt": "Obrigado! Pode ser mais do que uma das casas que gerimos. Pode enviar o número da casa ou do "
        "apartamento, a rua e o código postal?",
    },
    "property_candidate": {
        "en": "Thanks! Is your home {address}, {postcode}? Please reply yes or no.",
        "pl": "Dziękujemy! Czy Twój adres to {address}, {postcode}? Odpowiedz tak lub nie.",
        "es": "¡Gracias! ¿Tu vivienda es {address}, {postcode}? Responde sí o no.",
        "ro": "Mulțumim! Locuința dumneavoastră este {address}, {postcode}? Vă rugăm să răspundeți cu da sau nu.",
        "pt": "Obrigado! A sua casa é {address}, {postcode}? Responda sim ou não.",
    },
    "property_rejected": {
        "en": "No problem. What is your address or postcode?",
        "pl": "Nie ma problemu. Jaki jest Twój adres lub kod pocztowy?",
        "es": "No hay problema. ¿Cuál es tu dirección o código postal?",
        "ro": "Nicio problemă. Care este adresa sau codul poștal?",
        "pt": "Sem problema. Qual é a sua morada ou código postal?",
    },
    "property_confirmed_lead": {  # when the assistant goes on with the report the tenant already began
        "en": "Thanks, that's {address}.",
        "pl": "Dziękujemy, to {address}.",
        "es": "Gracias, es {address}.",
        "ro": "Mulțumim, este {address}.",
        "pt": "Obrigado, é {address}.",
    },
    "property_confirmed": {
        "en": "Thanks, that's {address}. What can I help you with?",
        "pl": "Dziękujemy, to {address}. W czym możemy pomóc?",
        "es": "Gracias, es {address}. ¿En qué puedo ayudarte?",
        "ro": "Mulțumim, este {address}. Cu ce vă putem ajuta?",
        "pt": "Obrigado, é {address}. Em que posso ajudar?",
    },
    "issue_reference": {
        "en": "Your reference is {reference}.",
        "pl": "Numer Twojego zgłoszenia: {reference}.",
        "es": "Tu número de referencia es {reference}.",
        "ro": "Numărul de referință este {reference}.",
        "pt": "A sua referência é {reference}.",
    },
    "issue_duplicate": {
        "en": "This sounds like the issue you already reported ({reference}: {title}). "
        "I've added your new details to it.",
        "pl": "To chyba ten sam problem, który już zgłoszono ({reference}: {title}). "
        "Dodaliśmy do niego nowe informacje.",
        "es": "Parece la misma incidencia que ya comunicaste ({reference}: {title}). He añadido tus nuevos detalles.",
        "ro": "Pare să fie aceeași problemă pe care ați raportat-o deja ({reference}: {title}). "
        "Am adăugat noile detalii.",
        "pt": "Parece ser o mesmo problema que já comunicou ({reference}: {title}). Acrescentei os novos detalhes.",
    },
    "emergency_recorded": {
        "en": "I've recorded this as an emergency and alerted {organization}. Your reference is {reference}. "
        "I'm still here if you have questions about staying safe.",
        "pl": "Zgłosiliśmy to jako nagły wypadek i powiadomiliśmy: {organization}. Numer zgłoszenia: {reference}. "
        "Nadal tu jestem, jeśli masz pytania o to, jak zachować bezpieczeństwo.",
        "es": "He registrado esto como una emergencia y he avisado a {organization}. Tu número de referencia es "
        "{reference}. Sigo aquí si tienes preguntas sobre cómo mantenerte a salvo.",
        "ro": "Am înregistrat aceasta ca urgență și am anunțat {organization}. Numărul de referință este "
        "{reference}. Sunt în continuare aici dacă aveți întrebări despre cum să rămâneți în siguranță.",
        "pt": "Registei isto como uma emergência e avisei {organization}. A sua referência é {reference}. "
        "Continuo aqui se tiver perguntas sobre como se manter em segurança.",
    },
    "emergency_stood_down": {
        "en": "An update on your message: after checking it, we are not treating it as an emergency. {reason}",
        "pl": "Informacja o Twojej wiadomości: po sprawdzeniu nie traktujemy jej jako nagłego wypadku. {reason}",
        "es": "Una actualización sobre tu mensaje: tras revisarlo, no lo tratamos como una emergencia. {reason}",
        "ro": "O actualizare despre mesajul dumneavoastră: după verificare, nu îl tratăm ca pe o urgență. {reason}",
        "pt": "Uma atualização sobre a sua mensagem: depois de a verificarmos, não a tratamos como uma emergência. "
        "{reason}",
    },
    "emergency_stood_down_reference": {
        "en": "Your report stays open as {reference} and {organization} will deal with it as a normal repair.",
        "pl": "Twoje zgłoszenie {reference} pozostaje otwarte; {organization} zajmie się nim jak zwykłą naprawą.",
        "es": "Tu incidencia sigue abierta como {reference} y {organization} la tratará como una reparación normal.",
        "ro": "Sesizarea rămâne deschisă ca {reference}, iar {organization} o va trata ca pe o reparație obișnuită.",
        "pt": "O seu pedido continua aberto como {reference} e {organization} tratará dele como uma reparação normal.",
    },
    "fallback": {
        "en": "Sorry, I'm having trouble answering right now. I've passed your message to {organization} "
        "and someone will get back to you here. If anyone is in danger, call the emergency services.",
        "pl": "Przepraszamy, mamy teraz problem z odpowiedzią. Twoja wiadomość trafiła do: {organization}, "
        "ktoś odpowie Ci tutaj. Jeśli komuś grozi niebezpieczeństwo, zadzwoń po służby ratunkowe.",
        "es": "Lo siento, ahora mismo tengo problemas para responder. He enviado tu mensaje a {organization} "
        "y alguien te contestará aquí. Si alguien está en peligro, llama a los servicios de emergencia.",
        "ro": "Ne pare rău, momentan nu putem răspunde. Am transmis mesajul dumneavoastră către {organization} "
        "și cineva vă va răspunde aici. Dacă cineva este în pericol, sunați la serviciile de urgență.",
        "pt": "Desculpe, estou com dificuldades em responder agora. Enviei a sua mensagem para {organization} "
        "e alguém lhe responderá aqui. Se alguém estiver em perigo, ligue para os serviços de emergência.",
    },
    "assistant_off": {
        "en": "Thanks for your message. It has been passed to {organization}, who will reply here as soon as they can.",
        "pl": "Dziękujemy za wiadomość. Przekazaliśmy ją do: {organization}. "
        "Odpowiedź otrzymasz tutaj jak najszybciej.",
        "es": "Gracias por tu mensaje. Lo hemos enviado a {organization}, que te responderá aquí lo antes posible.",
        "ro": "Vă mulțumim pentru mesaj. L-am transmis către {organization}, care vă va răspunde aici cât mai curând.",
        "pt": "Obrigado pela sua mensagem. Foi enviada para {organization}, que responderá aqui assim que possível.",
    },
}


def language_guess(text: str) -> str | None:
    """The language of ``text`` among English, Polish, Spanish, Romanian and
    Portuguese, or None when the text says too little ("ok", a photo)."""
    lowered = text.lower()
    words = _WORD.findall(lowered)
    letters = set(lowered)
    scores = {
        language: sum(word in markers for word in words) + 2 * len(letters & MARKER_LETTERS.get(language, set()))
        for language, markers in MARKER_WORDS.items()
    }
    ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)
    (best, top), (_, runner_up) = ranked[0], ranked[1]
    return best if top >= 2 and top > runner_up else None


def reply_text(key: str, *, language: str, **values: str) -> str:
    """The text ``key`` in ``language`` (English when there is no translation)."""
    texts = REPLIES[key]
    return texts.get(language, texts[DEFAULT_LANGUAGE]).format(**values)
