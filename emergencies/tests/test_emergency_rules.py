"""The shipped keyword rules: what they must catch, what they must leave to
the model's check, and what must never fire, in every seeded language."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from emergencies.defaults import RULES, default_rules, defaults_seed
from emergencies.figurative import FIGURES
from emergencies.matching import Match, _compile, _joined, emergency_match
from emergencies.models import EmergencyRule, SafetyMessage
from emergencies.normalise import normalise, rule_problem
from properties.tests.factories import OrganizationFactory

pytestmark = pytest.mark.django_db

TRAIN_SPLIT = Path(__file__).resolve().parents[2] / "evals" / "emergencies" / "train.jsonl"


def category_of(text: str, country: str = "GB") -> str | None:
    return emergency_match(text, organization_id=None, country=country).category


# (text, country, the keyword outcome we expect, why). A false positive here is
# not a failure of the rules: the model's check stands it down and the landlord
# hears "false alarm". A miss would be a failure.
PINNED = [
    # Real emergencies the reviewer found missing.
    ("someone broke in", "GB", "security", "'broke in' is the past of 'break in'"),
    ("the toilet is overflowing", "GB", "sewage", "toilet ... overflowing, any words between"),
    ("the sewer is backing up into the basement", "US", "sewage", "sewer ... backing up"),
    ("there's a gas odor in the kitchen", "US", "gas", "American spelling of odour"),
    ("there's a gas odour in the kitchen", "GB", "gas", "British spelling"),
    ("rotten egg smell in the hallway", "GB", "gas", "how people describe the gas odorant"),
    ("the furnace is out and we have a newborn", "US", "no_heat_vulnerable", "US heating wording"),
    ("the boiler is broken and I have a newborn baby", "GB", "no_heat_vulnerable", "broken, not only 'no heating'"),
    ("Nie mam ogrzewania, a mam niemowlę", "GB", "no_heat_vulnerable", "Polish, no heating and a baby"),
    ("No tengo calefacción y tengo un bebé", "GB", "no_heat_vulnerable", "Spanish, 'calefacción' folds to calefacion"),
    ("Nu am căldură și am un bebeluș", "GB", "no_heat_vulnerable", "Romanian"),
    ("Não tenho aquecimento e tenho um bebé", "GB", "no_heat_vulnerable", "Portuguese"),
    ("sufit się zawalił", "GB", "structural", "Polish, the subject first"),
    ("el techo se ha caído", "GB", "structural", "Spanish, the subject first"),
    ("tavanul s-a prăbușit", "GB", "structural", "Romanian, the subject first"),
    ("o teto da sala desabou", "GB", "structural", "Portuguese"),
    # What English names, every language names (parity, 2026-11-25): the CO alarm, a break-in, a shock.
    ("alarma de CO sună întruna", "GB", "carbon_monoxide", "Romanian, the alarm by its letters"),
    ("o detetor de monóxido está a apitar", "GB", "carbon_monoxide", "Portuguese, the detector"),
    ("włamali się do mieszkania", "GB", "security", "Polish, the verb rather than 'włamanie'"),
    ("forzaron la puerta de atrás", "GB", "security", "Spanish, a forced door"),
    ("levei um choque no interruptor", "GB", "electrical", "Portuguese, a shock as people say it"),
    ("kopie prąd z kranu", "GB", "electrical", "Polish, a shock from a tap"),
    # Tempting false positives the rules cannot tell apart: they hit, the model's check decides.
    ("I read about a fire on the news", "GB", "fire_smoke", "'fire' alone must hit: 'fire in the kitchen'"),
    ("the fire alarm test was loud today, all fine", "GB", "fire_smoke", "'fire' again; the check reads 'test'"),
    ("the fridge smells of rotten eggs", "GB", "gas", "the rotten-egg rule cannot see the fridge"),
    # Tempting false positives the rules do leave alone.
    ("my gas bill is too high", "GB", None, "gas rules need a smell, leak or hiss"),
    ("the gasket on the washing machine is worn", "GB", None, "'gasket' is not 'gas'"),
    ("the boiler fired up fine this morning", "GB", None, "'fired' is not 'fire'"),
    ("is there a fireplace in the lounge?", "GB", None, "'fireplace' is not 'fire'"),
    ("the toilet overflow pipe is dripping outside", "GB", None, "the overflow pipe, not an overflowing toilet"),
    ("it's like a furnace in here and the baby can't sleep", "GB", None, "in Britain a furnace is a figure of speech"),
    ("it's like a furnace in here and the baby can't sleep", "US", None, "too hot, not heating out"),
    ("the furnace is out and we have a newborn", "GB", None, "US wording is a US rule"),
    ("no heating problems since the repair, the baby is warm now", "GB", None, "'no heating problems' is no failure"),
    ("no heat issues since the engineer came, my elderly dad is fine", "GB", None, "nor are 'no heat issues'"),
]


@pytest.mark.parametrize(("text", "country", "expected", "why"), PINNED)
def test_pinned_keyword_outcomes(text, country, expected, why):
    assert category_of(text, country) == expected, why


# No heating where someone vulnerable lives, the person told by who they are
# rather than by "vulnerable" (emergencies/no_heat_rules.py): each language,
# either order; and the failure, or the person, alone is no rule's.
@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("boiler's packed up again and I'm 34 weeks, flat is freezing", "no_heat_vulnerable"),
        ("my dad's in a wheelchair and the radiators are stone cold", "no_heat_vulnerable"),
        ("no hot water or heating, my mum is 91 and lives with me", "no_heat_vulnerable"),
        ("mama jest obłożnie chora a kaloryfery zimne od rana", "no_heat_vulnerable"),
        ("mi abuela está encamada y la caldera no enciende", "no_heat_vulnerable"),
        ("o aquecedor parou e a minha filha está a fazer quimio", "no_heat_vulnerable"),
        ("bunica e imobilizată la pat și centrala s-a oprit", "no_heat_vulnerable"),
        ("My 90-year-old mum is staying and the heating doesn't work", "no_heat_vulnerable"),
        ("se rompió la caldera, mi abuela está encamada", "no_heat_vulnerable"),
        ("I'm sick of the boiler not working", None),
        ("I'm sick and tired of the boiler not working", None),
        ("the heating's broken, can someone come tomorrow", None),
        ("my nan is 90 next week, can the boiler be serviced before she visits", None),
        # A review's near misses: a duration, an appliance's age, "off", an oven, an operator, a distance.
        ("Nu am căldură de 3 zile", None),
        ("Llevo más de 8 años en el piso y la caldera no enciende", None),
        ("The heating is off for the summer, my baby sleeps fine", None),
        ("piekarnik nie grzeje, babcia przyjedzie", None),
        ("Sem água quente, já liguei para a operadora", None),
        ("my dad is 9 miles away and the boiler is broken", None),
    ],
)
def test_no_heating_with_a_vulnerable_person_described(text, category):
    assert category_of(text) == category


# Hazard words in figures of speech (emergencies/figurative.py): the built-in
# rules they hit are marked figurative, in every language. The same words said
# of the home still hit, in the same message too and across punctuation, and a
# figure's words said of a thing ("está que echa chispas") are not a figure.
FIGURES_OF_SPEECH = [
    "you're flooding my inbox",
    "no rush, nothing's on fire, the hall light is out",
    "aż mi dym z uszu leci, znowu nie odebrali śmieci",
    "nic nie pali się, kran kapie",
    "estoy que echo chispas, nadie viene a arreglar el grifo",
    "estou a deitar fumo pelas orelhas com este senhorio",
    "sunt foc și pară, nu vine nimeni la robinet",
    "nu arde nimic, chiuveta curge de o săptămână",
]
LITERAL = [
    ("I'm fuming, there's smoke coming out of the socket", "fire_smoke"),
    ("dym mi z uszu leci, a teraz jeszcze dym w kuchni", "fire_smoke"),
    ("el enchufe está que echa chispas", "electrical"),
    ("Nie! Pali się kuchnia", "fire_smoke"),
    ("Zgasło? Nie, pali się", "fire_smoke"),
    ("Nu, nu, arde!", "fire_smoke"),
    ("Ajutor e foc și pară în bucătărie", "fire_smoke"),
    ("Rang the landlord 3 times and nothing. On fire now, whole kitchen", "fire_smoke"),
    ("It's not our flat on fire, it's next door's", "fire_smoke"),
    ("it's not like our flat is on fire it's next door's", "fire_smoke"),
    ("Ugasiliście? Nie – pali się!", "fire_smoke"),
    ("Nie / pali się", "fire_smoke"),
    ('"Nie" pali się!!!', "fire_smoke"),
    ("Nie pali się!", "fire_smoke"),
    ("S-a stins? Nu – arde!", "fire_smoke"),
    ("Nu 😱 arde!!!", "fire_smoke"),
    ("Still nothing – on fire now!!", "fire_smoke"),
    ("Rang the landlord 3 times and nothing on fire now whole kitchen", "fire_smoke"),
    ("I ve rang and nothing is on fire now the whole kitchen", "fire_smoke"),
    ("el baño inundado de papeles flotando", "flooding"),
    ("Have sent 3 emails flooded bathroom nobody has come", "flooding"),
    ("Obudziłam się, wyjęłam zatyczki z uszu, dym w całym mieszkaniu", "fire_smoke"),
]


@pytest.mark.parametrize("text", FIGURES_OF_SPEECH)
def test_a_figure_of_speech_hits_only_figuratively(text):
    match = emergency_match(text, organization_id=None, country="GB")
    assert match.hits and match.figurative == match.hits


@pytest.mark.parametrize(("text", "category"), LITERAL)
def test_the_hazard_said_of_the_home_is_not_a_figure(text, category):
    match = emergency_match(text, organization_id=None, country="GB")
    assert Match(hits=[hit for hit in match.hits if hit not in match.figurative]).category == category


def test_an_organizations_own_rule_is_never_figurative():
    organization = OrganizationFactory()
    EmergencyRule.objects.create(organization=organization, phrase="dym", category="fire_smoke", language="pl")
    match = emergency_match("aż mi dym z uszu leci", organization_id=organization.pk, country="GB")
    assert [hit.own for hit in match.hits if hit not in match.figurative] == [True]


def test_the_joined_patterns_hit_where_the_patterns_one_by_one_do():
    compiled = _compile(None, "GB", ("joined",))
    assert compiled.any_pattern is not None
    texts = [json.loads(line)["text"] for line in TRAIN_SPLIT.read_text().splitlines() if line.strip()]
    for text in map(normalise, texts):
        assert bool(compiled.any_pattern.search(text)) == any(p.search(text) for p, _ in compiled.patterns), text


def test_a_pattern_that_refers_back_to_its_group_is_matched_alone():
    organization = OrganizationFactory()
    EmergencyRule.objects.create(
        organization=organization, phrase=r"\b(wo)\1f\b", is_pattern=True, category="gas", language="en"
    )
    assert emergency_match("a wowof here", organization_id=organization.pk, country="GB").category == "gas"
    assert _joined([(re.compile(r"\b(wo)\1f\b"), None)]) is None  # joined, \1 would change


@pytest.mark.timeout(60)
def test_an_organizations_pattern_that_backtracks_for_ever_is_cut_off_and_the_others_still_match(caplog):
    # Accepted by the admin's checks; on 80 letters it backtracks for longer than anyone waits.
    organization = OrganizationFactory()
    runaway = EmergencyRule.objects.create(
        organization=organization, phrase=r"(\w|\w\w)+\d", is_pattern=True, category="gas", language="en"
    )
    assert rule_problem(phrase=runaway.phrase, is_pattern=True) is None
    EmergencyRule.objects.create(
        organization=organization, phrase=r"\bhal flods?\b", is_pattern=True, category="flooding", language="en"
    )
    found = emergency_match("ab" * 40 + " the hall floods", organization_id=organization.pk, country="GB")
    assert found.category == "flooding"
    assert f"emergency rule {runaway.pk} skipped" in caplog.text


@pytest.mark.parametrize("pattern", [p for patterns in FIGURES.values() for p in patterns])
def test_every_figure_can_match_normalised_text(pattern):
    assert rule_problem(phrase=pattern, is_pattern=True) is None


# One word that is a rule and one that only starts like it, per language.
@pytest.mark.parametrize(
    ("hit", "miss", "category"),
    [
        ("the kitchen is on fire", "the boiler fired up", "fire_smoke"),
        ("there is smoke in the hall", "smoked salmon for dinner", "fire_smoke"),
        ("the flat is flooded", "the floodlight is out", "flooding"),
        ("pożar w kuchni", "pies pożarł mi kapcie", "fire_smoke"),  # pozar / pozarl
        ("czuję czad", "czadowa impreza u sąsiadów", "carbon_monoxide"),  # czad / czadowa
        ("dym w łazience", "dymisja prezesa", "fire_smoke"),  # dym / dymisja
        ("sale humo del enchufe", "hoy estoy de buen humor", "fire_smoke"),  # humo / humor
        ("hubo un robo anoche", "el robot aspirador no carga", "security"),  # robo / robot
        ("hay fuego en la cocina", "el fueguito de la vela", "fire_smoke"),  # fuego / fueguito
        ("iese fum din priză", "nu am fumat niciodată", "fire_smoke"),  # fum / fumat
        ("arde bucătăria", "am gătit ardei umpluți", "fire_smoke"),  # arde / ardei
        ("a luat foc perdeaua", "focarul e stins", "fire_smoke"),  # foc / focarul
        ("há fogo na cozinha", "o fogão não acende", "fire_smoke"),  # fogo / fogao
        ("sai fumo da tomada", "o fumador do lado", "fire_smoke"),  # fumo / fumador
        ("cheira a esgoto na casa de banho", "estou esgotado", "sewage"),  # esgoto / esgotado
    ],
)
def test_rules_match_whole_words_only_in_every_language(hit, miss, category):
    assert category_of(hit) == category
    assert category_of(miss) is None


# Stress words between a phrase's words (the class a blind scenario found:
# "huele muchísimo a gas" missed both stages); the words alone never alert.
@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Hola, huele muchísimo a gas en la cocina", "gas"),
        ("cheira muito a gás na cozinha", "gas"),
        ("miroase foarte tare a gaz în bucătărie", "gas"),
        ("zapach bardzo mocno gazu na klatce", "gas"),
        ("zapach w kuchni jakby gazu", None),  # other words between are not skipped: the classifier's part
    ],
)
def test_intensifiers_between_a_phrases_words_do_not_hide_it(text, category):
    assert category_of(text) == category


def test_intensifiers_alone_are_not_an_emergency():
    assert category_of("it is really very so much worse than before") is None


def test_every_seeded_language_has_a_word_boundary_case_above():
    assert {language for languages in RULES.values() for language in languages} == {"en", "pl", "es", "ro", "pt"}


@pytest.mark.parametrize(
    "text",
    [
        "țeavă spartă",  # comma below (U+021B), as Romanian keyboards type it
        "ţeavă spartă",  # cedilla (U+0163), as older keyboards and phones type it
        "ȚEAVĂ SPARTĂ!!",
    ],
)
def test_romanian_comma_and_cedilla_letters_fold_alike(text):
    assert normalise(text) == "teava sparta"
    assert category_of(text) == "flooding"


def test_romanian_s_with_comma_and_cedilla_fold_alike():
    assert normalise("Nu am căldură și am un bebeluș") == normalise("Nu am căldură şi am un bebeluş")
    assert category_of("Nu am căldură şi am un bebeluş") == "no_heat_vulnerable"


def test_seeding_is_idempotent_and_keeps_a_landlords_changes():
    count = EmergencyRule.objects.count()
    assert count == len(default_rules())  # the migrations seeded every default, long patterns included
    rule = EmergencyRule.objects.get(organization=None, phrase="fire")
    rule.enabled = False
    rule.save()
    defaults_seed(EmergencyRule, SafetyMessage)
    defaults_seed(EmergencyRule, SafetyMessage)
    assert EmergencyRule.objects.count() == count
    assert not EmergencyRule.objects.get(pk=rule.pk).enabled


def test_a_bulk_disable_takes_effect_within_the_process_cache_bound(settings, monkeypatch):
    """A bulk update sends no signal (as an edit in another process): it applies
    once the rules' version is read again, after PROCESS_CACHE_SECONDS."""
    settings.PROCESS_CACHE_SECONDS = 5
    clock = [1000.0]
    monkeypatch.setattr("config.expiring._clock", lambda: clock[0])
    assert category_of("czujnik czadu piszczy") == "carbon_monoxide"
    EmergencyRule.objects.filter(phrase="czujnik czadu").update(enabled=False)  # no save(), no updated_at
    clock[0] += 5.1
    assert category_of("czujnik czadu piszczy") is None


def test_an_edit_stamped_by_a_clock_running_behind_still_takes_effect(settings, monkeypatch):
    """Another web server's clock runs behind (or its edit commits after a
    later-stamped one): the rules' count and latest change stay as they were,
    and the edit must still reach this process within the bound."""
    from datetime import timedelta

    settings.PROCESS_CACHE_SECONDS = 5
    clock = [1000.0]
    monkeypatch.setattr("config.expiring._clock", lambda: clock[0])
    rule = EmergencyRule.objects.filter(phrase="czujnik czadu").get()
    later = EmergencyRule.objects.exclude(pk=rule.pk).first()
    assert later is not None
    # Another edit already holds the latest stamp.
    EmergencyRule.objects.filter(pk=later.pk).update(updated_at=rule.updated_at + timedelta(minutes=10))
    clock[0] += 5.1
    assert category_of("czujnik czadu piszczy") == "carbon_monoxide"
    EmergencyRule.objects.filter(pk=rule.pk).update(phrase="czujnik czadu wyje", updated_at=rule.updated_at)
    clock[0] += 5.1
    assert category_of("czujnik czadu piszczy") is None


def test_us_rules_apply_to_us_organizations_only():
    furnace = EmergencyRule.objects.filter(country="US", category="no_heat_vulnerable")
    assert furnace.exists()
    assert category_of("the furnace quit and my mom is on oxygen", "US") == "no_heat_vulnerable"
    assert category_of("the furnace quit and my mom is on oxygen", "IE") is None


@pytest.mark.parametrize(("country", "category", "language", "phrase"), default_rules())
def test_every_shipped_rule_can_fire(country, category, language, phrase):
    is_pattern = phrase.startswith("re:")
    stored = phrase[3:] if is_pattern else phrase
    assert rule_problem(phrase=stored, is_pattern=is_pattern) is None
    # Seeding skips a phrase too long for its column (old migrations' narrower one), without a word.
    assert len(stored) <= EmergencyRule._meta.get_field("phrase").max_length


@pytest.mark.parametrize(
    ("phrase", "complaint"),
    [
        ("(unclosed", "Not a valid regular expression"),
        ("gas|", "every message would be an emergency"),
        (r"\brotten egg\b", "write 't' instead of 'tt'"),
        (r"\bcamión\b", "lower case without accents"),
        (r"\bGas\b", "lower case without accents"),
        ("[[:alpha:]]+ gas", "[[:alpha:]] means one thing to re and another to regex"),
    ],
)
def test_a_pattern_that_could_never_work_is_refused_with_the_reason(phrase, complaint):
    rule = EmergencyRule(phrase=phrase, is_pattern=True, category="gas", language="en")
    with pytest.raises(ValidationError) as refused:
        rule.full_clean()
    assert complaint in " ".join(refused.value.message_dict["phrase"])


def test_escapes_and_plain_phrases_are_not_mistaken_for_doubled_letters():
    assert rule_problem(phrase=r"\bgas\b.{0,20}\bleak\w*(?P<x>\d{10})?", is_pattern=True) is None
    assert rule_problem(phrase="rotten egg smell", is_pattern=False) is None  # phrases are normalised for you
    assert rule_problem(phrase="!!!", is_pattern=False) is not None


def test_the_admin_shows_why_a_pattern_is_refused(admin_client):
    response = admin_client.post(
        reverse("admin:emergencies_emergencyrule_add"),
        {"language": "en", "phrase": "(unclosed", "is_pattern": "on", "category": "gas", "enabled": "on"},
    )
    assert response.status_code == 200
    assert "Not a valid regular expression" in response.content.decode()
    assert not EmergencyRule.objects.filter(phrase="(unclosed").exists()
