"""Splitting long replies for WhatsApp's 1600-character limit."""

import random

import pytest

from conversations.outbound import WHATSAPP_MAX_CHARS, text_split


def words_of(parts: list[str]) -> list[str]:
    return " ".join(parts).split()


def sentences(count: int, seed: int) -> str:
    rng = random.Random(seed)
    vocabulary = ["the", "boiler", "engineer", "will", "call", "tomorrow", "między", "ciepła", "apă", "caldă", "ok"]
    return " ".join(
        " ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 40))).capitalize() + rng.choice(".!?")
        for _ in range(count)
    )


@pytest.mark.parametrize("seed", range(8))
def test_long_text_splits_at_sentence_ends_within_the_limit_losing_nothing(seed):
    body = sentences(120, seed)
    assert len(body) > 3 * WHATSAPP_MAX_CHARS
    parts = text_split(body)
    assert len(parts) >= 3
    assert all(0 < len(part) <= WHATSAPP_MAX_CHARS for part in parts)
    assert words_of(parts) == body.split()  # every word, in order, none cut in two
    assert all(part[-1] in ".!?" for part in parts)  # every cut at the end of a sentence


def test_without_sentence_ends_it_splits_between_words():
    body = " ".join(f"word{n}" for n in range(1200))
    parts = text_split(body)
    assert len(parts) > 1 and all(len(part) <= WHATSAPP_MAX_CHARS for part in parts)
    assert words_of(parts) == body.split()


def test_paragraph_breaks_are_preferred_over_sentence_ends():
    first = "First paragraph sentence. " * 40
    body = first.strip() + "\n\n" + "Second paragraph sentence. " * 40
    parts = text_split(body)
    assert parts[0] == first.strip()
    assert words_of(parts) == body.split()


def test_a_word_longer_than_the_limit_is_cut_hard_and_kept_whole_in_order():
    body = "Start. " + "x" * 4000 + " end."
    parts = text_split(body)
    assert all(len(part) <= WHATSAPP_MAX_CHARS for part in parts)
    assert "".join("".join(parts).split()) == "".join(body.split())


@pytest.mark.parametrize("body", ["", "   ", "Short reply.", "y" * WHATSAPP_MAX_CHARS])
def test_text_within_the_limit_is_one_part_or_none(body):
    assert text_split(body) == ([body.strip()] if body.strip() else [])


def test_custom_limit():
    parts = text_split("One. Two. Three. Four.", limit=10)
    assert parts == ["One. Two.", "Three.", "Four."]
