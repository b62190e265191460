"""The title rule: which name is a card's title, and when its opening H1 is an alias
(zettel_lsp/notes/title_rule.py; docs/notes-and-links.md, "Titles")."""

from __future__ import annotations

import pytest

from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.title_rule import (
    TITLE_SOURCES,
    TitleSource,
    can_be_title,
    card_title,
    is_identifier,
    is_section_heading,
    judge_opening_h1,
    same_name,
)


@pytest.mark.parametrize(
    "stem",
    [
        # timestamps: 8-14 digits, a date then hours and minutes, with or without separators
        "20231121",
        "202311211530",
        "20231121153045",
        "2023-11-21",
        "2023_11_21",
        "2023.11.21",
        "2023-11-21T15-30",
        "2023-11-21 1530",
        "1700000000",
        # zk random ids: 4-8 lowercase letters and digits, at least one of each
        "8m3k",
        "a1b2c3",
        "x9y8z7w6",
        "boto3",  # a tool named like a zk id: read as one (harmless, docs/notes-and-links.md)
        # Folgezettel
        "1",
        "21",
        "1a",
        "1a2b",
        "21-3a2",
        "21.3a2",
        "1,1a",
        "1.2.3",
        # UUIDs
        "3f2b8c1e-9d4a-4b6f-8e2a-1c5d7f9b0a12",
        "3F2B8C1E9D4A4B6F8E2A1C5D7F9B0A12",
    ],
)
def test_identifiers(stem: str) -> None:
    assert is_identifier(stem)


@pytest.mark.parametrize(
    "stem",
    [
        "notes",
        "todo",
        "Linear Algebra",
        "202311211530 Atomic notes",  # an id in front of a name: a name
        "2023-11-21 Meeting",
        "abcd",  # all letters: a word, as far as anyone can tell
        "ABC1",  # zk ids are lower case
        "1234567",  # too long for a Folgezettel number, too short for a timestamp
        "123456789012345",  # 15 digits
        "Home",
    ],
)
def test_names_are_not_identifiers(stem: str) -> None:
    assert not is_identifier(stem)


def test_section_headings() -> None:
    for heading in [
        "Todo",
        "To Do",
        "Definition",
        "Definitions",
        "Theorem",
        "Example 1",
        "Week 3",
        "Table of Contents",
        "ToC",
        "Key Concepts",
        "Thought Experiment",
        "Formal Defintion",  # a typo of a section word
        "Installaiton",
        "2025",
    ]:
        assert is_section_heading(heading), heading
    for heading in ["Process Hollowing", "PSU", "Linear Algebra", "Rational", "Format", "Obsidian"]:
        assert not is_section_heading(heading), heading


def test_same_name_ignores_case_and_what_a_file_name_cannot_hold() -> None:
    assert same_name("Lattice From Basis", "Lattice from Basis")
    assert same_name("What is DevOps?", "What is DevOps")
    assert same_name("Ideas:  a list", "Ideas a list")
    assert not same_name("C++", "C")


def test_a_title_holds_no_blank_ends_line_break_or_wikilink_mark() -> None:
    assert can_be_title("What is DevOps? (a: b) / c")
    for bad in ("", "  ", " A", "A ", "A\nB", "A\rB", "A|B", "A#B", "A^B", "A[B", "A]B"):
        assert not can_be_title(bad), bad


@pytest.mark.parametrize(
    ("h1", "stem", "reason"),
    [
        # the examples: sections, not names
        ("Process", "DLL Hollowing", "section heading"),
        ("Notes", "Linear Algebra", "section heading"),
        ("Theorem", "Unique Edge Implies MST Theorem", "section heading"),
        ("Installation", "Ethereum Toolkit", "section heading"),
        ("Todo", "2025-01-07 Journal", "section heading"),
        ("Table Of Contents", "Map of Math", "section heading"),
        # the file name again
        ("Lattice From Basis", "Lattice from Basis", "same name"),
        # not shaped like a name
        ("$\\cosh x$", "Cosh", "not a name"),
        ("What is DevOps?", "DevOps", "not a name"),
        ("Consult C++ Datatypes here:", "C++ Variable", "not a name"),
        ("1. History by Ages", "History of Christianity", "not a name"),
        # a broader term: some of the file name's words
        ("Supply", "Supply & Demand", "part of the name"),
        ("Environment Variables", "Windows Environment Variables", "part of the name"),
        ("Series", "Pandas Series", "part of the name"),
        ("Transformations", "Chapter 1.4 - Transformations", "part of the name"),
        # a section with a topic of its own
        ("Linux", "Hotkey Handling", "unrelated"),
        ("Local Variable", "Ruby Variables", "unrelated"),
        ("Installing Packages", "NixOS Packages", "part of the name"),
        ("Timeline of Greek History", "Periods of Greek History", "unrelated"),
        # other names of the card: kept
        ("PSU", "Power Supply Unit", "alias"),
        ("Open Systems Interconnection Model", "OSI Model", "alias"),
        ("Product Lifecycle Management Software", "PLM Software", "alias"),
        ("Software Development Life Cycle Models", "Software Development Lifecycle", "alias"),
        ("FPGA (Field Programmable Gate Arrays)", "Field Programmable Gate Arrays", "alias"),
        ("Inelastic Collisions", "Inelastic Collision", "alias"),
        ("MicroSD", "Micro SD", "alias"),
        ("Moore Real World Evaluatability", "Moore Real World Evalutatability", "alias"),
        ("Types of Cameras", "Camera", "alias"),
        ("Remainder Theorem", "Chapter 2.1 Remainder Theorem", "alias"),
        # a placeholder file name: its H1 may be its only real name
        ("Obsidian Help", "Home", "alias"),
        ("Creative Commons CC0 1.0 Universal", "LICENSE", "alias"),
        ("Installation", "README", "section heading"),
    ],
)
def test_opening_h1_as_alias(h1: str, stem: str, reason: str) -> None:
    verdict = judge_opening_h1(h1, stem, stem)
    assert verdict.reason == reason
    assert verdict.alias == (reason == "alias")


def test_an_h1_is_compared_with_the_frontmatter_title_too() -> None:
    # Dendron: the file name is a hierarchy, the frontmatter title the name
    assert judge_opening_h1("Office hours", "2021-09-05 Office Hours", "a.b.2021.09.05").alias
    assert judge_opening_h1("PSU", "Power Supply Unit", "202311211530").alias
    assert not judge_opening_h1("Global", "Publishing", "dendron.ref.config.publishing").alias


def test_auto_mode() -> None:
    # frontmatter title > file name
    assert card_title("Stem", "From YAML", "The H1") == ("From YAML", [])
    assert card_title("Linear Algebra", None, "Notes") == ("Linear Algebra", [])
    assert card_title("Lattice from Basis", None, "Lattice From Basis") == (
        "Lattice from Basis",
        [],
    )
    assert card_title("Power Supply Unit", None, "PSU") == ("Power Supply Unit", ["PSU"])
    assert card_title("Plain", None, None) == ("Plain", [])
    # an identifier file name: the H1 is the title, unless it is a section heading
    assert card_title("202311211530", None, "Atomic notes") == ("Atomic notes", [])
    assert card_title("1a2b", None, "Why notes should be atomic?") == (
        "Why notes should be atomic?",
        [],
    )
    assert card_title("2025-01-07", None, "Todo") == ("2025-01-07", [])
    assert card_title("8m3k", None, None) == ("8m3k", [])
    # ... and a frontmatter title still wins; the H1 may then be an alias of it
    assert card_title("202311211530", "Power Supply Unit", "PSU") == (
        "Power Supply Unit",
        ["PSU"],
    )
    assert card_title("202311211530", "Atomicity", "Todo") == ("Atomicity", [])
    # blank values are no names
    assert card_title("Stem", "  ", " ") == ("Stem", [])


def test_the_other_modes() -> None:
    # filename: always the file name; a frontmatter title is an alias, the H1 content
    assert card_title("202311211530", None, "Atomic notes", "filename") == ("202311211530", [])
    assert card_title("Stem", "From YAML", "PSU", "filename") == ("Stem", ["From YAML"])
    assert card_title("Stem", "stem", None, "filename") == ("Stem", [])
    assert card_title("Power Supply Unit", None, "PSU", "filename") == ("Power Supply Unit", [])
    # h1: opening H1 > frontmatter title > file name; a losing frontmatter title is an alias
    assert card_title("Linear Algebra", None, "Notes", "h1") == ("Notes", [])
    assert card_title("Stem", "From YAML", "The H1", "h1") == ("The H1", ["From YAML"])
    assert card_title("Stem", "From YAML", None, "h1") == ("From YAML", [])
    assert card_title("Stem", None, None, TitleSource.H1) == ("Stem", [])
    # frontmatter: frontmatter title > file name; the H1 is never a name
    assert card_title("Stem", "From YAML", "The H1", "frontmatter") == ("From YAML", [])
    assert card_title("202311211530", None, "Atomic notes", "frontmatter") == (
        "202311211530",
        [],
    )
    assert card_title("Power Supply Unit", None, "PSU", "frontmatter") == (
        "Power Supply Unit",
        [],
    )
    assert TITLE_SOURCES == ("auto", "filename", "h1", "frontmatter")
    with pytest.raises(ValueError):
        card_title("Stem", None, None, "heading")


def test_parse_card_applies_the_rule() -> None:
    card = parse_card("IT/Power Supply Unit.md", "# PSU\n\nWatts.\n")
    assert (card.title, card.aliases) == ("Power Supply Unit", ["PSU"])
    card = parse_card("Math/Linear Algebra.md", "\n# Notes\n\nVectors.\n")
    assert (card.title, card.aliases) == ("Linear Algebra", [])
    card = parse_card("Math/Linear Algebra.md", "# Notes\n", title_source="h1")
    assert card.title == "Notes"
    card = parse_card("zk/202311211530.md", "# Atomic notes\n\nOne idea per card.\n")
    assert (card.title, card.aliases, card.card_id) == ("Atomic notes", [], "202311211530")
    # frontmatter aliases stay first, and an H1 alias is not added twice
    card = parse_card("Power Supply Unit.md", "---\naliases: [psu, power supply]\n---\n# PSU\n")
    assert card.aliases == ["psu", "power supply"]
    # an H1 that is just a link is no name; links inside one read as their visible text
    card = parse_card("1a2b.md", "# [[Atomicity]]\n")
    assert (card.title, card.aliases) == ("1a2b", [])
    card = parse_card("1a2b.md", "# About [[Atomicity|atomic notes]] and [x](y.md)\n")
    assert card.title == "About atomic notes and x"
    card = parse_card("Volatility View IDT.md", "# Windows [[Interrupt Descriptor Table|IDT]]\n")
    assert card.aliases == []  # "Windows IDT": a section
    card = parse_card(
        "Matrix Representation of Hamming Code.md",
        "# Matrix Representation of [[Hamming Code#Matrix|Hamming]] Codes\n",
    )
    assert card.aliases == ["Matrix Representation of Hamming Codes"]
    # an invalid title source does not make the parser raise
    card = parse_card("Stem.md", "# H1\n", title_source="heading")
    assert card.title == "Stem" and "parser error" in card.problems[0]
