"""The anchor-text leg (search/anchors.py) on a small real index (files in tmp, real Edge shard,
lexical legs): a card is found through what another card says around its link to it, the
``graph`` switch turns that off with the rest of the graph, and a link edit moves the anchor
text to the new target in the same reconcile (``Vault.apply``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from zettel_lsp.search.anchors import AnchorIndex
from zettel_lsp.search.engine import ANCHOR, DEFAULT_WEIGHTS, SearchOptions
from zettel_lsp.vault import Vault

CARDS = {
    # says nothing of garlic itself: only the kitchen card does, around its link
    "Zorbl.md": "# Zorbl\n\nA small tool made of steel.\n",
    "Onion.md": "# Onion\n\nA layered bulb.\n",
    "Kitchen.md": "# Kitchen\n\nEvery morning the [[Zorbl]] peels garlic cloves in seconds.\n",
    "Garlic.md": "# Garlic\n\nGarlic cloves are strong and sharp.\n",
    # a bare list of links says nothing of its targets
    "Index.md": "# Index\n\n- [[Onion]]\n- [[Garlic]]\n",
}
QUERY = "peels garlic cloves"


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    root = tmp_path / "vault"
    root.mkdir()
    for name, text in CARDS.items():
        (root / name).write_text(text, encoding="utf-8")
    v = Vault(root, tmp_path / "index")
    v.open(embed=False)  # the lexical legs only: no model needed
    yield v
    v.close()


def paths(vault: Vault, query: str, **kw: object) -> list[str]:
    return [r.path for r in vault.engine.search(query, SearchOptions(**kw))]  # type: ignore[arg-type]


def test_a_card_is_found_by_what_another_card_says_about_it(vault: Vault) -> None:
    # the cards holding the words first, then the one the kitchen card says it about
    assert paths(vault, QUERY)[:3] == ["Kitchen.md", "Garlic.md", "Zorbl.md"]
    # the leg is a use of the graph: off with it (--no-graph), or at weight 0
    assert "Zorbl.md" not in paths(vault, QUERY, graph=False)
    assert "Zorbl.md" not in paths(vault, QUERY, weights={**DEFAULT_WEIGHTS, ANCHOR: 0.0})
    # a bare list of links gives its targets no anchor text
    assert vault.engine.anchors.cards() == ["Zorbl.md"]


def test_a_link_edit_moves_the_anchor_text_in_the_same_reconcile(vault: Vault) -> None:
    kitchen = vault.root / "Kitchen.md"
    kitchen.write_text(CARDS["Kitchen.md"].replace("[[Zorbl]]", "[[Onion]]"), encoding="utf-8")
    assert vault.apply(vault.indexer.sync(keep_cards=True))
    found = paths(vault, QUERY)
    assert "Onion.md" in found
    assert "Zorbl.md" not in found
    # the same as reading the whole graph again
    again = AnchorIndex.of(vault.graph)
    assert vault.engine.anchors.cards() == again.cards() == ["Onion.md"]
    assert vault.engine.anchors.text("Onion.md") == again.text("Onion.md")
    # a card removed takes what it said with it
    kitchen.unlink()
    assert vault.apply(vault.indexer.sync(keep_cards=True))
    assert vault.engine.anchors.cards() == []
