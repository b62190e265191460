"""The counts ``zettel.status`` shows (issue #18): kept between calls, taken again whenever
the cards or their flags change, so a status is never behind the index."""

from __future__ import annotations

from pathlib import Path

from zettel_lsp.index.status import Tally
from zettel_lsp.index.sync import Indexer


def counted(ix: Indexer) -> Tally:
    files = list(ix.state.files.values())
    return Tally(
        chunks=sum(f.chunks for f in files),
        dense=sum(f.dense for f in files),
        multilingual=sum(f.multilingual for f in files),
        multilingual_foreign=sum(f.multilingual and f.lang != "en" for f in files),
        no_multilingual=sum(not f.multilingual for f in files),
        no_multilingual_foreign=sum(not f.multilingual and f.lang != "en" for f in files),
    )


def test_the_tally_follows_every_change(example: tuple[Path, Path], cache_dir: Path) -> None:
    vault, index_dir = example
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        first = ix.status.tally()
        assert first == counted(ix) and first.dense == len(ix.state.files) > 0
        assert ix.status.tally() is first  # nothing changed: the same counts, not taken again
        # a new card: counted by the sync, without vectors until the dense phase
        (vault / "Fresh.md").write_text("# Fresh\n\n" + "A new card about crumb. " * 80)
        ix.sync()
        after_sync = ix.status.tally()
        assert after_sync == counted(ix)
        assert after_sync.chunks > first.chunks and after_sync.dense == first.dense
        ix.embed_pending()
        assert ix.status.tally() == counted(ix) and ix.status.tally().dense == first.dense + 1
        # a deleted card
        (vault / "Fresh.md").unlink()
        ix.sync()
        assert ix.status.tally() == counted(ix) == first
