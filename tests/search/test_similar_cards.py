"""``SearchEngine.similar_cards``: the cards closest to an indexed card, by its stored first-chunk
vector (no model call), or by BM25 on its text while it has no vector. Real index, real model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from zettel_lsp.index.store_api import ChunkPayload, point_id
from zettel_lsp.vault import Vault

CARDS = {
    "bread/Sourdough loaf.md": "# Sourdough loaf\n\nA sourdough loaf rises with a levain of flour "
    "and water; bake the dough in a hot Dutch oven for a crisp crust.",
    "bread/Levain.md": "# Levain\n\nThe levain is the sourdough starter built for one bake: flour, "
    "water and a spoon of ripe starter, ready to leaven the dough.",
    "bread/Crust.md": "# Crust\n\nA dark crust comes from a hot oven and steam; the Dutch oven "
    "traps the dough's steam while the loaf bakes.",
    "search/BM25.md": "# BM25\n\nBM25 ranks documents by term frequency and inverse document "
    "frequency, with saturation and length normalisation.",
    "search/Inverted index.md": "# Inverted index\n\nAn inverted index maps each term to the "
    "documents containing it, with term frequency in the postings.",
    "search/TF-IDF.md": "# TF-IDF\n\nTF-IDF weighs a term by its frequency in a document and the "
    "inverse document frequency across the collection.",
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    root = tmp_path_factory.mktemp("similar") / "vault"
    for rel, text in CARDS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    v = Vault(root, root.parent / "index")
    v.open(embed=False)  # lexical phase only: no vectors yet
    yield v
    v.close()


def first_vector(v: Vault, path: str) -> Any:
    got = v.engine.store.retrieve([point_id(path, 0)], with_dense=True)
    assert got, path
    return got[0][2]


def check_shape(v: Vault, got: list[tuple[str, str, ChunkPayload]], path: str) -> None:
    assert path not in [p for p, _, _ in got]
    assert len({p for p, _, _ in got}) == len(got)  # one row per card
    for p, title, chunk in got:
        assert p in CARDS and chunk.get("path") == p
        assert title == v.graph.cards[p].title


def test_bm25_then_vectors(vault: Vault) -> None:
    """One test, in order: the index has no vectors, then it has them."""
    engine = vault.engine
    here = "bread/Sourdough loaf.md"

    # lexical phase: BM25 on the first chunk's text
    assert first_vector(vault, here) is None
    got = engine.similar_cards(here, 2)
    check_shape(vault, got, here)
    assert {p for p, _, _ in got} == {"bread/Levain.md", "bread/Crust.md"}

    # exclusions and limits
    only = engine.similar_cards(here, 5, exclude={"bread/Levain.md"})
    assert "bread/Levain.md" not in [p for p, _, _ in only] and len(only) <= 5
    assert only[0][0] == "bread/Crust.md"
    assert engine.similar_cards(here, 1) == got[:1]
    assert engine.similar_cards(here, 0) == []
    assert engine.similar_cards("not/indexed.md", 3) == []

    # dense phase: the stored vector, no model call for the card itself
    vault.indexer.embed_pending()
    vec = first_vector(vault, here)
    assert vec is not None
    got = engine.similar_cards(here, 2)
    check_shape(vault, got, here)
    assert {p for p, _, _ in got} == {"bread/Levain.md", "bread/Crust.md"}
    # ranked as the vector ranks chunks (first distinct cards, the card itself left out)
    order = [h.path for h in engine.store.dense_search(list(vec), 20)]
    # one batch of searches answers as the searches one by one
    other = first_vector(vault, "search/BM25.md")
    assert other is not None
    batch = engine.store.dense_search_many([list(vec), list(other)], 20)
    assert batch == [engine.store.dense_search(list(v), 20) for v in (vec, other)]
    expected = [p for i, p in enumerate(order) if p != here and p not in order[:i]][:4]
    assert [p for p, _, _ in engine.similar_cards(here, 4)] == expected
    search = engine.similar_cards("search/BM25.md", 2)
    assert {p for p, _, _ in search} <= {"search/Inverted index.md", "search/TF-IDF.md"}
