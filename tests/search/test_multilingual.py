"""Search in other languages and across them (issue #17), on examples/multilingual: German,
Russian and Chinese cards that link to each other, with judged queries in each language and
across languages (examples/multilingual.queries.json). Real models (the English one and the
multilingual one), a real shard in a temporary folder."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import ROOT
from zettel_lsp.eval.evaluate import GoldenQuery, load_golden
from zettel_lsp.index.store import DENSE_ML
from zettel_lsp.index.store_api import point_id
from zettel_lsp.index.sync import IndexSettings
from zettel_lsp.search.engine import SearchOptions, multilingual_key
from zettel_lsp.search.query import parse_query
from zettel_lsp.vault import Vault

VAULT = ROOT / "examples" / "multilingual"
QUERIES = ROOT / "examples" / "multilingual.queries.json"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("multilingual-cache")


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> Iterator[Vault]:
    """The multilingual vault, opened with the default settings (``auto``) and embedded by
    both models: as ``zettel-lsp eval`` and a server leave it."""
    root = tmp_path_factory.mktemp("multilingual") / "vault"
    shutil.copytree(VAULT, root)
    v = Vault(root, root.parent / "index", IndexSettings(), cache_dir=cache)
    v.open()
    v.indexer.embed_multilingual()
    v.load_multilingual_model()
    yield v
    v.close()


def queries(category: str) -> list[GoldenQuery]:
    got = [q for q in load_golden(QUERIES) if q.category == category]
    assert got, category
    return got


def top(v: Vault, text: str, n: int, **opts: object) -> list[str]:
    return [r.path for r in v.engine.search(text, replace(SearchOptions(limit=n), **opts))]


def test_the_vault_is_read_as_three_languages(vault: Vault) -> None:
    langs = vault.indexer.status.languages()
    assert langs == {"de": 8, "ru": 8, "zh": 8}
    # an all-foreign vault is embedded by the multilingual model without being asked
    assert vault.indexer.state.multilingual_all is False
    assert vault.indexer.status.foreign_vault()
    assert all(f.multilingual for f in vault.indexer.state.files.values())
    status = vault.status()
    assert status["multilingual_scope"] == "non-English cards"
    assert status["cards_embedded_multilingual"] == 24
    assert "dense_ml" in status["legs_ready"]


@pytest.mark.parametrize("category", ["de", "ru", "zh"])
def test_each_language_finds_its_card_in_the_top_3(vault: Vault, category: str) -> None:
    missed = {
        q.query: top(vault, q.query, 3)
        for q in queries(category)
        if not set(q.relevant) & set(top(vault, q.query, 3))
    }
    assert missed == {}


def test_across_languages_the_card_is_in_the_top_5(vault: Vault) -> None:
    # English, German, Russian and Chinese queries for cards in another language: only the
    # multilingual leg can bridge them (measured: 9 of 12 in the top 3, all 12 in the top 5)
    cross = queries("cross")
    hits3 = [q.id for q in cross if set(q.relevant) & set(top(vault, q.query, 3))]
    missed5 = [q.id for q in cross if not set(q.relevant) & set(top(vault, q.query, 5))]
    assert missed5 == []
    assert len(hits3) >= 9


def test_a_chinese_keyword_works_through_bm25_and_the_keyword_leg(vault: Vault) -> None:
    for q in queries("zh-keyword"):
        for leg in ("bm25", "keyword"):
            got = top(vault, q.query, 3, legs=(leg,), graph=False)
            assert got[:1] == sorted(q.relevant), (q.query, leg, got)


def test_russian_words_meet_their_other_forms(vault: Vault) -> None:
    # "закваску" (accusative) in the query, "Закваска"/"закваски" in the card: Snowball Russian
    got = top(vault, "закваску", 3, legs=("bm25",), graph=False)
    assert got[:1] == ["Закваска.md"]


def test_the_route_of_each_query(vault: Vault) -> None:
    engine = vault.engine
    opts = SearchOptions()
    russian = parse_query("как испечь хлеб на закваске")
    vectors = engine.query_vectors([russian], opts)
    # not English: the multilingual embedding only, and it drives the dense leg
    assert list(vectors) == [multilingual_key(russian.text)]
    legs = engine.run_legs(russian, opts, [], vectors=vectors)
    assert "dense_ml" not in legs and legs["dense"]
    english = parse_query("bread baked with a sourdough starter")
    vectors = engine.query_vectors([english], opts)
    # English in a vault with non-English cards: both models, each reading its own cards
    assert set(vectors) == {english.text, multilingual_key(english.text)}
    legs = engine.run_legs(english, opts, [], vectors=vectors)
    assert legs["dense"] == []  # the English model's leg: no English card here
    assert legs["dense_ml"]
    assert set(engine.query_languages(english.text)) == {"de", "ru", "zh", "en"}


def test_an_edit_keeps_the_vectors_of_unchanged_text(vault: Vault) -> None:
    ix = vault.indexer
    path = "Закваска.md"
    file = vault.root / path
    before = ix.store.retrieve([point_id(path, 0)], with_dense=True, using=DENSE_ML)[0][2]
    text = file.read_text(encoding="utf-8")
    file.write_text(text + "\n\nНовый абзац о хранении закваски в холодильнике.\n", "utf-8")
    ix.sync([path])
    f = ix.state.files[path]
    assert f.lang == "ru"
    kept = ix.store.retrieve([point_id(path, 0)], with_dense=True, using=DENSE_ML)[0][2]
    if f.chunks == 1:  # the one chunk changed: embedded again by the multilingual phase
        assert kept is None and not f.multilingual
    else:
        assert kept == before
    ix.embed_pending()
    assert ix.embed_multilingual() > 0
    assert ix.state.files[path].multilingual
    file.write_text(text, "utf-8")
    ix.sync([path])
    ix.embed_pending()
    ix.embed_multilingual()
