"""The built-in emergency rules and safety messages, seeded by a data
migration and re-seeded by tests. Organizations add their own rules and may
override any safety message in the admin.

Phrases are whole words or phrases (matched on normalised text at word
boundaries); ``re:`` marks a regular expression over normalised text, so it is
written the way ``normalise`` leaves text: lower case, no accents, no
punctuation, and no doubled letters ("rotten egg" is "roten eg",
"calefacción" is "calefacion", "off" is "of").

Seeding adds what is missing and never edits or deletes a row, so a landlord's
changes to a default (disabling it, say) survive a new release.
"""

from __future__ import annotations

from emergencies.no_heat_rules import no_heat_rules

# category -> language -> phrases
RULES: dict[str, dict[str, list[str]]] = {
    "gas": {
        "en": [
            "gas leak",
            "smell gas",
            "smell of gas",
            "smells of gas",
            "smelling gas",
            "gas smell",
            "leaking gas",
            "gas escape",
            # Patterns run on normalised text: doubled letters are squeezed ("hissing" -> "hising").
            "re:\\bgas\\b.{0,20}\\b(smel\\w*|leak\\w*|his\\w*)",
            "re:\\b(smel\\w*|leak\\w*|his\\w*)\\b.{0,20}\\bgas\\b",
            "gas odour",
            "gas odor",
            "odour of gas",
            "odor of gas",
            "smells like gas",
            "smell like gas",
            # The smell added to mains gas; tenants describe it rather than name it.
            "re:\\broten egs?\\b.{0,20}\\b(smel\\w*|odou?r\\w*|stink\\w*|stench)\\b",
            "re:\\b(smel\\w*|odou?r\\w*|stink\\w*|stench)\\b.{0,20}\\broten egs?\\b",
        ],
        "pl": [
            "wyciek gazu",
            "czuc gaz",
            "czuje gaz",
            "zapach gazu",
            "smierdzi gazem",
            "gaz sie ulatnia",
            "ulatnia sie gaz",
        ],
        "es": ["fuga de gas", "huele a gas", "olor a gas", "escape de gas"],
        "ro": ["scurgere de gaz", "miroase a gaz", "miros de gaz"],
        "pt": ["fuga de gas", "vazamento de gas", "cheiro a gas", "cheiro de gas", "cheira a gas"],
    },
    "carbon_monoxide": {
        "en": ["carbon monoxide", "co alarm", "co detector", "co2 alarm", "monoxide alarm"],
        # Every language names the alarm, as English does ("co alarm", "co detector").
        "pl": ["czad", "tlenek wegla", "czujnik czadu", "alarm czadu", "czujnik co", "alarm co"],
        "es": ["monoxido de carbono", "alarma de monoxido", "detector de monoxido", "alarma de co", "detector de co"],
        "ro": [
            "monoxid de carbon",
            "alarma de co",
            "detector de co",
            "senzor de co",
            "detector de monoxid",
            "alarma de monoxid",
            "senzorul de monoxid",
        ],
        "pt": [
            "monoxido de carbono",
            "alarme de co",
            "detetor de co",
            "detector de co",
            "alarme de monoxido",
            "detetor de monoxido",
            "detector de monoxido",
        ],
    },
    "fire_smoke": {
        "en": [
            "fire",
            "on fire",
            "smoke",
            "smoke coming",
            "flames",
            "burning smell",
            "smell burning",
            "something burning",
            "smoke alarm going off",
        ],
        "pl": ["pozar", "ogien", "dym", "pali sie"],
        "es": ["incendio", "fuego", "humo", "se quema"],
        # Romanian puts the article on the end: "focul", "fumul", "incendiul".
        "ro": ["incendiu", "incendiul", "foc", "focul", "fum", "fumul", "arde", "a luat foc", "ia foc"],
        "pt": ["incendio", "fogo", "fumo", "fumaca", "esta a arder"],
    },
    "flooding": {
        "en": [
            "flood",
            "flooding",
            "flooded",
            "burst pipe",
            "pipe burst",
            "water pouring",
            "water coming through",
            "water through the ceiling",
            "ceiling collapsing",
            "water everywhere",
            "pouring water",
            "re:\\bwater\\b.{0,20}\\b(pouring|gushing|flowing|coming) (through|from|out of|down)\\b",
        ],
        "pl": ["zalanie", "zalewa", "zalalo", "pekla rura", "woda leje sie", "powodz"],
        "es": ["inundacion", "inundado", "tuberia rota", "se ha roto una tuberia", "agua por todas partes"],
        "ro": ["inundatie", "inundatia", "inundat", "teava sparta", "curge apa din tavan"],
        "pt": ["inundacao", "inundado", "cano rebentado", "cano estourado", "agua por todo o lado"],
    },
    "electrical": {
        "en": [
            "sparks",
            "sparking",
            "exposed wires",
            "live wire",
            "electric shock",
            "socket smoking",
            "burning socket",
            "electrical fire",
        ],
        "pl": ["iskrzy", "porazenie pradem", "goly przewod", "kopie prad", "kopnal mnie prad", "razi pradem"],
        "es": [
            "chispas",
            "descarga electrica",
            "cables expuestos",
            "enchufe quemado",
            "da corriente",
            "me dio corriente",
            "da calambre",
            "me dio calambre",
        ],
        "ro": ["scantei", "electrocutat", "fire descoperite", "priza arsa", "m a curentat", "curenteaza", "da curent"],
        "pt": [
            "faiscas",
            "choque eletrico",
            "fios expostos",
            "tomada queimada",
            "deu choque",
            "da choque",
            "levei um choque",
            "leva choque",
        ],
    },
    "no_heat_vulnerable": {
        "en": [
            "no heating and a baby",
            "no heat newborn",
            "no heating elderly",
            "no heating disabled",
            # Heating broken (not only "no heating") and a vulnerable person, either order.
            "re:\\b(heating|heat|boiler|heater)\\b.{0,20}\\b(broken|broke down|broken down|dead|not working|"
            "isn t working|isnt working|stoped working|failed|packed up|gone out|cut of|won t come on|wont come on)"
            "\\b.{0,60}\\b(baby|babies|newborn|infant|todler|elderly|pregnant|disabled|oxygen)\\b",
            "re:\\b(baby|babies|newborn|infant|todler|elderly|pregnant|disabled|oxygen)\\b.{0,60}\\b(no heating|"
            "no heat|heating|boiler|heater)\\b.{0,20}\\b(broken|broke down|dead|not working|isn t working|"
            "isnt working|stoped working|failed|packed up|gone out|cut of)\\b",
        ],
        "pl": [
            "brak ogrzewania niemowle",
            "re:\\b(nie mam ogrzewania|nie mamy ogrzewania|nie ma ogrzewania|brak ogrzewania|bez ogrzewania|"
            "ogrzewanie nie dziala|nie dziala ogrzewanie|piec nie dziala|zepsul sie piec|piec sie zepsul)\\b"
            ".{0,60}\\b(niemowl\\w*|noworod\\w*|bobas\\w*|starsz\\w*|w ciazy|ciezarn\\w*|"
            "niepelnospraw\\w*|tlen\\w*)",
            "re:\\b(niemowl\\w*|noworod\\w*|bobas\\w*|w ciazy|ciezarn\\w*|niepelnospraw\\w*)\\b.{0,60}"
            "\\b(nie mam ogrzewania|nie mamy ogrzewania|nie ma ogrzewania|brak ogrzewania|bez ogrzewania|"
            "ogrzewanie nie dziala|nie dziala ogrzewanie|piec nie dziala)\\b",
        ],
        "es": [
            "sin calefaccion bebe",
            # "calefacción" normalises to "calefacion".
            "re:\\b(no tengo calefacion|no tenemos calefacion|no hay calefacion|sin calefacion|"
            "no funciona la calefacion|la calefacion no funciona|se ha roto la calefacion)\\b"
            ".{0,60}\\b(bebes?|recien nacid\\w*|embarazad\\w*|ancian\\w*|persona mayor|discapacitad\\w*|"
            "oxigeno)\\b",
            "re:\\b(bebes?|recien nacid\\w*|embarazad\\w*|ancian\\w*|discapacitad\\w*)\\b.{0,60}"
            "\\b(no tengo calefacion|no tenemos calefacion|no hay calefacion|sin calefacion|"
            "no funciona la calefacion|la calefacion no funciona)\\b",
        ],
        "ro": [
            "fara caldura bebelus",
            "re:\\b(nu am caldura|nu avem caldura|nu e caldura|fara caldura|nu am incalzire|nu avem incalzire|"
            "fara incalzire|nu merge caldura|nu merge incalzirea|nu merge centrala|centrala nu merge|"
            "centrala nu functioneaza|centrala s a stricat|s a stricat centrala)\\b.{0,60}"
            "\\b(bebelus\\w*|nou nascut\\w*|gravida|insarcinata|batran\\w*|varstnic\\w*|handicap\\w*|oxigen)\\b",
            "re:\\b(bebelus\\w*|nou nascut\\w*|gravida|insarcinata)\\b.{0,60}\\b(nu am caldura|"
            "nu avem caldura|fara caldura|nu am incalzire|nu avem incalzire|fara incalzire|centrala nu merge)\\b",
        ],
        "pt": [
            "sem aquecimento bebe",
            "re:\\b(nao tenho aquecimento|nao temos aquecimento|nao ha aquecimento|sem aquecimento|"
            "o aquecimento nao funciona|aquecimento avariado|nao tenho calefacao|sem calefacao|"
            "caldeira avariada|a caldeira nao funciona)\\b.{0,60}\\b(bebes?|recem nascid\\w*|gravida|"
            "idos[oa]s?|deficien\\w*|oxigenio)\\b",
            "re:\\b(bebes?|recem nascid\\w*|gravida)\\b.{0,60}\\b(nao tenho aquecimento|"
            "nao temos aquecimento|sem aquecimento|o aquecimento nao funciona|sem calefacao)\\b",
        ],
    },
    "security": {
        "en": [
            "break in",
            "broken into",
            "burglary",
            "burgled",
            "cannot lock",
            "can't lock",
            "cant lock",
            "front door won't lock",
            "door won't lock",
            "locked out",
            "broke in",
            "broke into",
            "breaking in",
            "intruder",
        ],
        "pl": [
            "wlamanie",
            "nie moge zamknac drzwi",
            "wlamali sie",
            "wlamywacz",
            "wywazone drzwi",
            "drzwi wywazone",
            "wywazyli drzwi",
        ],
        "es": [
            "robo",
            "han entrado a robar",
            "no puedo cerrar la puerta",
            "entraron a robar",
            "forzaron la puerta",
            "intruso",
        ],
        "ro": ["spargere", "nu pot incuia usa", "au spart usa", "ne au spart", "hoti in casa", "intrus"],
        "pt": [
            "assalto",
            "arrombaram",
            "nao consigo trancar",
            "invadiram a casa",
            "forcaram a porta",
            "intruso",
            "porta arrombada",
        ],
    },
    "sewage": {
        "en": [
            "sewage",
            "raw sewage",
            "toilet overflowing",
            "sewage coming up",
            "drains backing up",
            "sewer backing up",
            # A toilet that overflows, not the cistern's "overflow pipe".
            "re:\\btoilets?\\b.{0,20}\\b(overflowing|overflowed|overflows)\\b",
            "re:\\b(sewer|sewers|drain|drains)\\b.{0,20}\\b(backing up|backed up|backs up|coming up)\\b",
        ],
        "pl": ["scieki", "szambo wybija"],
        "es": ["aguas residuales", "desbordamiento del inodoro"],
        "ro": ["canalizare refuleaza", "ape uzate"],
        "pt": ["esgoto", "sanita a transbordar"],
    },
    "structural": {
        "en": [
            "ceiling collapsed",
            "ceiling has collapsed",
            "ceiling falling",
            "wall collapsed",
            "roof collapsed",
            "structural crack",
            "balcony collapsing",
        ],
        "pl": [
            "zawalil sie sufit",
            "sufit spada",
            "re:\\b(sufit|strop|sciana|dach|balkon)\\b.{0,20}"
            "\\b(zawalil\\w*|runal\\w*|runel\\w*|spadl\\w*|wali sie)\\b",
            "re:\\b(zawalil\\w*|runal\\w*|runel\\w*|spadl\\w*) (sie )?(sufit|strop|sciana|dach|balkon)\\b",
        ],
        "es": [
            "se ha caido el techo",
            "techo derrumbado",
            "re:\\b(techo|pared|balcon|tejado)\\b.{0,20}\\bse (ha )?(caido|cayo|derumbado|derumbo|hundido|hundio)\\b",
            "re:\\b(techo|pared|balcon|tejado)\\b.{0,20}\\bse esta (cayendo|derumbando|hundiendo)\\b",
            "re:\\bse (ha )?(caido|cayo|derumbado|derumbo|hundido|hundio) (el |la )?(techo|pared|balcon|tejado)\\b",
        ],
        "ro": [
            "s a prabusit tavanul",
            "tavanul cade",
            "re:\\b(tavanul|peretele|balconul|acoperisul)\\b.{0,20}\\b(s a prabusit|a cazut|cade|se prabuseste)\\b",
            "re:\\b(s a prabusit|a cazut) (tavanul|peretele|balconul|acoperisul)\\b",
        ],
        "pt": [
            "o teto caiu",
            "teto a cair",
            "re:\\b(teto|tecto|parede|varanda)\\b.{0,20}\\b(caiu|desabou|ruiu|esta a cair|esta caindo)\\b",
            "re:\\b(caiu|desabou|ruiu) (o |a )?(teto|tecto|parede|varanda)\\b",
        ],
    },
}

# Wording that is only an emergency in one country: country -> category -> language -> phrases.
# American tenants heat with a furnace and say the heat "is out"; in Britain and
# Ireland "a furnace" is only ever a figure of speech for too hot.
COUNTRY_RULES: dict[str, dict[str, dict[str, list[str]]]] = {
    "US": {
        "no_heat_vulnerable": {
            "en": [
                "re:\\b(furnace|heat|heater)\\b.{0,20}\\b(is out|went out|is of|quit|died|broke|is broken|"
                "not working|stoped working)\\b.{0,60}\\b(baby|babies|newborn|infant|todler|elderly|pregnant|"
                "disabled|oxygen)\\b",
                "re:\\b(baby|babies|newborn|infant|todler|elderly|pregnant|disabled|oxygen)\\b.{0,60}"
                "\\b(furnace|heat|heater)\\b.{0,20}\\b(is out|went out|quit|died|broke|is broken|not working)\\b",
            ],
        },
    },
}

COUNTRIES = ("GB", "IE", "US")

SAFETY_MESSAGES: dict[str, dict[str, str]] = {
    "GB": {
        "gas": "If you smell gas: leave the property now, do not use light switches, flames or electrical "
        "appliances, open doors and windows if it is safe, turn off the gas at the meter if you can, and call "
        "the National Gas Emergency Service on 0800 111 999 from outside. We have alerted your landlord.",
        "carbon_monoxide": "Carbon monoxide can kill: get everyone out into fresh air now, leave doors open, do "
        "not go back in, and call 999 if anyone feels unwell (headache, dizziness, sickness). Call the National "
        "Gas Emergency Service on 0800 111 999. We have alerted your landlord.",
        "fire_smoke": "If there is a fire: get everyone out, close doors behind you, do not stop for belongings, "
        "and call 999 (112 works too). Do not go back inside. We have alerted your landlord.",
        "flooding": "If water is coming in: turn off the water at the stopcock (often under the kitchen sink), "
        "keep away from electrics near the water and switch off power at the fuse box if it is safe. We have "
        "alerted your landlord.",
        "electrical": "Keep away from the sparking or exposed wiring and do not touch it. If it is safe, switch "
        "off the power at the fuse box. If there is fire or smoke, get out and call 999. We have alerted your "
        "landlord.",
        "no_heat_vulnerable": "Keep warm: use warm layers and blankets and keep to one heated room if you can. "
        "If anyone is unwell, call NHS 111 or 999 in an emergency. We have alerted your landlord.",
        "security": "If you are in danger or someone is in the property, leave and call 999. If your home "
        "cannot be locked, stay somewhere safe. We have alerted your landlord.",
        "sewage": "Keep away from the sewage, keep children and pets out of the area, do not use the toilets or "
        "drains, and wash your hands well. We have alerted your landlord.",
        "structural": "Move everyone away from the damaged area now and do not go back under it. If anyone is "
        "hurt or the building is unsafe, call 999. We have alerted your landlord.",
    },
    "IE": {
        "gas": "If you smell gas: leave the property now, do not use switches, flames or electrical appliances, "
        "open doors and windows if it is safe, and call Gas Networks Ireland on 1800 20 50 50 from outside. We "
        "have alerted your landlord.",
        "carbon_monoxide": "Carbon monoxide can kill: get everyone out into fresh air now and call 112 or 999 if "
        "anyone feels unwell. Then call Gas Networks Ireland on 1800 20 50 50. We have alerted your landlord.",
        "fire_smoke": "If there is a fire: get everyone out, close doors behind you and call 112 or 999. Do not "
        "go back inside. We have alerted your landlord.",
        "flooding": "If water is coming in: turn off the water at the stopcock, keep away from electrics near the "
        "water and switch off power at the fuse board if it is safe. We have alerted your landlord.",
        "electrical": "Keep away from the sparking or exposed wiring. If it is safe, switch off the power at the "
        "fuse board. If there is fire or smoke, get out and call 112 or 999. We have alerted your landlord.",
        "no_heat_vulnerable": "Keep warm with layers and blankets in one heated room if you can. If anyone is "
        "unwell, call 112 or 999. We have alerted your landlord.",
        "security": "If you are in danger or someone is in the property, leave and call 112 or 999. We have "
        "alerted your landlord.",
        "sewage": "Keep away from the sewage, keep children and pets away, do not use the toilets or drains. We "
        "have alerted your landlord.",
        "structural": "Move everyone away from the damaged area now. If anyone is hurt or the building is unsafe, "
        "call 112 or 999. We have alerted your landlord.",
    },
    "US": {
        "gas": "If you smell gas: leave the home now, do not use switches, phones or flames inside, and once "
        "outside call 911 and your gas utility's emergency line. We have alerted your landlord.",
        "carbon_monoxide": "Carbon monoxide can kill: get everyone out into fresh air now and call 911. Do not go "
        "back inside until responders say it is safe. We have alerted your landlord.",
        "fire_smoke": "If there is a fire: get everyone out, close doors behind you and call 911. Do not go back "
        "inside. We have alerted your landlord.",
        "flooding": "If water is coming in: shut off the main water valve, keep away from electrics near the "
        "water and turn off power at the breaker panel if it is safe. We have alerted your landlord.",
        "electrical": "Keep away from the sparking or exposed wiring. If it is safe, turn off the breaker. If "
        "there is fire or smoke, get out and call 911. We have alerted your landlord.",
        "no_heat_vulnerable": "Keep warm with layers and blankets in one room. If anyone is unwell, call 911. We "
        "have alerted your landlord.",
        "security": "If you are in danger or someone is in the home, leave and call 911. We have alerted your "
        "landlord.",
        "sewage": "Keep away from the sewage, keep children and pets away, and do not use toilets or drains. We "
        "have alerted your landlord.",
        "structural": "Move everyone away from the damaged area now. If anyone is hurt or the building is unsafe, "
        "call 911. We have alerted your landlord.",
    },
}


# The life-threatening categories in the other languages tenants here write in,
# so a Polish tenant who smells gas reads what to do in Polish. Other categories
# (and any language not here) fall back to the English text.
SAFETY_NUMBERS = {
    "GB": {"emergency": "999 (112)", "gas_line": "National Gas Emergency Service 0800 111 999"},
    "IE": {"emergency": "112 / 999", "gas_line": "Gas Networks Ireland 1800 20 50 50"},
    "US": {"emergency": "911", "gas_line": "911"},
}
SAFETY_TRANSLATIONS: dict[str, dict[str, str]] = {
    "pl": {
        "gas": "Jeśli czujesz gaz: natychmiast wyjdź z mieszkania, nie używaj włączników, ognia ani urządzeń "
        "elektrycznych, otwórz okna i drzwi, jeśli to bezpieczne, i z zewnątrz zadzwoń: {gas_line}. "
        "Powiadomiliśmy właściciela.",
        "carbon_monoxide": "Czad (tlenek węgla) może zabić: natychmiast wyprowadź wszystkich na świeże powietrze, "
        "zostaw otwarte drzwi, nie wracaj do środka i zadzwoń pod {emergency}, jeśli ktoś źle się czuje (ból "
        "głowy, zawroty, nudności). Powiadomiliśmy właściciela.",
        "fire_smoke": "Jeśli jest pożar: wyprowadź wszystkich, zamykaj za sobą drzwi, nie zabieraj rzeczy i "
        "zadzwoń pod {emergency}. Nie wracaj do środka. Powiadomiliśmy właściciela.",
    },
    "es": {
        "gas": "Si huele a gas: salga de la vivienda ahora, no use interruptores, llamas ni aparatos eléctricos, "
        "abra puertas y ventanas si es seguro y, desde fuera, llame a {gas_line}. Hemos avisado a su casero.",
        "carbon_monoxide": "El monóxido de carbono puede matar: saque a todos al aire libre ahora, deje las "
        "puertas abiertas, no vuelva a entrar y llame al {emergency} si alguien se encuentra mal (dolor de "
        "cabeza, mareo, náuseas). Hemos avisado a su casero.",
        "fire_smoke": "Si hay un incendio: saque a todos, cierre las puertas al salir, no se pare a coger sus "
        "cosas y llame al {emergency}. No vuelva a entrar. Hemos avisado a su casero.",
    },
    "ro": {
        "gas": "Dacă simțiți miros de gaz: ieșiți imediat din locuință, nu folosiți întrerupătoare, foc sau "
        "aparate electrice, deschideți ușile și ferestrele dacă este sigur și sunați de afară la {gas_line}. "
        "Am anunțat proprietarul.",
        "carbon_monoxide": "Monoxidul de carbon poate ucide: scoateți imediat pe toată lumea la aer curat, lăsați "
        "ușile deschise, nu vă întoarceți înăuntru și sunați la {emergency} dacă cineva se simte rău (durere de "
        "cap, amețeală, greață). Am anunțat proprietarul.",
        "fire_smoke": "Dacă este un incendiu: scoateți pe toată lumea afară, închideți ușile în urma voastră, nu "
        "vă opriți pentru lucruri și sunați la {emergency}. Nu vă întoarceți înăuntru. Am anunțat proprietarul.",
    },
    "pt": {
        "gas": "Se cheirar a gás: saia de casa agora, não use interruptores, chamas nem aparelhos elétricos, abra "
        "portas e janelas se for seguro e, já lá fora, ligue para {gas_line}. Avisámos o seu senhorio.",
        "carbon_monoxide": "O monóxido de carbono pode matar: leve todos para o ar livre agora, deixe as portas "
        "abertas, não volte a entrar e ligue para o {emergency} se alguém se sentir mal (dor de cabeça, tonturas, "
        "náuseas). Avisámos o seu senhorio.",
        "fire_smoke": "Se houver um incêndio: tire todos de casa, feche as portas ao sair, não pare para levar "
        "objetos e ligue para o {emergency}. Não volte a entrar. Avisámos o seu senhorio.",
    },
}


def default_safety_messages() -> list[tuple[str, str, str, str]]:
    """(country, category, language, body) of every built-in safety message."""
    rows = [
        (country, category, "en", body)
        for country, messages in SAFETY_MESSAGES.items()
        for category, body in messages.items()
    ]
    rows += [
        (country, category, language, template.format(**numbers))
        for country, numbers in SAFETY_NUMBERS.items()
        for language, templates in SAFETY_TRANSLATIONS.items()
        for category, template in templates.items()
    ]
    return rows


def default_rules() -> list[tuple[str, str, str, str]]:
    """(country or "" for every country, category, language, phrase) of every built-in rule."""
    rows = [
        ("", category, language, phrase)
        for category, languages in RULES.items()
        for language, phrases in languages.items()
        for phrase in phrases
    ]
    rows += [
        ("", "no_heat_vulnerable", language, phrase)
        for language, phrases in no_heat_rules().items()
        for phrase in phrases
    ]
    rows += [
        (country, category, language, phrase)
        for country, categories in COUNTRY_RULES.items()
        for category, languages in categories.items()
        for language, phrases in languages.items()
        for phrase in phrases
    ]
    return rows


def defaults_seed(EmergencyRule, SafetyMessage) -> None:
    """Create the default rules (every country) and safety messages, idempotently.
    Takes the model classes so a data migration can pass its historical models."""
    # A data migration passes the model as it was then: 0002's phrase column held 200 characters,
    # so longer rules wait for 0003, which widened it and seeds again.
    longest = EmergencyRule._meta.get_field("phrase").max_length
    for country, category, language, phrase in default_rules():
        is_pattern = phrase.startswith("re:")
        if len(phrase) - 3 * is_pattern > longest:
            continue
        EmergencyRule.objects.get_or_create(
            organization=None,
            country=country,
            language=language,
            phrase=phrase[3:] if is_pattern else phrase,
            defaults={"category": category, "is_pattern": is_pattern},
        )
    # Before 0004 a safety message had no language: only the English ones then.
    has_language = any(field.name == "language" for field in SafetyMessage._meta.get_fields())
    for country, category, language, body in default_safety_messages():
        if has_language:
            SafetyMessage.objects.get_or_create(
                organization=None, country=country, category=category, language=language, defaults={"body": body}
            )
        elif language == "en":
            SafetyMessage.objects.get_or_create(
                organization=None, country=country, category=category, defaults={"body": body}
            )
