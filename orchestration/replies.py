"""The few texts the product writes itself rather than the model (identity
questions, the issue reference, the duplicate notice, the fallback, the
flag-off acknowledgement, the tap-to-answer questions and the answers to
messages we cannot read), in the languages tenants here write in. The first
reply to a new number greets them by their WhatsApp profile name when it is a
plain first name (``reply_greeted``).

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
    "voice_note_type": {  # a voice note nobody could transcribe, when no model reads it
        "en": "Sorry, we couldn't listen to your voice note. Could you type your message instead, please?",
        "pl": "Przepraszamy, nie udało nam się odsłuchać Twojej wiadomości głosowej. Czy możesz ją napisać?",
        "es": "Lo siento, no hemos podido escuchar tu nota de voz. ¿Puedes escribir tu mensaje, por favor?",
        "ro": "Ne pare rău, nu am putut asculta mesajul vocal. Ne puteți scrie mesajul, vă rugăm?",
        "pt": "Desculpe, não conseguimos ouvir a sua mensagem de voz. Pode escrever a sua mensagem, por favor?",
    },
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
    "choice_yes_no": {  # the numbered text of a yes / no question, where no quick-reply template is configured
        "en": "Reply 1 for Yes, 2 for No.",
        "pl": "Odpowiedz 1, jeśli tak, lub 2, jeśli nie.",
        "es": "Responde 1 para Sí o 2 para No.",
        "ro": "Răspundeți 1 pentru Da sau 2 pentru Nu.",
        "pt": "Responda 1 para Sim ou 2 para Não.",
    },
    "button_yes": {"en": "Yes", "pl": "Tak", "es": "Sí", "ro": "Da", "pt": "Sim"},
    "button_no": {"en": "No", "pl": "Nie", "es": "No", "ro": "Nu", "pt": "Não"},
    "property_confirm_question": {  # the question of the property_confirm buttons
        "en": "Is your home {address}, {postcode}?",
        "pl": "Czy Twój adres to {address}, {postcode}?",
        "es": "¿Tu vivienda es {address}, {postcode}?",
        "ro": "Locuința dumneavoastră este {address}, {postcode}?",
        "pt": "A sua casa é {address}, {postcode}?",
    },
    "location_candidate": {  # a location pin matched one home
        "en": "Thanks for the location. Is your home {address}, {postcode}?",
        "pl": "Dziękujemy za lokalizację. Czy Twój adres to {address}, {postcode}?",
        "es": "Gracias por la ubicación. ¿Tu vivienda es {address}, {postcode}?",
        "ro": "Mulțumim pentru locație. Locuința dumneavoastră este {address}, {postcode}?",
        "pt": "Obrigado pela localização. A sua casa é {address}, {postcode}?",
    },
    "location_not_found": {
        "en": "Thanks for the location. I couldn't match it to a home we manage. "
        "Could you send your address or postcode?",
        "pl": "Dziękujemy za lokalizację. Nie pasuje ona do żadnego z zarządzanych przez nas mieszkań. "
        "Czy możesz podać adres lub kod pocztowy?",
        "es": "Gracias por la ubicación. No coincide con ninguna de las viviendas que gestionamos. "
        "¿Puedes enviar tu dirección o código postal?",
        "ro": "Mulțumim pentru locație. Nu corespunde niciunei locuințe pe care o administrăm. "
        "Ne puteți trimite adresa sau codul poștal?",
        "pt": "Obrigado pela localização. Não corresponde a nenhuma das casas que gerimos. "
        "Pode enviar a sua morada ou código postal?",
    },
    "property_choice": {  # a number with several homes chooses one
        "en": "Which home is your message about?\n{options}\nReply with the number.",
        "pl": "Którego mieszkania dotyczy Twoja wiadomość?\n{options}\nOdpowiedz numerem.",
        "es": "¿A qué vivienda se refiere tu mensaje?\n{options}\nResponde con el número.",
        "ro": "La ce locuință se referă mesajul dumneavoastră?\n{options}\nRăspundeți cu numărul.",
        "pt": "A que casa se refere a sua mensagem?\n{options}\nResponda com o número.",
    },
    "unsupported_kind": {  # a contact card, a poll, an edited message: anything we cannot read
        "en": "Sorry, I can read text, photos and voice notes, but not this kind of message. "
        "Could you type it instead?",
        "pl": "Przepraszamy, odczytujemy tekst, zdjęcia i wiadomości głosowe, ale nie ten rodzaj wiadomości. "
        "Czy możesz to napisać?",
        "es": "Lo siento, puedo leer texto, fotos y notas de voz, pero no este tipo de mensaje. ¿Puedes escribirlo?",
        "ro": "Ne pare rău, putem citi text, fotografii și mesaje vocale, dar nu acest tip de mesaj. Îl puteți scrie?",
        "pt": "Desculpe, consigo ler texto, fotografias e mensagens de voz, mas não este tipo de mensagem. "
        "Pode escrevê-lo?",
    },
    "sticker_first": {  # a sticker (or a reaction) is the first thing a number sends
        "en": "How can I help? Tell me what needs repairing and where.",
        "pl": "W czym możemy pomóc? Napisz, co wymaga naprawy i gdzie.",
        "es": "¿En qué puedo ayudarte? Cuéntame qué hay que reparar y dónde.",
        "ro": "Cu ce vă putem ajuta? Spuneți-ne ce trebuie reparat și unde.",
        "pt": "Em que posso ajudar? Diga-me o que precisa de reparação e onde.",
    },
    "greeting": {  # opens the product's own first reply when WhatsApp gave us a usable name
        "en": "Hi {name}!",
        "pl": "Dzień dobry, {name}!",
        "es": "¡Hola, {name}!",
        "ro": "Bună ziua, {name}!",
        "pt": "Olá, {name}!",
    },
    "property_rejected": {
        "en": "No problem. What is your address or postcode?",
        "pl": "Nie ma problemu. Jaki jest Twój adres lub kod pocztowy?",
        "es": "No hay problema. ¿Cuál es tu dirección o código postal?",
        "ro": "Nicio problemă. Care este adresa sau codul poștal?",
        "pt": "Sem problema. Qual é a sua morada ou código postal?",
    },
    "property_rejected_own": {  # a tenant with several homes said the proposed one is not it; the choice follows
        "en": "No problem.",
        "pl": "Nie ma problemu.",
        "es": "No hay problema.",
        "ro": "Nicio problemă.",
        "pt": "Sem problema.",
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


# A WhatsApp profile name is whatever the sender typed: only a plain first
# name (letters, an apostrophe or a hyphen) is used to greet them.
_GREETABLE = re.compile(r"^[^\W\d_]+(?:['’-][^\W\d_]+)*$", re.UNICODE)
NAME_MAX_CHARS = 30


def greeting_name(profile_name: str) -> str:
    """The first name to greet the sender by, from their WhatsApp profile
    name ("" when it is not a plain name: emoji, digits, a business name).
    Only ever used for a greeting, never as proof of who they are."""
    first = (profile_name or "").strip().split(maxsplit=1)[0] if (profile_name or "").strip() else ""
    if not first or len(first) > NAME_MAX_CHARS or not _GREETABLE.match(first):
        return ""
    return first


def reply_greeted(key: str, *, language: str, profile_name: str, **values: str) -> str:
    """``reply_text(key)`` opened with "Hi Ana!" when the profile name is a usable first name."""
    text = reply_text(key, language=language, **values)
    name = greeting_name(profile_name)
    return f"{reply_text('greeting', language=language, name=name)} {text}" if name else text


def reply_text(key: str, *, language: str, **values: str) -> str:
    """The text ``key`` in ``language`` (English when there is no translation)."""
    texts = REPLIES[key]
    return texts.get(language, texts[DEFAULT_LANGUAGE]).format(**values)
