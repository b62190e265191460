"""Chunking: atomic cards stay whole, long cards split at headings/blocks/sentences, line ranges
are exact, code and quotes are never cut, the embedded text carries title and heading path."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from zettel_lsp.index.chunker import chunk_card, chunk_cards, visible_text
from zettel_lsp.notes.parser import parse_card


def words(texts: Sequence[str]) -> list[int]:
    """A stand-in tokenizer: one token per whitespace-separated word (easy to reason about)."""
    return [len(t.split()) for t in texts]


def para(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n))


def check_ranges(text: str, chunks) -> None:
    lines = text.split("\n")
    for c in chunks:
        assert c.text == "\n".join(lines[c.line_start : c.line_end + 1]).strip("\n")


def test_short_card_is_one_chunk_with_title_prefix() -> None:
    text = (
        "---\naliases: [RRF]\n---\n# Reciprocal rank fusion\n\n"
        "Fuses [[BM25|lexical]] and [dense](D.md) ranks.\n"
    )
    card = parse_card("Reciprocal rank fusion.md", text)
    (chunk,) = chunk_card(card, words)
    assert (chunk.line_start, chunk.line_end, chunk.index) == (3, 5, 0)
    assert chunk.heading_path == ()  # the H1 repeats the title
    assert chunk.embed_text == "Reciprocal rank fusion (RRF)\nFuses lexical and dense ranks."
    check_ranges(text, [chunk])


def test_long_card_splits_at_headings_with_heading_paths() -> None:
    text = "\n".join(
        [
            "# Bread",  # 0
            para(60, "intro"),  # 1
            "## Starter",  # 2
            para(60, "starter"),  # 3
            "### Feeding",  # 4
            para(60, "feed"),  # 5
            "## Baking",  # 6
            para(60, "bake"),  # 7
        ]
    )
    card = parse_card("Bread.md", text)
    chunks = chunk_card(card, words, max_tokens=100)
    assert [(c.line_start, c.line_end, c.heading_path) for c in chunks] == [
        (0, 1, ()),
        (2, 3, ("Starter",)),
        (4, 5, ("Starter", "Feeding")),
        (6, 7, ("Baking",)),
    ]
    assert chunks[2].embed_text.startswith("Bread > Starter > Feeding\nfeed0 ")
    check_ranges(text, chunks)


def test_small_sections_merge_instead_of_becoming_tiny_chunks() -> None:
    sentences = " ".join(f"Sentence {i} of section c." for i in range(30))
    text = "\n".join(["## A", "short a", "## B", "short b", "## C", sentences])
    chunks = chunk_card(parse_card("X.md", text), words, max_tokens=100)
    assert chunks[0].line_start == 0 and chunks[0].line_end >= 3  # A and B together
    assert all(c.tokens <= 100 for c in chunks)


def test_long_paragraph_splits_into_sentences_with_overlap() -> None:
    sentences = [f"Sentence {i} has exactly six words." for i in range(40)]
    text = "# T\n" + "\n".join(sentences)  # one paragraph over 40 lines
    card = parse_card("T.md", text)
    chunks = chunk_card(card, words, max_tokens=60)
    assert len(chunks) > 3
    for a, b in itertools.pairwise(chunks):
        assert b.line_start == a.line_end  # the last sentence is repeated as overlap
        assert b.text.split("\n")[0] == a.text.split("\n")[-1]
    assert chunks[-1].line_end == 40
    check_ranges(text, chunks)


def test_code_blocks_and_quotes_are_never_cut() -> None:
    code = "```python\n" + "\n".join(f"x{i} = {i}  # some words here" for i in range(50)) + "\n```"
    quote = "\n".join(f"> quoted line {i} with words" for i in range(30))
    text = f"# T\n{para(20, 'a')}\n\n{code}\n\n{quote}\n\n{para(20, 'b')}"
    card = parse_card("T.md", text)
    chunks = chunk_card(card, words, max_tokens=60)
    code_first = text.split("\n").index("```python")
    code_chunks = [c for c in chunks if c.line_start <= code_first <= c.line_end]
    assert len(code_chunks) == 1 and code_chunks[0].text.count("```") == 2
    quote_chunks = [c for c in chunks if "> quoted line 0" in c.text]
    assert len(quote_chunks) == 1 and "> quoted line 29" in quote_chunks[0].text
    check_ranges(text, chunks)


def test_obsidian_comment_blocks_are_left_out() -> None:
    text = '# Drawing\nText elements here\n%%\n# Drawing\n```json\n{"a": 1}\n```\n%%\n'
    (chunk,) = chunk_card(parse_card("D.excalidraw.md", text), words)
    assert "json" not in chunk.embed_text and chunk.line_end == 1


def test_empty_cards_are_one_title_chunk_and_batches_match_single_calls() -> None:
    cards = [
        parse_card("Empty.md", ""),
        parse_card("Front.md", "---\ntitle: Only frontmatter\naliases: [Lone]\n---\n"),
        parse_card("A.md", "# A\n" + para(300, "w")),
    ]
    batched = chunk_cards(cards, words, max_tokens=80)
    (empty,), (front,) = batched[0], batched[1]
    assert (empty.text, empty.embed_text, empty.line_start, empty.line_end) == (
        "Empty",
        "Empty",
        0,
        0,
    )
    # the keyword leg searches the chunk's text: it holds the title and aliases too
    assert front.embed_text == "Only frontmatter (Lone)" and front.text == "Only frontmatter\nLone"
    assert (front.line_start, front.line_end) == (0, 4)  # the whole file
    described = parse_card(
        "D.md", "---\nid: x1\ntitle: Quokka\ndesc: Small wallaby\ntags: [zoo, marsupial]\n---\n"
    )
    (chunk,) = chunk_card(described, words)
    assert chunk.text == "Quokka\nSmall wallaby\n#zoo #marsupial"
    assert chunk.embed_text == "Quokka\nSmall wallaby\n#zoo #marsupial"
    assert batched == [chunk_card(c, words, max_tokens=80) for c in cards]


def test_visible_text() -> None:
    assert visible_text("see [[A|shown]], [[B#h]], ![[C]] and [t](u.md)") == "see shown, B, C and t"
