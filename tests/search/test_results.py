"""The result rows' excerpts: ``excerpt`` as before, and ``excerpt_text`` as a reader sees the note
(link text instead of link syntax, table rows as cells, the leading heading left to the breadcrumb).
"""

from __future__ import annotations

from typing import Any, cast

from zettel_lsp.index.store_api import ChunkPayload
from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.results import (
    CELL_SEPARATOR,
    EXCERPT_CHARS,
    excerpt,
    excerpt_text,
    readable_text,
    result_dict,
)

SEP = CELL_SEPARATOR


def test_links_read_as_their_text() -> None:
    text = (
        "See [[Reciprocal rank fusion|RRF]] and [[BM25]], [[Dense embeddings#Models]] or "
        "[the paper](https://example.org/rrf.pdf) and ![[diagram.png]] ![chart](c.png) <https://x.org>."
    )
    assert readable_text(text) == (
        "See RRF and BM25, Dense embeddings or the paper and chart https://x.org."
    )


def test_table_rows_become_cells_on_their_own_lines() -> None:
    text = "\n".join(
        [
            "Colours by warmth:",
            "| Colour | Warmth | See |",
            "|:-------|-------:|-----|",
            "| Red | warm | [[Colour Theory\\|theory]] |",
            "| **Blue** | cold | [[Colour Schemes]] |",
            "",
            "After the table.",
        ]
    )
    assert readable_text(text).split("\n") == [
        "Colours by warmth:",
        f"Colour{SEP}Warmth{SEP}See",
        f"Red{SEP}warm{SEP}theory",
        f"Blue{SEP}cold{SEP}Colour Schemes",
        "After the table.",
    ]


def test_a_table_without_outer_pipes() -> None:
    text = "a | b\n--- | ---\n1 | [[x|one]]\n\nprose"
    assert readable_text(text).split("\n") == [f"a{SEP}b", f"1{SEP}one", "prose"]


def test_the_leading_heading_goes_to_the_breadcrumb_and_later_ones_lose_their_marks() -> None:
    text = (
        "## Why ranks instead of scores\n\nBM25 scores are **unbounded**.\n\n"
        "### Caveats\n- `k` = 60"
    )
    assert readable_text(text, "Why ranks instead of scores") == (
        "BM25 scores are unbounded. Caveats · k = 60"
    )
    # Not named by the heading path: kept (as text).
    assert readable_text(text, "") == (
        "Why ranks instead of scores · BM25 scores are unbounded. Caveats · k = 60"
    )
    assert readable_text("## Only a heading", "Only a heading") == "Only a heading"


def test_markup_that_a_reader_does_not_see() -> None:
    text = (
        "> [!note] A callout\n"
        "> with *emphasis*, _this_ and ==marks==<br>and <span class='x'>html</span>\n"
        "- [ ] a task ^block-1\n1. first[^1] %%hidden%%\n\n---\n```python\nprint(1)\n```"
    )
    assert readable_text(text) == (
        "A callout with emphasis, this and marks and html · a task · first · print(1)"
    )
    for code in ("snake_case_name and 2*3*4", "if a == b: c = a ** 2"):
        assert readable_text(code) == code


def test_fence_lines_are_left_out_in_a_callout_and_indented_in_a_list_item() -> None:
    text = "> [!note] Code\n> ```python\n> print(1)\n> ```\n- item\n\t```\n\tcode\n\t```"
    assert readable_text(text) == "Code · print(1) · item · code"


def test_list_items_headings_and_paragraphs_do_not_run_together() -> None:
    """Seen in the VS Code Search view on zettelkasten-13k: "Tools to detect: SQLI XSS
    Misconfigurations Tools", "user inputs. Types Fuzzing"."""
    text = "Tools to detect:\n- SQLI\n- XSS\n- Misconfigurations\n\n## Tools\n- Burp\n"
    assert readable_text(text) == "Tools to detect: SQLI · XSS · Misconfigurations · Tools · Burp"
    text = "Checks user inputs.\n### Types\nFuzzing and fault injection\nmore of it\n\nNext"
    assert (
        readable_text(text)
        == "Checks user inputs. Types · Fuzzing and fault injection more of it · Next"
    )


def test_the_excerpt_window_cuts_between_words() -> None:
    """The window falls between words ("…epts Test Coverage" was seen), keeps the query word, and
    stays within the width; "… " (with a space) says the cut is already at a word."""
    import random

    from zettel_lsp.search.results import _window

    text = (
        "Fuzzing concepts Test Coverage Test Oracle Test Corpus and a lot more words about "
        "fuzzing harness design and smart fuzzers that mutate inputs. "
    ) * 3
    got = _window(text, ["corpus"], 120)
    assert got.startswith("… Test Coverage") and got.endswith(" that…"), got
    rng = random.Random(3)
    for _ in range(5_000):
        flat = "".join(rng.choice("ab  cdefg") for _ in range(rng.randint(0, 400)))
        word = rng.choice(["abc", "cde", "fg a", "zzz"])
        width = rng.randint(5, 200)
        piece = _window(flat, [word], width)
        assert len(piece) <= width, (flat, word, width)
        if word in flat and len(flat) > width and width > 60:
            assert word in piece, (flat, word, width)
        if piece.startswith("… "):
            assert flat[flat.find(piece[2:].rstrip("…")) - 1] == " "


def test_excerpt_text_is_centred_on_the_query_word_and_short() -> None:
    words = ["needle"]
    text = "[[Filler]] words " * 40 + "the needle is here " + "[[more]] " * 40
    got = excerpt_text(text, words)
    assert len(got) <= EXCERPT_CHARS
    assert "needle" in got and "[[" not in got
    assert got.startswith("…") and got.endswith("…")


def _row(text: str, heading: str = "") -> CardResult:
    chunk = cast(
        ChunkPayload,
        {
            "title": "Colour Theory",
            "line_start": 3,
            "line_end": 9,
            "heading": heading,
            "text": text,
        },
    )
    return CardResult("Knowledge/Colour Theory.md", 0.5, chunk, {"bm25": 1})


def test_result_dict_only_adds_excerpt_text() -> None:
    """The Neovim plugin and the CLI read these rows: every key stays as it was."""
    text = "# Colour Theory\n## Primaries\n| Colour | Hex |\n|---|---|\n| [[Red]] | #f00 |"
    row: dict[str, Any] = result_dict(_row(text, "Primaries"), ["red"])
    assert list(row) == [
        "path",
        "title",
        "score",
        "line_start",
        "line_end",
        "heading",
        "excerpt",
        "legs",
        "excerpt_text",
    ]
    assert row["excerpt"] == excerpt(
        "## Primaries\n| Colour | Hex |\n|---|---|\n| [[Red]] | #f00 |", ["red"]
    )
    assert row["excerpt"] == "Primaries | Colour | Hex | |---|---| | [[Red]] | #f00 |"
    assert row["excerpt_text"] == f"Colour{SEP}Hex\nRed{SEP}#f00"
    assert row["heading"] == "Primaries"


def test_the_linear_scans_equal_the_patterns_they_replace() -> None:
    """Comments, inline code and table separator rows are scans, not the patterns first written
    for them (``tests/notes/test_regex_linear.py`` found those quadratic); on random lines the
    scans give what the patterns gave."""
    import random
    import re

    from zettel_lsp.search.results import _CODE, _is_table_separator, _without_comments

    separator = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
    comment = re.compile(r"%%.*?%%|<!--.*?-->")
    code = re.compile(r"`+([^`\n]+?)`+")
    rng = random.Random(7)
    for _ in range(20_000):
        row = "".join(rng.choice(" |:-a\t") for _ in range(rng.randint(0, 12)))
        assert _is_table_separator(row) == bool(separator.match(row)), row
        parts = ["%", "%%", "<!--", "-->", "a", "-", "<", "!", "\n"]
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 10)))
        assert _without_comments(text) == comment.sub("", text), text
        inline = "".join(rng.choice("``a \n") for _ in range(rng.randint(0, 12)))
        assert _CODE.sub(r"\1", inline) == code.sub(r"\1", inline), inline
