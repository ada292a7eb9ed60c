"""Built-in patterns for no heating or hot water where someone vulnerable lives,
as tenants tell it: the heating's failure in any of its usual words, and the
person by who they are (an age, a pregnancy's weeks, a newborn's days, a
wheelchair, a bed they cannot leave, an illness), within a sentence of each
other, either first.

The words are written as ``normalise`` leaves text: case-folded, accents
folded, a repeated letter squeezed ("wheelchair" -> "whelchair", "88" -> "8").
Each person group is paired with the language's failures, both orders
(failure then person, person then failure), the failures split over as many
patterns as keep each within the rule's 500 characters."""

from __future__ import annotations

# How far apart the failure and the person may be, in characters of normalised text.
GAP = 80
MAX_PATTERN = 500  # EmergencyRule.phrase
# An elderly relative's age after squeezing ("88" is "8", "100" is "10"), not a distance ("my dad is 9 miles away").
OLD_AGE = r"(?:[7-9]\d?|10\d?)(?! (?:miles|mi|mins|min|minutes|hours|km|away))"
# "a 3 month old", not "the 6 month old boiler".
YOUNG_AGE = (
    r"(?:a|my|our|her|his|the) \d+ (?:day|wek|month|mo)s? old(?! (?:boiler|heater|furnace|system|radiator|tank|unit))"
)

FAILURE: dict[str, list[str]] = {
    "en": [
        r"no (?:heating|heat|hot water)(?! (?:isue|isues|problem\w*|presure|bil\w*))",
        r"(?:heating|heat|boiler|heater|furnace)(?: is| s| has| keps| kept)? (?:broken|broke down|dead|not working"
        r"|isn t working|isnt working|doesn t work|doesnt work|does not work|stoped working|failed|packed up)",
        r"(?:heating|heat|boiler|heater|furnace)(?: is| s| has| keps| kept)? (?:gone out|went out|gone of|went of"
        r"|cut of|cuting out|won t come on|wont come on|won t fire|wont fire|not firing|showing an eror"
        r"|showing a fault|flashing)",
        r"(?:radiators?|rads)(?: are| r)? (?:stone |ice )?(?:cold|frezing)",
        r"(?:frezing|so cold|biterly cold) in (?:here|the house|the flat|the apartment|my rom|our rom)",
        r"(?:house|flat|apartment|place|home)(?: is| s) frezing",
    ],
    "pl": [
        r"(?:nie mam|nie mamy|nie ma|brak|bez) (?:ogrzewania|cieplej wody)",
        r"(?:ogrzewanie|piec|kociol|grzejnik\w*|kaloryfer\w*) (?:nie dziala|nie grzej\w*|padl\w*|sie zepsul\w*"
        r"|zepsul\w* sie|sie wylaczyl\w*|nie odpala|nie zapala|pokazuje blad|nic nie pokazuje)",
        r"(?:nie dziala|zepsul sie|padl) (?:piec|ogrzewanie|kociol)",
        r"(?:kaloryfer\w*|grzejnik\w*) (?:sa |jest )?zimn\w*",
        r"zimne (?:kaloryfer\w*|grzejnik\w*)",
        r"zimno w (?:domu|mieszkaniu|pokoju)",
    ],
    "es": [
        r"(?:no tengo|no tenemos|no hay|sin) (?:calefacion|agua caliente)",
        r"(?:(?:la|mi|el|nuestra|nuestro) )?(?:calefacion|caldera|calentador|calefactor|heater|heat|radiador\w*)"
        r" no (?:funciona|calienta|enciende|prende|aranca|sirve)",
        r"no (?:funciona|calienta|enciende|prende|aranca|sirve) (?:(?:la|mi|el) )?(?:calefacion|caldera|calentador"
        r"|calefactor|heater|heat)",
        r"se (?:ha )?(?:roto|rompio|estropeado|estropeo|averiado|averio|descompuesto|descompuso|apagado|apago)"
        r" (?:(?:la|mi|el) )?(?:calefacion|caldera|calentador)",
        r"(?:caldera|calefacion|calentador) (?:esta )?(?:rot[ao]|averiad[ao]|estropead[ao]|descompuest[ao])",
        r"radiadores (?:estan )?frios",
        r"hace frio (?:en|dentro de) (?:la casa|casa|el piso|el departamento|el apartamento)",
    ],
    "pt": [
        r"(?:nao tenho|nao temos|nao ha|nao tem|sem) (?:aquecimento|calefacao|agua quente)",
        r"(?:(?:o|a|meu|minha|noso|nosa) )?(?:aquecimento|caldeira|esquentador|aquecedor|heat|heater|radiador\w*)"
        r" (?:avari\w*|nao (?:funciona|liga|acende|aquece|da)|nao esta a (?:funcionar|aquecer)"
        r"|nao esta (?:funcionando|aquecendo)|parou|quebr\w*|estrag\w*|pifou)",
        r"radiadores (?:estao )?frios",
        r"frio (?:em casa|dentro de casa|no apartamento)",
    ],
    "ro": [
        r"(?:nu am|nu avem|nu e|fara) (?:caldura|incalzire|apa calda)",
        r"nu (?:merge|functioneaza|porneste) (?:caldura|incalzirea|centrala|apa calda)",
        r"(?:caldura|incalzirea|centrala|apa calda) nu (?:merge|functioneaza|porneste)",
        r"centrala (?:s a (?:stricat|oprit|blocat)|da eroare|arata eroare)",
        r"s a stricat centrala",
        r"calorifer\w* (?:sunt )?rec\w*",
        r"(?:calorifer\w*|centrala|incalzirea) nu (?:se )?incalze\w*",
        r"(?:e )?frig in (?:casa|apartament|camera)",
    ],
}

PERSON: dict[str, list[str]] = {
    "en": [
        r"bab(?:y|ies)|new ?born|infant|todler|elderly|frail|pensioner|(?:\d+ )?(?:day|days|wek|weks) old",
        YOUNG_AGE,
        r"pregnant|(?:i m|im|i am|she s|shes|she is) \d+ weks",
        r"disabled|disability|whelchair|bed ?riden|bed ?bound|housebound|carer|caring for",
        r"oxygen|dementia|alzheimer\w*|chemo\w*|cancer|copd|emphysema|asthma\w*|heart (?:condition|failure)",
        r"sick(?! of| and tired| note)|unwel|porly|(?:just )?out of hospital"
        r"|after (?:an |my |his |her )?(?:operation|surgery)",
        r"(?:mum|mom|mother|dad|father|nan|nana|nany|gran|grany|grandma|grandmother|grandad|grandpa|grandfather)"
        r"(?: is| s| who s| aged)? " + OLD_AGE + r"|(?:[7-9]\d|10\d?) (?:year|yr)s? old",
    ],
    "pl": [
        r"niemowl\w*|noworod\w*|bobas\w*|male dzieck\w*|male dzieci|malutk\w*|starusz\w*|emeryt\w*"
        r"|starsz\w* (?:pani|pan|osob\w*|ludzi\w*|rodzic\w*)|osob\w* starsz\w*",
        r"w ciazy|ciezarn\w*|w \d+ (?:miesiacu|tygodniu)|\d+ (?:tygodni\w*|dni) (?:dzieck\w*|synek|coreczk\w*)",
        r"niepelnospraw\w*|na wozku|wozek inwalidzki|wozku inwalidzkim|lezac\w*|obloznie|sparalizowan\w*",
        r"tlen\w*|chor\w*|chemioterapi\w*|(?:po|na|ma) chemi|nowotw\w*|demencj\w*|alzheimer\w*|astm\w*|pochp"
        r"|po operacji|po udarze|ze szpitala",
        r"babci\w*|babcia|babka|dziadek|dziadk\w*|(?:mama|tata|tesciow\w*) ma " + OLD_AGE + " lat",
    ],
    "es": [
        r"bebes?|recien nacid\w*|nin\w* pequen\w*|chiquit\w*|\d+ (?:dias|semanas|meses) de (?:nacid\w*|vida)",
        r"embarazad\w*|embarazo|ancian\w*|persona mayor|abuel\w*|(?:madre|padre|mama|papa|suegr[oa])"
        r" (?:tiene|de|con) " + OLD_AGE + " anos",
        r"discapacitad\w*|sila de ruedas|encamad\w*|postrad\w*",
        r"oxigeno|enferm[oa]s?|enfermedad\w*|quimio\w*|cancer|demencia|alzheimer|asma\w*|epoc|operad[oa]s?"
        r"|del hospital",
    ],
    "pt": [
        r"bebes?|recem nascid\w*|crianca pequena|criancas pequenas|pequenit\w*"
        r"|\d+ (?:dias|semanas|meses) de (?:vida|nascid\w*)",
        r"gravida|gravidez|idos[oa]s?|avo|avos|avozinh\w*|vovo|(?:mae|pai|sogr[oa]) (?:tem|de|com) "
        + OLD_AGE
        + " anos",
        r"deficien\w*|cadeira de rodas|acamad\w*",
        r"oxigenio|doente\w*|quimio\w*|cancro|cancer|demencia|alzheimer|asma\w*|dpoc|operad[oa]s?|do hospital"
        r"|teve alta",
    ],
    "ro": [
        r"bebelus\w*|bebe\w*|nou nascut\w*|copil mic|copi mici|copilas\w*|\d+ (?:zile|saptamani) de viata",
        r"gravida|insarcinata|sarcina|batran\w*|varstnic\w*|bunic\w*|(?:mama|tata|soacr\w*|socru\w*)"
        r" (?:are|de) " + OLD_AGE + " (?:de )?ani",
        r"handicap\w*|scaun cu rotile|imobilizat\w*|la pat",
        r"oxigen|bolnav\w*|chimio\w*|cancer|dementa|alzheimer|astm\w*|bpoc|operat[a]?|din spital|externat\w*",
    ],
}


def no_heat_rules() -> dict[str, list[str]]:
    """language -> "re:" patterns: each person group beside the failures, both
    orders, the failures packed into as few patterns as the length allows."""
    return {
        language: [
            pattern
            for person in PERSON[language]
            for failure in _packed(FAILURE[language], room=MAX_PATTERN - len(_pair("", person)))
            for pattern in ("re:" + _pair(failure, person), "re:" + _pair(person, failure))
        ]
        for language in FAILURE
    }


def _pair(first: str, second: str) -> str:
    return f"\\b(?:{first})\\b.{{0,{GAP}}}\\b(?:{second})\\b"


def _packed(alternatives: list[str], *, room: int) -> list[str]:
    groups: list[str] = []
    for alternative in alternatives:
        if groups and len(groups[-1]) + 1 + len(alternative) <= room:
            groups[-1] += "|" + alternative
        else:
            groups.append(alternative)
    return groups
