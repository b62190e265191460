"""The search pipeline end to end on a real index (real model, real Edge shard, files in tmp):
exact title first, file names as names, a ranking that does not depend on the limit, and the
two fusion functions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import copy_indexed
from zettel_lsp.search.engine import DEFAULT_DEPTH, FUSIONS, SearchOptions
from zettel_lsp.search.fallback import scan_search
from zettel_lsp.search.query import parse_query
from zettel_lsp.vault import Vault

# a start page: a long list of links, which says nothing about "home"
HOME = "Start here.\n\n" + "".join(
    f"- [[{name}]]: see {name} for the details of {name}\n"
    for name in ("BM25", "Gluten", "Levain", "Crumb", "Scoring", "Stemming", "Proofing", "TF-IDF")
)
# cards that say "home" far more often than Home.md does
TALKERS = {
    f"Home {what}.md": f"The home {what}: home, home and home again. " * 3
    for what in ("screen", "directory", "keys", "office", "page", "row")
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory, indexed_example: Path) -> Iterator[Vault]:
    # examples/vault with a copy of its index (only the cards added below are new to it)
    root = tmp_path_factory.mktemp("engine") / "vault"
    copy_indexed(indexed_example, root, root.parent / "index")
    (root / "Home.md").write_text(HOME, encoding="utf-8")
    for name, text in TALKERS.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "zz-7f3a.md").write_text(
        "---\ntitle: A card with a frontmatter title\n---\nSome words about kneading.\n",
        encoding="utf-8",
    )
    v = Vault(root, root.parent / "index")
    v.open()
    yield v
    v.close()


def paths(vault: Vault, query: str, **kw: object) -> list[str]:
    return [r.path for r in vault.engine.search(query, SearchOptions(**kw))]  # type: ignore[arg-type]


def test_a_query_that_is_a_title_puts_that_card_first(vault: Vault) -> None:
    assert paths(vault, "home")[0] == "Home.md"
    assert paths(vault, "HOME", graph=False)[0] == "Home.md"
    # switched off (and without the graph rerank, which also helps here), the cards that
    # repeat the word win: that is what the rule fixes
    assert paths(vault, "home", exact_title_first=False, graph=False)[0] != "Home.md"
    # not for a title merely inside a longer query
    assert paths(vault, "the home screen keys")[0] != "Home.md"


def test_a_file_name_finds_its_card_when_the_title_differs(vault: Vault) -> None:
    assert vault.graph.cards["zz-7f3a.md"].title == "A card with a frontmatter title"
    assert paths(vault, "zz-7f3a")[0] == "zz-7f3a.md"


# a fixed list: title queries (exact, prefix), keyword and natural-language queries, one word
# that is everywhere and one that is nowhere
LIMIT_QUERIES = (
    "bread dough fermentation",
    "rank fusion",
    "how to link notes",
    "home",
    "BM25",
    "Sourdough",
    "the",
    "retrieval evaluation with judged queries",
    "xylophone",
)


@pytest.mark.parametrize("fusion", FUSIONS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_first_results_do_not_depend_on_the_limit(
    vault: Vault, fusion: str, data: st.DataObject
) -> None:
    """search(limit=a) == search(limit=b)[:a] for random a < b, also past the legs' depth
    (DEFAULT_DEPTH chunks) and past the number of cards (the vault has 53)."""
    query = data.draw(st.sampled_from(LIMIT_QUERIES), label="query")
    a = data.draw(st.integers(1, 80), label="a")
    b = data.draw(st.integers(a + 1, 120), label="b")
    small = paths(vault, query, limit=a, fusion=fusion)
    large = paths(vault, query, limit=b, fusion=fusion)
    assert small == large[:a], (query, a, b)
    assert len(set(large)) == len(large)  # each card once


def test_a_larger_limit_goes_past_the_first_tier(vault: Vault) -> None:
    """More cards than the first tier holds: the ranking goes on (deeper legs) rather than
    stopping, and it never lists more cards than the vault has."""
    first_tier = paths(vault, "bread dough fermentation", limit=1000, depth=DEFAULT_DEPTH)
    assert DEFAULT_DEPTH < len(first_tier) <= len(vault.graph.cards)


def test_every_fusion_finds_the_card_about_it(vault: Vault) -> None:
    for fusion in FUSIONS:
        got = paths(vault, "combining rankings from several retrievers", fusion=fusion)
        assert "retrieval/Reciprocal rank fusion.md" in got[:3], (fusion, got)
    with pytest.raises(ValueError, match="unknown fusion"):
        paths(vault, "bread", fusion="average")


def test_a_parsed_query_searches_as_its_text(vault: Vault) -> None:
    """Callers parse once and pass the Query on (its terms then highlight the excerpts)."""
    for text in ("  Bread   DOUGH fermentation ", "home", "the of and"):
        query = parse_query(text)
        as_text = vault.engine.search(text, SearchOptions(limit=5))
        assert [(r.path, r.score) for r in vault.engine.search(query, SearchOptions(limit=5))] == [
            (r.path, r.score) for r in as_text
        ]
        cards = vault.graph.cards.values()
        titles = vault.engine.titles
        assert scan_search(cards, titles, query, 5) == scan_search(cards, titles, text, 5)
