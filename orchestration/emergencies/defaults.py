"""The built-in emergency rules and safety messages, seeded by a data
migration and re-seeded by tests. Organizations add their own rules and may
override any safety message in the admin.

Phrases are whole words or phrases (matched on normalised text at word
boundaries); ``re:`` marks a regular expression over normalised text.
"""

from __future__ import annotations

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
        "pl": ["czad", "tlenek wegla", "czujnik czadu"],
        "es": ["monoxido de carbono", "alarma de monoxido"],
        "ro": ["monoxid de carbon"],
        "pt": ["monoxido de carbono"],
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
        "ro": ["incendiu", "foc", "fum", "arde"],
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
        "pl": ["zalanie", "zalewa", "pekla rura", "woda leje sie", "powodz"],
        "es": ["inundacion", "inundado", "tuberia rota", "se ha roto una tuberia", "agua por todas partes"],
        "ro": ["inundatie", "inundat", "teava sparta", "curge apa din tavan"],
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
        "pl": ["iskrzy", "porazenie pradem", "goly przewod"],
        "es": ["chispas", "descarga electrica", "cables expuestos", "enchufe quemado"],
        "ro": ["scantei", "electrocutat", "fire descoperite", "priza arsa"],
        "pt": ["faiscas", "choque eletrico", "fios expostos", "tomada queimada"],
    },
    "no_heat_vulnerable": {
        "en": [
            "no heating and a baby",
            "no heat newborn",
            "no heating elderly",
            "no heating disabled",
            "re:\\bno (heating|heat|hot water)\\b.{0,40}\\b(baby|newborn|elderly|pregnant|disabled|oxygen)\\b",
        ],
        "pl": ["brak ogrzewania niemowle"],
        "es": ["sin calefaccion bebe"],
        "ro": ["fara caldura bebelus"],
        "pt": ["sem aquecimento bebe"],
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
        ],
        "pl": ["wlamanie", "nie moge zamknac drzwi"],
        "es": ["robo", "han entrado a robar", "no puedo cerrar la puerta"],
        "ro": ["spargere", "nu pot incuia usa"],
        "pt": ["assalto", "arrombaram", "nao consigo trancar"],
    },
    "sewage": {
        "en": ["sewage", "raw sewage", "toilet overflowing", "sewage coming up", "drains backing up"],
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
        "pl": ["zawalil sie sufit", "sufit spada"],
        "es": ["se ha caido el techo", "techo derrumbado"],
        "ro": ["s a prabusit tavanul", "tavanul cade"],
        "pt": ["o teto caiu", "teto a cair"],
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


def defaults_seed(EmergencyRule, SafetyMessage) -> None:
    """Create the default rules (every country) and safety messages, idempotently.
    Takes the model classes so a data migration can pass its historical models."""
    for category, languages in RULES.items():
        for language, phrases in languages.items():
            for phrase in phrases:
                is_pattern = phrase.startswith("re:")
                EmergencyRule.objects.get_or_create(
                    organization=None,
                    country="",
                    language=language,
                    phrase=phrase[3:] if is_pattern else phrase,
                    defaults={"category": category, "is_pattern": is_pattern},
                )
    for country, messages in SAFETY_MESSAGES.items():
        for category, body in messages.items():
            SafetyMessage.objects.get_or_create(
                organization=None, country=country, category=category, defaults={"body": body}
            )
