"""An English query in a mixed vault (issue #45, item 5b): many English cards and a few German,
Russian and Chinese ones (benchmarks/mixed_language.py writes them). The English question finds
the German and Russian sourdough cards, through the multilingual leg over the non-English
cards; an English vault runs the legs it always ran. Real models, a real shard in a temporary
folder."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.mixed_language import QUERIES, SOURDOUGH, make_mixed_vault
from tests.conftest import copy_indexed
from zettel_lsp.cli.common import _multilingual_for
from zettel_lsp.search.engine import SearchEngine, SearchOptions, multilingual_key
from zettel_lsp.search.query import parse_query
from zettel_lsp.vault import Vault

ENGLISH_CARDS = 60  # the 22 topic cards (yogurt, beer, flour, ...) and 38 others


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    """The mixed vault, indexed and embedded by the English model and, for the cards in the
    multilingual scope, by the multilingual one; then opened again as ``zettel-lsp search``
    opens it before an English query (nothing left to embed: the model loads for the query)."""
    root = tmp_path_factory.mktemp("mixed")
    path = make_mixed_vault(root / "vault", ENGLISH_CARDS)
    cache = tmp_path_factory.mktemp("mixed-cache")
    with Vault(path, root / "index", cache_dir=cache) as first:
        first.open()
        first.indexer.embed_multilingual()
    vault = Vault(path, root / "index", cache_dir=cache)
    vault.open()
    assert vault.indexer.embed_multilingual() == 0
    _multilingual_for(vault, [QUERIES["en"]])
    yield vault
    vault.close()


def top(vault: Vault, text: str, n: int = 3) -> list[str]:
    return [r.path for r in vault.engine.search(text, SearchOptions(limit=n))]


def test_an_english_query_finds_the_german_and_russian_cards(mixed: Vault) -> None:
    got = top(mixed, QUERIES["en"])
    assert set(SOURDOUGH) <= set(got), got


def test_only_the_non_english_cards_get_multilingual_vectors(mixed: Vault) -> None:
    files = mixed.indexer.state.files
    assert {p for p, f in files.items() if f.multilingual} == {
        p for p, f in files.items() if f.lang != "en"
    }
    assert mixed.status()["multilingual_scope"] == "non-English cards"
    assert not mixed.indexer.state.multilingual_all


def test_the_route_of_an_english_query_says_which_model_reads_which_cards(
    mixed: Vault, caplog: pytest.LogCaptureFixture
) -> None:
    e = mixed.engine  # a new engine over its parts: its first search logs the route
    engine = SearchEngine(e.store, e.embedder, e.graph, multilingual=e.multilingual)
    query = parse_query(QUERIES["en"])
    with caplog.at_level(logging.INFO, logger="zettel_lsp.search.engine"):
        vectors = engine.query_vectors([query], SearchOptions())
        engine.query_vectors([parse_query("yeast in water")], SearchOptions())
    assert set(vectors) == {query.text, multilingual_key(query.text)}
    routes = [r.getMessage() for r in caplog.records if r.getMessage().startswith("search: ")]
    assert routes == [f"search: {engine.route(query.text)}"]  # once, not per query
    assert "the multilingual model the non-English ones" in routes[0]
    legs = engine.run_legs(query, SearchOptions(), [], vectors=vectors)
    assert {h.path for h in legs["dense_ml"]} <= set(SOURDOUGH) | {"天文望远镜.md"}
    assert all(h.chunk.get("lang") == "en" for h in legs["dense"])


def test_an_english_vault_runs_the_legs_it_always_ran(
    indexed_example: Path, tmp_path: Path
) -> None:
    copy_indexed(indexed_example, tmp_path / "vault", tmp_path / "index")
    with Vault(tmp_path / "vault", tmp_path / "index", cache_dir=tmp_path / "cache") as vault:
        vault.open()
        vault.indexer.embed_multilingual()
        engine = vault.engine
        assert vault.indexer.multilingual_scope() == "none"
        query = parse_query(QUERIES["en"])
        assert set(engine.query_vectors([query], SearchOptions())) == {query.text}
        assert "dense_ml" not in engine.run_legs(query, SearchOptions(), [])
        assert "English query: the English model; the multilingual leg waits" in engine.route(
            query.text
        )
        emb = vault.indexer.multilingual_embedder
        assert emb is not None and not emb.loaded  # type: ignore[attr-defined]


def test_the_vault_generator_is_deterministic(tmp_path: Path) -> None:
    a = make_mixed_vault(tmp_path / "a", 30)
    b = make_mixed_vault(tmp_path / "b", 30)
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir()) and len(names) == 33
    assert all((a / n).read_bytes() == (b / n).read_bytes() for n in names)
    shutil.rmtree(a)
