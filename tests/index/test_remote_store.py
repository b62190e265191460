"""Remote mode (a Qdrant server through qdrant-client), tested against qdrant-client's in-process
mode (``:memory:``): the same schema and the same indexer behaviour as the embedded shard."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.index.conftest import assert_index_matches_folder
from zettel_lsp.index.remote_store import collection_name
from zettel_lsp.index.store_api import IndexLockedError
from zettel_lsp.index.sync import Indexer, IndexSettings

# qdrant-client's in-process mode ignores payload indexes (a server uses them); expected here.
pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


@pytest.fixture
def remote(tmp_path: Path, cache_dir: Path):
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    ix = Indexer(
        vault,
        tmp_path / "idx",
        IndexSettings(qdrant_url=":memory:", multilingual="off"),
        cache_dir=cache_dir,
    )
    try:
        yield vault, ix
    finally:
        ix.close()


def test_remote_index_follows_the_folder(remote, tmp_path: Path, cache_dir: Path) -> None:
    vault, ix = remote
    assert type(ix.store).__name__ == "RemoteStore"
    r = ix.sync()
    assert r.indexed == 45
    assert_index_matches_folder(ix, dense=False)
    assert ix.store.bm25_search("autolyse", 3)[0].path == "baking/Autolyse.md"
    assert ix.embed_pending() == r.chunks
    assert_index_matches_folder(ix)
    qs = [ix.embedder.embed_query(q) for q in ("levain", "rank fusion")]
    assert ix.store.dense_search_many(qs, 4) == [ix.store.dense_search(q, 4) for q in qs]
    hits = ix.store.keyword_search("reciprocal rank fusion", 50, phrase=True)
    assert "retrieval/Reciprocal rank fusion.md" in {h.path for h in hits}

    (vault / "baking" / "Levain.md").rename(vault / "Levain moved.md")
    (vault / "retrieval" / "BM25.md").write_text("# BM25\nNow only about okapis.\n")
    (vault / "method" / "Backlinks.md").unlink()
    r = ix.sync()
    assert (r.renamed, r.deleted, r.indexed) == (1, 1, 2)
    ix.embed_pending()
    assert_index_matches_folder(ix)
    assert ix.store.keyword_search("okapis", 5)[0].path == "retrieval/BM25.md"

    # the state belongs to this writer: a second local process is refused
    with pytest.raises(IndexLockedError):
        Indexer(
            vault,
            tmp_path / "idx",
            IndexSettings(qdrant_url=":memory:", multilingual="off"),
            cache_dir=cache_dir,
        )


def test_dense_reset_keeps_lexical_points(remote) -> None:
    _, ix = remote
    ix.sync()
    ix.embed_pending()
    assert ix.store.reset_dense(ix.embedder.dim) is True
    assert ix.store.dense_search(ix.embedder.embed_query("levain"), 5) == []
    assert ix.store.bm25_search("levain", 1)[0].path == "baking/Levain.md"


def test_collection_carries_the_vault_identity(remote) -> None:
    """The collection is named after the index folder and records whose index it is."""
    vault, ix = remote
    assert ix.store.collection == collection_name(ix.index_dir)
    assert ix.store.collection.startswith("zettel-")
    identity, size, has_bm25 = ix.store.stored_identity()
    assert identity is not None and (size, has_bm25) == (ix.embedder.dim, True)
    assert (identity.vault, identity.model, identity.dim) == (
        str(vault.resolve()),
        ix.embedder.model_id,
        ix.embedder.dim,
    )
    assert identity.chunker == ix.state.chunker and identity.schema == 1
