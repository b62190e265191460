"""Searching the stored dense vectors once after start-up: the vectors are memory-mapped and
read on demand, so a session's first dense searches would wait for the reading.
``Vault.warm_store`` searches them a slice at a time; it must take every stored vector once,
stop when told, and leave the answers as they were."""

from __future__ import annotations

from pathlib import Path

from zettel_lsp.index import store as store_module
from zettel_lsp.vault import Vault


def test_warming_reads_every_stored_vector_and_changes_no_answer(
    example: tuple[Path, Path], cache_dir: Path
) -> None:
    vault_dir, index_dir = example
    with Vault(vault_dir, index_dir, cache_dir=cache_dir) as vault:
        vault.open()
        chunks = sum(f.chunks for f in vault.indexer.state.files.values() if f.dense)
        assert chunks > 0
        before = [(r.path, r.score) for r in vault.engine.search("rising bread dough")]
        assert vault.warm_store() == chunks
        assert [(r.path, r.score) for r in vault.engine.search("rising bread dough")] == before


def test_warming_goes_a_slice_at_a_time_and_stops_when_told(
    example: tuple[Path, Path], cache_dir: Path
) -> None:
    vault_dir, index_dir = example
    old = store_module.WARM_SLICE
    store_module.WARM_SLICE = 5
    try:
        with Vault(vault_dir, index_dir, cache_dir=cache_dir) as vault:
            vault.open()
            chunks = sum(f.chunks for f in vault.indexer.state.files.values() if f.dense)
            assert chunks > 10
            asked: list[int] = []

            def stop_after_two() -> bool:
                asked.append(1)
                return len(asked) > 2

            assert vault.warm_store(stop_after_two) == 10  # two slices, then the stop
            assert vault.warm_store(lambda: True) == 0
            assert vault.warm_store() == chunks
    finally:
        store_module.WARM_SLICE = old
