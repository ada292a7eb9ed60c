"""Paragraph-level, heading-aware chunking sized to what the embedding model reads.

A document (Markdown or plain text) is cut into sections at its headings. Each
section's paragraphs are packed, in order, into chunks whose *search text*

    <document title>
    <heading path, "Boiler > Low pressure (F22)">

    <paragraphs>

fits in ``max_tokens`` of the embedding model's own tokenizer (special tokens
included). The search text is what is embedded and what the keyword leg
searches, so every chunk carries its title and headings. A chunk never spans
two sections. A paragraph too long for one chunk is split at sentence ends
(and a sentence too long at words); consecutive chunks of one section share up
to ``overlap_tokens`` of trailing sentences so that a sentence cut off from its
context can still be found with it.

Why sizes matter: all-MiniLM-L6-v2 reads 256 word pieces and ignores the rest,
so a 400-token chunk (the ADR's 300-500) would be invisible to the vector leg
past its first ~250 tokens. ``chunk_document`` therefore never produces a
chunk longer than the model reads; the default size was chosen by
``benchmarks/retrieval_chunk_sizes.py`` (numbers in docs/retrieval.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

HEADING_SEPARATOR = " > "
_ATX_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SETEXT_UNDERLINE = re.compile(r"^(=+|-+)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=\S)")
# Tokens of the [CLS]/[SEP] pair (or <s></s>) every encoded text carries.
_SPECIAL_TOKENS = 2


@dataclass(frozen=True)
class Section:
    headings: tuple[str, ...]
    paragraphs: tuple[str, ...]

    @property
    def heading_path(self) -> str:
        return HEADING_SEPARATOR.join(self.headings)


@dataclass(frozen=True)
class ChunkDraft:
    position: int
    heading_path: str
    text: str
    search_text: str
    tokens: int


def _clean_heading(text: str) -> str:
    return re.sub(r"[*_`]", "", text).strip()


def markdown_sections(text: str) -> list[Section]:
    """Split Markdown (or plain text, which has no headings) into sections of
    paragraphs, each with the path of headings above it. Lists and fenced code
    blocks stay whole paragraphs."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = False

    def end_paragraph() -> None:
        if current:
            paragraph = "\n".join(current).strip()
            if paragraph:
                paragraphs.append(paragraph)
            current.clear()

    def end_section() -> None:
        end_paragraph()
        if paragraphs:
            sections.append(Section(tuple(h for _, h in stack), tuple(paragraphs)))
            paragraphs.clear()

    def open_heading(level: int, title: str) -> None:
        end_section()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, _clean_heading(title)))

    for index, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            current.append(line)
            continue
        if in_fence:
            current.append(line)
            continue
        heading = _ATX_HEADING.match(line)
        if heading:
            open_heading(len(heading.group(1)), heading.group(2))
            continue
        if (
            _SETEXT_UNDERLINE.match(line)
            and len(current) == 1
            and current[0].strip()
            and index > 0
            and lines[index - 1].strip()
        ):
            title = current.pop()
            open_heading(1 if line.strip().startswith("=") else 2, title)
            continue
        if not line.strip():
            end_paragraph()
            continue
        current.append(line.rstrip())
    end_section()
    return sections


def search_prefix(title: str, heading_path: str) -> str:
    return f"{title}\n{heading_path}\n\n" if heading_path else f"{title}\n\n"


@dataclass
class _Unit:
    text: str
    tokens: int
    joiner: str  # what goes before it when it follows another unit in a chunk


def _split_words(sentence: str, budget: int, count: Callable[[str], int]) -> list[str]:
    pieces: list[str] = []
    words: list[str] = []
    for word in sentence.split():
        if words and count(" ".join([*words, word])) > budget:
            pieces.append(" ".join(words))
            words = []
        words.append(word)
    if words:
        pieces.append(" ".join(words))
    return pieces


def _units(paragraphs: tuple[str, ...], budget: int, count: Callable[[str], int]) -> list[_Unit]:
    """Paragraphs that fit the budget stay whole; longer ones become sentences
    (and over-long sentences word runs)."""
    units: list[_Unit] = []
    for paragraph in paragraphs:
        tokens = count(paragraph)
        if tokens <= budget:
            units.append(_Unit(paragraph, tokens, "\n\n"))
            continue
        joiner = "\n\n"
        # A list or a block of lines is split at its lines first, prose at sentence ends.
        for line in paragraph.split("\n"):
            line_tokens = count(line)
            sentences = [line] if line_tokens <= budget else _SENTENCE_END.split(line)
            for index, sentence in enumerate(sentences):
                parts = [sentence] if count(sentence) <= budget else _split_words(sentence, budget, count)
                for part in parts:
                    units.append(_Unit(part, count(part), joiner))
                    joiner = " "
                if index == len(sentences) - 1:
                    joiner = "\n"
    return units


def chunk_document(
    *,
    title: str,
    text: str,
    count_tokens: Callable[[str], int],
    max_tokens: int,
    overlap_tokens: int,
) -> list[ChunkDraft]:
    """Cut ``text`` into chunks whose search text is at most ``max_tokens``
    tokens as counted by ``count_tokens`` (the embedding model's tokenizer,
    special tokens included)."""
    title = title.strip()
    if not title:
        raise ValueError("a document needs a title")
    if overlap_tokens < 0 or overlap_tokens * 2 > max_tokens:
        raise ValueError("overlap_tokens must be between 0 and half of max_tokens")

    def count(piece: str) -> int:
        return max(count_tokens(piece) - _SPECIAL_TOKENS, 0)

    drafts: list[ChunkDraft] = []
    sections = markdown_sections(text)
    # A leading "# Title" that repeats the document title adds nothing to the path.
    for section in sections:
        headings = section.headings
        if headings and headings[0].casefold() == title.casefold():
            headings = headings[1:]
        heading_path = HEADING_SEPARATOR.join(headings)
        prefix = search_prefix(title, heading_path)
        budget = max_tokens - _SPECIAL_TOKENS - count(prefix) - 1
        if budget < 32:
            # A pathological heading path: keep only the innermost heading.
            heading_path = headings[-1] if headings else ""
            prefix = search_prefix(title, heading_path)
            budget = max_tokens - _SPECIAL_TOKENS - count(prefix) - 1
            if budget < 32:
                raise ValueError(f"title and heading {heading_path!r} leave no room in {max_tokens} tokens")
        units = _units(section.paragraphs, budget, count)

        chunk: list[_Unit] = []
        used = 0
        for unit in units:
            if chunk and used + unit.tokens > budget:
                _emit(drafts, title, heading_path, prefix, chunk, count_tokens, max_tokens)
                chunk, used = _overlap(chunk, overlap_tokens, budget - unit.tokens)
            chunk.append(unit)
            used += unit.tokens
        if chunk:
            _emit(drafts, title, heading_path, prefix, chunk, count_tokens, max_tokens)
    return drafts


def _overlap(previous: list[_Unit], overlap_tokens: int, room: int) -> tuple[list[_Unit], int]:
    """The trailing sentences of the previous chunk to repeat at the start of
    the next one (at most ``overlap_tokens``, and only what leaves room)."""
    limit = min(overlap_tokens, room)
    carried: list[_Unit] = []
    used = 0
    for unit in reversed(previous):
        if unit.joiner == "\n\n" and unit.tokens > limit:
            break  # a whole paragraph: the natural boundary, nothing cut off
        if used + unit.tokens > limit:
            break
        carried.insert(0, _Unit(unit.text, unit.tokens, unit.joiner))
        used += unit.tokens
        if unit.joiner == "\n\n":
            break
    return carried, used


def _emit(
    drafts: list[ChunkDraft],
    title: str,
    heading_path: str,
    prefix: str,
    units: list[_Unit],
    count_tokens: Callable[[str], int],
    max_tokens: int,
) -> None:
    body = units[0].text + "".join(unit.joiner + unit.text for unit in units[1:])
    search_text = prefix + body
    tokens = count_tokens(search_text)
    if tokens > max_tokens and len(units) > 1:
        # Token counts are not exactly additive across joins: give the last unit to a chunk of its own.
        _emit(drafts, title, heading_path, prefix, units[:-1], count_tokens, max_tokens)
        _emit(drafts, title, heading_path, prefix, units[-1:], count_tokens, max_tokens)
        return
    drafts.append(
        ChunkDraft(position=len(drafts), heading_path=heading_path, text=body, search_text=search_text, tokens=tokens)
    )
