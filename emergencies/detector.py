"""What the product decides about one message: the two stages together.

Stage 1, the keyword rules (``emergencies.matching``), and stage 2, the trained
classifier (``emergencies.classifier``), combine by one policy, with the
organization's sensitivity (``Organization.emergency_sensitivity``) choosing
the classifier's thresholds from its artefact:

1. An organization's own rule always raises an alert: the landlord asked for it.
2. A built-in rule raises an alert unless the classifier is sure the message is
   harmless: its emergency probability is below the ``veto`` threshold for a
   one-word rule, which names a topic ("my gas bill", "the fire alarm test is
   on Tuesday"), and below the lower ``veto_phrase`` threshold for a phrase or
   pattern rule, which describes something happening ("pali się", "water
   pouring through"), so standing it down takes more certainty.
   A built-in rule whose words were only inside a figure of speech ("aż mi
   dym z uszu leci", ``emergencies.figurative``) is stood down whatever the
   score: the classifier decides as if it had not hit.
3. The classifier alone raises an alert at or above the ``alert`` threshold:
   "there's a rotten egg smell by the cooker", "my 3-week-old and no heating".
4. Without the classifier (switched off or unavailable) the rules decide alone.

The category comes from the rule that fired, else from the classifier; the
language of the safety text from a non-English rule, else the classifier's
language head, else the conversation's language.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from emergencies.classifier import Score, classifier_get
from emergencies.home_address import address_remove
from emergencies.matching import Match, RuleHit, emergency_match

logger = logging.getLogger(__name__)

SENSITIVITIES = ("high", "standard", "low")


@dataclass(frozen=True)
class Detection:
    emergency: bool
    category: str | None = None
    language: str | None = None
    source: str = ""  # "keyword" or "classifier" when it is an emergency
    hits: list[RuleHit] = field(default_factory=list)
    score: Score | None = None
    vetoed: list[RuleHit] = field(default_factory=list)  # built-in rule hits stood down (the classifier, a figure)

    def __bool__(self) -> bool:
        return self.emergency

    @property
    def model_version(self) -> str:
        return self.score.version if self.score else ""

    def explain(self) -> str:
        """One line for a landlord: what fired and why."""
        if not self.emergency:
            return "no emergency"
        if self.source == "keyword":
            phrases = ", ".join(repr(hit.phrase) for hit in self.hits if hit.category == self.category)
            return f"keyword rule {phrases}"
        assert self.score is not None
        return f"classifier: {self.category} ({self.score.emergency:.0%} emergency)"


def emergency_detect(
    text: str, *, organization_id: int | None, country: str, sensitivity: str = "standard", language: str = ""
) -> Detection:
    match = emergency_match(text, organization_id=organization_id, country=country)
    classifier = classifier_get()
    score = None
    if classifier is not None:
        try:
            score = classifier.score(address_remove(text))  # a street's name must not decide
        except Exception:  # the rules must decide even when the model breaks on one message
            logger.exception("emergency classifier failed; keyword rules decide alone")
    hits = list(match.hits)
    vetoed: list[RuleHit] = []
    if classifier is not None and score is not None:
        vetoed = list(match.figurative)  # "dym mi z uszu leci": the classifier decides
        hits = [hit for hit in hits if hit not in vetoed]
        thresholds = classifier.thresholds.get(sensitivity) or classifier.thresholds["standard"]
        veto_phrase = thresholds.get("veto_phrase", thresholds["veto"])
        if score.emergency < thresholds["veto"]:
            vetoed += [hit for hit in hits if not hit.own and (score.emergency < veto_phrase or not hit.describes)]
            hits = [hit for hit in hits if hit not in vetoed]
        if not hits and score.emergency >= thresholds["alert"]:
            return Detection(
                emergency=True,
                category=score.category,
                language=score.language or language or "en",
                source="classifier",
                score=score,
            )
    if hits:
        return keyword_detection(Match(hits=hits), language=language, score=score, vetoed=vetoed)
    return Detection(emergency=False, score=score, vetoed=vetoed)


def keyword_detection(
    match: Match, *, language: str, score: Score | None = None, vetoed: list[RuleHit] | None = None
) -> Detection:
    """The emergency the rule hits in ``match`` raise: their category, and the
    language of a non-English rule, else the classifier's, else ``language``."""
    rule_language = match.language if match.language != "en" else None
    return Detection(
        emergency=True,
        category=match.category,
        language=rule_language or (score.language if score else None) or language or "en",
        source="keyword",
        hits=match.hits,
        score=score,
        vetoed=vetoed or [],
    )
