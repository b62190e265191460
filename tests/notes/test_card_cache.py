"""Parsed cards cached beside the index: reused only for the same path and text."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import pytest

from zettel_lsp.notes.card_cache import CACHE_FILE, cached_cards, load_cache, text_sha256
from zettel_lsp.notes.reader import DEFAULT_MAX_BYTES
from zettel_lsp.notes.scan import iter_note_paths, load_vault


def files(vault: Path) -> list[tuple[str, str]]:
    return [
        (rel, text_sha256((vault / rel).read_text(encoding="utf-8")))
        for rel in sorted(iter_note_paths(vault))
    ]


def test_cached_cards_equal_parsed_cards(
    example_vault: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "index"
    parsed, _ = load_vault(example_vault)
    first, _ = cached_cards(example_vault, files(example_vault), folder, DEFAULT_MAX_BYTES)
    assert (folder / CACHE_FILE).is_file()
    with caplog.at_level(logging.INFO, logger="zettel_lsp.notes.card_cache"):
        second, _ = cached_cards(example_vault, files(example_vault), folder, DEFAULT_MAX_BYTES)
    assert "45 from the cache, 0 parsed" in caplog.text
    by_path = {c.path: c for c in parsed}
    assert len(first) == len(second) == len(parsed) == 45
    assert all(c == by_path[c.path] for c in second)


def test_a_changed_or_renamed_note_is_parsed_again(example_vault: Path, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    cached_cards(example_vault, files(example_vault), folder, DEFAULT_MAX_BYTES)
    card = example_vault / "baking" / "Crumb.md"
    card.write_text("# Reading the crumb\n\nNow about [[Gluten]] only.\n", encoding="utf-8")
    (example_vault / "baking" / "Gluten.md").rename(example_vault / "baking" / "Gluten2.md")
    cards, _ = cached_cards(example_vault, files(example_vault), folder, DEFAULT_MAX_BYTES)
    got = {c.path: c for c in cards}
    assert [link.target for link in got["baking/Crumb.md"].links] == ["Gluten"]
    assert "baking/Gluten.md" not in got and got["baking/Gluten2.md"].title == "Gluten2"
    # the cache now holds exactly the current cards
    assert {path for path, _ in load_cache(folder)} == set(got)


def test_a_stale_hash_never_serves_old_text(example_vault: Path, tmp_path: Path) -> None:
    """The index state's hash may be older than the file: the card is parsed from disk and
    cached under the hash of what was read."""
    folder = tmp_path / "index"
    listed = files(example_vault)
    (example_vault / "Related reading.md").write_text("See [[BM25]].\n", encoding="utf-8")
    cards, _ = cached_cards(example_vault, listed, folder, DEFAULT_MAX_BYTES)
    card = next(c for c in cards if c.path == "Related reading.md")
    assert [link.target for link in card.links] == ["BM25"]
    assert ("Related reading.md", text_sha256("See [[BM25]].\n")) in load_cache(folder)


@pytest.mark.parametrize("content", [b"not a pickle", pickle.dumps({"format": "old", "cards": {}})])
def test_a_damaged_or_older_cache_is_ignored(
    example_vault: Path, tmp_path: Path, content: bytes
) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    (folder / CACHE_FILE).write_bytes(content)
    assert load_cache(folder) == {}
    cards, _ = cached_cards(example_vault, files(example_vault), folder, DEFAULT_MAX_BYTES)
    assert len(cards) == 45 and len(load_cache(folder)) == 45


def test_a_cache_written_under_another_title_source_is_not_served(
    example_vault: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "index"
    rel = "baking/Crumb.md"  # opens with "# Reading the crumb"
    auto, _ = cached_cards(example_vault, files(example_vault), folder, DEFAULT_MAX_BYTES)
    assert next(c for c in auto if c.path == rel).title == "Crumb"  # the file name
    with caplog.at_level(logging.INFO, logger="zettel_lsp.notes.card_cache"):
        h1, _ = cached_cards(
            example_vault, files(example_vault), folder, DEFAULT_MAX_BYTES, title_source="h1"
        )
    assert "0 from the cache, 45 parsed" in caplog.text
    assert next(c for c in h1 if c.path == rel).title == "Reading the crumb"
    assert load_cache(folder, "auto") == {} and len(load_cache(folder, "h1")) == 45
