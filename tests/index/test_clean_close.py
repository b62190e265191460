"""The clean-close mark (issue #18): after a clean close, the next opening trusts its state and
skips the facet over every point that looks for points the state does not know (3.4 s at 100k
cards); after a crash, or with another state file put back, it looks for them and deletes
them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from zettel_lsp.index.state import CLEAN_FILE, STATE_FILE
from zettel_lsp.index.sync import Indexer


def counted_sync(ix: Indexer) -> int:
    """Run a full sync; how many times it listed the shard's paths (the facet)."""
    calls: list[int] = []
    listing: Any = ix.store.paths

    def paths() -> dict[str, int]:
        calls.append(1)
        result: dict[str, int] = listing()
        return result

    ix.store.paths = paths  # type: ignore[method-assign]
    ix.sync()
    return len(calls)


def add_ghost(vault: Path, index_dir: Path, cache_dir: Path) -> Path:
    """Index a card "Ghost.md", close cleanly, then delete the note; returns the state file as
    it was before the ghost (a copy)."""
    before = index_dir.parent / "state-before.json"
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        ix.sync()
        shutil.copy(index_dir / STATE_FILE, before)
        (vault / "Ghost.md").write_text("# Ghost\n\nA card about poltergeists.\n")
        ix.sync()
        assert ix.store.count("Ghost.md") == 1
    assert (index_dir / CLEAN_FILE).exists()
    (vault / "Ghost.md").unlink()
    return before


def test_a_clean_close_spares_the_next_opening_the_facet(
    example: tuple[Path, Path], cache_dir: Path
) -> None:
    vault, index_dir = example
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        assert counted_sync(ix) == 1  # a copied index: its mark (if any) does not match
        assert not (index_dir / CLEAN_FILE).exists()  # removed while open
        assert counted_sync(ix) == 0  # once per opening
    assert (index_dir / CLEAN_FILE).exists()
    state_bytes = (index_dir / STATE_FILE).read_bytes()
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        assert counted_sync(ix) == 0
        assert ix.sync().indexed == 0
    assert (index_dir / STATE_FILE).read_bytes() == state_bytes  # nothing changed: not rewritten


def test_without_the_mark_the_points_the_state_lacks_are_deleted(
    example: tuple[Path, Path], cache_dir: Path
) -> None:
    vault, index_dir = example
    before = add_ghost(vault, index_dir, cache_dir)
    # a crash between the shard's write and the state's: the state does not know the card
    shutil.copy(before, index_dir / STATE_FILE)
    (index_dir / CLEAN_FILE).unlink()
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        assert "Ghost.md" not in ix.state.files
        assert counted_sync(ix) == 1
        assert ix.store.count("Ghost.md") == 0


def test_an_older_state_put_back_is_not_trusted(
    example: tuple[Path, Path], cache_dir: Path
) -> None:
    vault, index_dir = example
    before = add_ghost(vault, index_dir, cache_dir)
    shutil.copy(before, index_dir / STATE_FILE)  # the mark stays: it names the newer file
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        assert counted_sync(ix) == 1
        assert ix.store.count("Ghost.md") == 0
