"""The multilingual phase of the indexer (issue #17): which cards it covers under each setting,
that the English cards of a vault wait for a query that is not English, that the choice is
remembered, and that the multilingual vectors survive renames and restarts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT
from zettel_lsp.index.store import DENSE_ML
from zettel_lsp.index.store_api import point_id
from zettel_lsp.index.sync import Indexer, IndexSettings, StoreError

ENGLISH = ("Autolyse", "Crumb", "Gluten", "Hydration", "Levain", "Proofing")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """Six English cards of the example vault plus two German ones."""
    dst = tmp_path / "vault"
    dst.mkdir()
    for name in ENGLISH:
        shutil.copy(EXAMPLE_VAULT / "baking" / f"{name}.md", dst / f"{name}.md")
    (dst / "Sauerteig.md").write_text(
        "# Sauerteig\n\nDer Sauerteig ist eine Mischung aus Mehl und Wasser, in der Hefen und "
        "Milchsäurebakterien leben. Er wird für das Brot verwendet und muss gefüttert werden.\n",
        encoding="utf-8",
    )
    (dst / "Roggen.md").write_text(
        "# Roggen\n\nDas Roggenbrot ist dunkel und wird mit dem [[Sauerteig]] gebacken, weil "
        "Roggen ohne Säure nicht gut aufgeht.\n",
        encoding="utf-8",
    )
    return dst


def open_indexer(vault: Path, cache_dir: Path, mode: str = "auto") -> Indexer:
    return Indexer(
        vault, vault.parent / "index", IndexSettings(multilingual=mode), cache_dir=cache_dir
    )


def test_auto_embeds_the_few_foreign_cards_and_the_english_ones_wait_for_a_query(
    vault: Path, cache_dir: Path
) -> None:
    with open_indexer(vault, cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        assert ix.status.languages() == {"en": len(ENGLISH), "de": 2}
        assert ix.status.main_languages() == ("en", "de")  # 2 of 8 cards: above 2%
        # an English query finds the German cards by their multilingual vectors (issue #45)
        assert ix.status.foreign_vault()
        assert ix.multilingual_scope() == "foreign"
        assert ix.status.multilingual_presence() == (False, False)  # asked before the phase
        german = sum(f.chunks for f in ix.state.files.values() if f.lang == "de")
        assert ix.embed_multilingual() == german
        assert {p for p, f in ix.state.files.items() if f.multilingual} == {
            "Sauerteig.md",
            "Roggen.md",
        }
        assert ix.status.multilingual_presence() == (True, True)  # kept up to date
        # a query in German: every card, remembered
        assert ix.want_multilingual_all() is True
        assert ix.want_multilingual_all() is False
        chunks = sum(f.chunks for f in ix.state.files.values())
        assert ix.embed_multilingual() == chunks - german
        assert all(f.multilingual for f in ix.state.files.values())
        tally = ix.status.tally()
        assert (tally.multilingual, tally.multilingual_foreign) == (len(ix.state.files), 2)
    with open_indexer(vault, cache_dir) as ix:
        assert ix.state.multilingual_all
        assert ix.status.multilingual_presence() == (True, True)  # read from the saved state
        ix.sync()
        assert ix.embed_multilingual() == 0  # nothing left: the vectors are in the shard
        got = ix.store.retrieve([point_id("Sauerteig.md", 0)], with_dense=True, using=DENSE_ML)
        assert got and got[0][2] is not None and len(got[0][2]) == 512


def test_on_embeds_every_card_and_a_rename_keeps_the_vectors(vault: Path, cache_dir: Path) -> None:
    with open_indexer(vault, cache_dir, "on") as ix:
        ix.sync()
        ix.embed_pending()
        assert ix.embed_multilingual() > 0
        before = ix.store.retrieve([point_id("Roggen.md", 0)], with_dense=True, using=DENSE_ML)
        (vault / "Roggen.md").rename(vault / "Roggenbrot.md")
        report = ix.sync()
        assert report.renamed == 1
        f = ix.state.files["Roggenbrot.md"]
        assert f.lang == "de"
        # the title is part of the embedded text: a new title means new vectors
        assert not f.multilingual
        ix.embed_pending()
        assert ix.embed_multilingual() == f.chunks
        (vault / "sub").mkdir()
        (vault / "Roggenbrot.md").rename(vault / "sub" / "Roggenbrot.md")
        ix.sync()
        moved = ix.state.files["sub/Roggenbrot.md"]
        assert moved.multilingual  # same title, same text: every vector reused
        assert before  # the first vectors existed


def test_off_never_embeds_and_the_english_legs_are_unchanged(vault: Path, cache_dir: Path) -> None:
    with open_indexer(vault, cache_dir, "off") as ix:
        ix.sync()
        ix.embed_pending()
        assert ix.multilingual_embedder is None
        assert ix.want_multilingual_all() is False
        assert ix.embed_multilingual() == 0
        assert ix.multilingual_todo == 0


def test_a_wrong_setting_is_refused(vault: Path, cache_dir: Path) -> None:
    with pytest.raises(StoreError, match="multilingual must be one of auto, on, off"):
        open_indexer(vault, cache_dir, "sometimes")


def test_the_multilingual_phase_yields_to_english_work(vault: Path, cache_dir: Path) -> None:
    with open_indexer(vault, cache_dir, "on") as ix:
        ix.sync()
        # the English queue is full: the multilingual phase does not start
        assert ix.dense_pending > 0
        assert ix.embed_multilingual() == 0
        ix.embed_pending()
        assert ix.embed_multilingual() > 0


def test_a_stop_while_the_multilingual_phase_queues_loses_nothing(
    tmp_path: Path, cache_dir: Path
) -> None:
    """A server that closes while the multilingual phase reads back its cards stops between
    slices (at 100k cards it waited 11 s), and the next run queues and embeds them all."""
    from tests.index.test_sync import make_big_vault

    vault = make_big_vault(tmp_path / "vault", 300)
    with open_indexer(vault, cache_dir, "on") as ix:
        ix.sync()
        ix.embed_pending()
        asked: list[int] = []

        def stop_after_one_slice() -> bool:
            asked.append(1)
            return len(asked) > 2  # the phase's own check, then one slice

        assert ix.embed_multilingual(should_stop=stop_after_one_slice) == 0
        assert len(asked) == 3
        assert len(ix.embedding.multilingual_queue) == 0 and ix.multilingual_todo == 300
        assert ix.embed_multilingual() >= 300
        assert ix.multilingual_todo == 0
