"""The title rule (titleSource) reaches the index and the graph: changing it re-chunks every card
(the embedded title prefix changes), reuses vectors where the embedded text did not change, and
never serves cards parsed under the other rule from the card cache. Real model, real shard."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.index.conftest import assert_index_matches_folder, card_rows
from zettel_lsp.index.store_api import point_id
from zettel_lsp.index.sync import Indexer, IndexSettings
from zettel_lsp.notes.title_rule import TitleSource
from zettel_lsp.vault import Vault

NOTES = {
    # the opening H1 is a section: the file name is the title (auto), the H1 the old title (h1)
    "DLL Hollowing.md": "# Process\n\nUnmap a module's section and write shellcode into it.\n",
    # an acronym of the file name: an alias under auto
    "Power Supply Unit.md": "# PSU\n\nConverts mains power to low voltages.\n",
    # named by an identifier: the H1 is the title under both rules
    "202311211530.md": "# Atomic notes\n\nOne idea per card.\n",
    "Plain.md": "Just text, with no heading at all.\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def title_of(ix: Indexer, path: str) -> str:
    ((_, payload, _),) = ix.store.retrieve([point_id(path, 0)])
    return str(payload["title"])


def test_changing_the_title_source_rechunks_and_reuses_unchanged_vectors(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    index = tmp_path / "idx"
    with Indexer(vault, index, IndexSettings(), cache_dir=cache_dir) as ix:
        r = ix.sync()
        assert r.indexed == 4 and ix.embed_pending() == 4
        assert title_of(ix, "DLL Hollowing.md") == "DLL Hollowing"
        assert title_of(ix, "202311211530.md") == "Atomic notes"
        # the card's own name is in its embedded (and BM25) text: a query for it finds it
        assert ix.store.bm25_search("hollowing", 3)[0].path == "DLL Hollowing.md"
        assert ix.store.bm25_search("psu", 3)[0].path == "Power Supply Unit.md"  # alias

    with Indexer(
        vault, index, IndexSettings(title_source=TitleSource.H1), cache_dir=cache_dir
    ) as ix:
        r = ix.sync()
        assert (r.indexed, r.unchanged) == (4, 0)  # every card re-chunked...
        # ...and the two whose embedded text is unchanged keep their vectors
        assert r.reused_vectors == 2 and ix.dense_pending == 2
        assert title_of(ix, "DLL Hollowing.md") == "Process"
        assert title_of(ix, "Power Supply Unit.md") == "PSU"
        assert not any(h.path == "DLL Hollowing.md" for h in ix.store.bm25_search("hollowing", 3))
        assert ix.embed_pending() == 2
        assert_index_matches_folder(ix)

    with Indexer(
        vault, index, IndexSettings(title_source=TitleSource.H1), cache_dir=cache_dir
    ) as ix:
        r = ix.sync()
        assert (r.indexed, r.unchanged) == (0, 4)  # the same rule again: nothing to do


def test_the_graph_never_gets_cards_parsed_under_another_title_source(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    index = tmp_path / "idx"
    with Vault(vault, index, IndexSettings(), cache_dir=cache_dir) as v:
        v.open(embed=False)
        card = v.graph.cards["DLL Hollowing.md"]
        assert (card.title, card.aliases) == ("DLL Hollowing", [])
        assert v.graph.cards["Power Supply Unit.md"].aliases == ["PSU"]
    assert card_rows(index, TitleSource.AUTO) == 4

    settings = IndexSettings(title_source=TitleSource.FILENAME)
    with Vault(vault, index, settings, cache_dir=cache_dir) as v:
        v.open(embed=False)
        assert v.graph.cards["202311211530.md"].title == "202311211530"
        assert v.graph.cards["Power Supply Unit.md"].aliases == []
    # the database now holds the cards of the new rule only
    assert card_rows(index, TitleSource.AUTO) == 0
    assert card_rows(index, TitleSource.FILENAME) == 4

    with Vault(vault, index, IndexSettings(), cache_dir=cache_dir) as v:
        v.open(embed=False)
        assert v.graph.cards["202311211530.md"].title == "Atomic notes"
