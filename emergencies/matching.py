"""Matching messages against the emergency rules.

Rules apply to an organization when they are its own or built-in defaults,
for its country or for every country. They are compiled into one regular
expression per (organization, country) over normalised text, with word
boundaries on both sides, and cached in the process. The cache checks the
rules' version (a number the database bumps in the same transaction as any
change to the rules: migration ``emergencies/0009``), itself read at most
every ``PROCESS_CACHE_SECONDS``: a rule edited in the admin takes effect in
the process that saved it at once and in every other worker and web process
within that bound.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import regex
from django.conf import settings
from django.db import connection
from django.db.models import Q

from config.expiring import Expiring
from emergencies.figurative import figures_remove
from emergencies.home_address import address_remove
from emergencies.models import EmergencyRule
from emergencies.normalise import normalise, without_intensifiers

logger = logging.getLogger(__name__)

# When a message hits several categories, the most dangerous one leads.
SEVERITY = [
    "gas",
    "carbon_monoxide",
    "fire_smoke",
    "electrical",
    "flooding",
    "structural",
    "sewage",
    "security",
    "no_heat_vulnerable",
]


@dataclass(frozen=True)
class RuleHit:
    rule_id: int
    phrase: str
    category: str
    language: str
    own: bool = False  # the organization's own rule, not a built-in default
    pattern: bool = False  # a regular expression rather than a phrase

    @property
    def describes(self) -> bool:
        """A pattern or a phrase of several words describes something happening
        ("pali sie", "water pouring through"); one word only names a topic
        ("dym", "sewage"), and turns up in harmless messages far more often."""
        return self.pattern or len(self.phrase.split()) > 1

    def as_dict(self) -> dict:
        return {
            "rule_id": self.rule_id,
            "phrase": self.phrase,
            "category": self.category,
            "language": self.language,
            "own": self.own,
            "pattern": self.pattern,
        }


@dataclass
class Match:
    hits: list[RuleHit]
    # Built-in rules among ``hits`` whose words were only inside a figure of
    # speech ("aż mi dym z uszu leci"): the detector leaves them to the classifier.
    figurative: list[RuleHit] = field(default_factory=list)

    @property
    def category(self) -> str | None:
        categories = {hit.category for hit in self.hits}
        return next((c for c in SEVERITY if c in categories), None)

    @property
    def language(self) -> str | None:
        """The language of the rules that hit for the leading category; a
        non-English one wins (English words turn up in other languages'
        messages, not the other way round)."""
        languages = {hit.language for hit in self.hits if hit.category == self.category}
        return next(iter(sorted(languages - {"en"})), None) or ("en" if languages else None)

    def __bool__(self) -> bool:
        return bool(self.hits)


@dataclass
class _Compiled:
    version: int
    phrases: re.Pattern | None
    by_phrase: dict[str, list[RuleHit]]
    patterns: list[tuple[re.Pattern, RuleHit]]  # the built-in ones
    # Every built-in pattern in one alternation: a message none of them hits
    # (most) costs one search, not one per pattern. None when they cannot be joined.
    any_pattern: re.Pattern | None = None
    # The organization's own patterns, each searched with a time limit: one that
    # backtracks for ever (such as (\w|\w\w)+\d) must not hold up the web and emergency
    # workers every organization shares.
    own_patterns: list[tuple[regex.Pattern, RuleHit]] = field(default_factory=list)


_cache: dict[tuple[int | None, str], _Compiled] = {}
# The latest rules_version, trusted for PROCESS_CACHE_SECONDS.
versions: Expiring[int] = Expiring()


def _rules(organization_id: int | None, country: str):
    scope = Q(organization__isnull=True)
    if organization_id:
        scope |= Q(organization_id=organization_id)
    return EmergencyRule.objects.filter(scope, Q(country="") | Q(country=country), enabled=True)


def _compile(organization_id: int | None, country: str, version: int) -> _Compiled:
    by_phrase: dict[str, list[RuleHit]] = {}
    patterns, own_patterns = [], []
    for rule in _rules(organization_id, country).order_by("id"):
        hit = RuleHit(
            rule.pk,
            rule.phrase,
            rule.category,
            rule.language,
            own=rule.organization_id is not None,
            pattern=rule.is_pattern,
        )
        if rule.is_pattern:
            try:
                if hit.own:
                    own_patterns.append((regex.compile(rule.phrase), hit))
                else:
                    patterns.append((re.compile(rule.phrase), hit))
            except (re.error, regex.error) as exc:
                # The admin refuses such patterns (rule_problem); one saved some other way never blocks the others.
                logger.error("emergency rule %s skipped, its pattern does not compile: %s", rule.pk, exc)
        else:
            key = normalise(rule.phrase)
            if key:
                by_phrase.setdefault(key, []).append(hit)
    alternatives = sorted(by_phrase, key=len, reverse=True)
    phrases = (
        re.compile(r"(?<!\w)(?:" + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in alternatives) + r")(?!\w)")
        if alternatives
        else None
    )
    return _Compiled(
        version=version,
        phrases=phrases,
        by_phrase=by_phrase,
        patterns=patterns,
        any_pattern=_joined(patterns),
        own_patterns=own_patterns,
    )


_BACKREFERENCE = re.compile(r"\\[1-9]|\(\?P=")


def _joined(patterns: list[tuple[re.Pattern, RuleHit]]) -> re.Pattern | None:
    """The patterns as one alternation, which matches where any of them does;
    None when one refers back to its own groups (joined, the numbers would
    change) or when joining fails (a group name used twice, a flag that must
    come first)."""
    if not patterns or any(_BACKREFERENCE.search(pattern.pattern) for pattern, _ in patterns):
        return None
    try:
        return re.compile("|".join(f"(?:{pattern.pattern})" for pattern, _ in patterns))
    except re.error:
        return None


def rules_version() -> int:
    """Changes with every committed change to any rule, bulk edits included:
    one row read by its key."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT n FROM emergencies_rules_version WHERE id = 1")
        row = cursor.fetchone()
    return row[0] if row else 0


def emergency_match(text: str, *, organization_id: int | None, country: str) -> Match:
    """Which rules ``text`` hits, on normalised text and whole words only, with
    the home address taken out ("12 Flood Street" names no flood), and which
    built-in ones hit only inside a figure of speech (``emergencies.figurative``)."""
    key = (organization_id, country)
    version = versions.get(None, rules_version)
    assert version is not None  # rules_version never answers None
    compiled = _cache.get(key)
    if compiled is None or compiled.version != version:
        compiled = _cache[key] = _compile(organization_id, country, version)
    without_address = address_remove(text)
    normalised = normalise(without_address)
    hits = _hits(compiled, normalised)
    figurative: list[RuleHit] = []
    if any(not hit.own for hit in hits):
        plain = figures_remove(without_address)
        if plain != normalised:
            kept = {hit.rule_id for hit in _hits(compiled, plain)}
            figurative = [hit for hit in hits if not hit.own and hit.rule_id not in kept]
    return Match(hits=hits, figurative=figurative)


def _hits(compiled: _Compiled, normalised: str) -> list[RuleHit]:
    texts = {normalised, without_intensifiers(normalised)}  # "huele muchisimo a gas" meets "huele a gas"
    hits: list[RuleHit] = []
    for candidate in texts:
        if compiled.phrases is not None:
            for found in compiled.phrases.finditer(candidate):
                hits += compiled.by_phrase[" ".join(found.group(0).split())]
        if compiled.any_pattern is None or compiled.any_pattern.search(candidate):
            hits += [hit for pattern, hit in compiled.patterns if pattern.search(candidate)]
        hits += [hit for pattern, hit in compiled.own_patterns if _own_search(pattern, hit, candidate)]
    return list({hit.rule_id: hit for hit in hits}.values())


def _own_search(pattern: regex.Pattern, hit: RuleHit, text: str) -> bool:
    try:
        return pattern.search(text, timeout=settings.EMERGENCY_OWN_PATTERN_TIMEOUT_MS / 1000) is not None
    except TimeoutError:
        logger.error(
            "emergency rule %s skipped for a message: its pattern ran over EMERGENCY_OWN_PATTERN_TIMEOUT_MS (%s ms)",
            hit.rule_id,
            settings.EMERGENCY_OWN_PATTERN_TIMEOUT_MS,
        )
        return False
