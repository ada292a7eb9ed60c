import itertools
import re

import pytest

from retrieval.chunking import chunk_document, markdown_sections
from retrieval.embeddings import embedding_backend


@pytest.fixture(scope="module")
def count_tokens():
    return embedding_backend("minilm").count_tokens


DOC = """# Boiler guide

Intro paragraph about the boiler.

## Pressure

### Low pressure (F22)

F22 means the pressure is low.

## Bins

Bins go out on Tuesday.
"""


def test_sections_carry_their_heading_path():
    sections = markdown_sections(DOC)
    assert [(s.heading_path, s.paragraphs) for s in sections] == [
        ("Boiler guide", ("Intro paragraph about the boiler.",)),
        ("Boiler guide > Pressure > Low pressure (F22)", ("F22 means the pressure is low.",)),
        ("Boiler guide > Bins", ("Bins go out on Tuesday.",)),
    ]


def test_search_text_starts_with_title_and_headings_and_title_heading_is_not_repeated(count_tokens):
    chunks = chunk_document(
        title="Boiler guide", text=DOC, count_tokens=count_tokens, max_tokens=256, overlap_tokens=32
    )
    assert [c.heading_path for c in chunks] == ["", "Pressure > Low pressure (F22)", "Bins"]
    assert chunks[1].search_text == "Boiler guide\nPressure > Low pressure (F22)\n\nF22 means the pressure is low."
    assert chunks[0].search_text.startswith("Boiler guide\n\n")
    assert [c.position for c in chunks] == [0, 1, 2]


def test_plain_text_and_setext_headings_and_fenced_code():
    text = "Heating\n=======\n\nTurn it on.\n\n```\n# not a heading\n\ncode\n```\n\nplain line"
    sections = markdown_sections(text)
    assert sections[0].heading_path == "Heating"
    assert sections[0].paragraphs[1] == "```\n# not a heading\n\ncode\n```"
    assert markdown_sections("just text\n\nmore text")[0].headings == ()


def _long_section(sentences: int) -> str:
    body = " ".join(
        f"Sentence number {i} explains how the boiler pressure gauge reading {i} should be checked."
        for i in range(sentences)
    )
    return f"# Guide\n\n## Long section\n\n{body}\n\n## Next\n\nShort one."


@pytest.mark.parametrize("max_tokens", [64, 128, 256])
def test_no_chunk_is_longer_than_the_model_reads(count_tokens, max_tokens):
    chunks = chunk_document(
        title="Guide", text=_long_section(60), count_tokens=count_tokens, max_tokens=max_tokens, overlap_tokens=16
    )
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.tokens == count_tokens(chunk.search_text)
        assert chunk.tokens <= max_tokens


def test_every_sentence_lands_in_a_chunk_and_sections_are_never_mixed(count_tokens):
    text = _long_section(40)
    chunks = chunk_document(title="Guide", text=text, count_tokens=count_tokens, max_tokens=96, overlap_tokens=24)
    joined = "\n".join(c.text for c in chunks)
    for i in range(40):
        assert f"Sentence number {i} explains" in joined
    assert [c.heading_path for c in chunks][-1] == "Next"
    assert all("Short one" not in c.text for c in chunks if c.heading_path == "Long section")


def test_consecutive_chunks_of_a_long_section_overlap(count_tokens):
    chunks = chunk_document(
        title="Guide", text=_long_section(40), count_tokens=count_tokens, max_tokens=96, overlap_tokens=24
    )
    long_chunks = [c for c in chunks if c.heading_path == "Long section"]
    assert len(long_chunks) >= 3
    for previous, current in itertools.pairwise(long_chunks):
        last_sentence = re.findall(r"Sentence number \d+ [^.]+\.", previous.text)[-1]
        assert current.text.startswith(last_sentence)


def test_no_overlap_when_asked_for_none(count_tokens):
    chunks = chunk_document(
        title="Guide", text=_long_section(40), count_tokens=count_tokens, max_tokens=96, overlap_tokens=0
    )
    numbers = [int(n) for c in chunks for n in re.findall(r"Sentence number (\d+)", c.text)]
    assert numbers == list(range(40))


def test_list_paragraph_is_split_at_items(count_tokens):
    items = "\n".join(
        f"{i}. Step {i}: open the valve a little and watch the pressure gauge carefully." for i in range(1, 30)
    )
    chunks = chunk_document(
        title="Steps", text=f"## How\n\n{items}", count_tokens=count_tokens, max_tokens=96, overlap_tokens=0
    )
    for chunk in chunks:
        assert re.match(r"^\d+\. Step", chunk.text)
        assert chunk.tokens <= 96


def test_bad_arguments_are_refused(count_tokens):
    with pytest.raises(ValueError, match="title"):
        chunk_document(title=" ", text="x", count_tokens=count_tokens, max_tokens=128, overlap_tokens=0)
    with pytest.raises(ValueError, match="overlap"):
        chunk_document(title="T", text="x", count_tokens=count_tokens, max_tokens=128, overlap_tokens=100)
