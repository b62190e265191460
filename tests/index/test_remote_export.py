"""The shard-to-server migration: ``zettel-lsp index VAULT --export-to URL`` copies the
embedded index to a Qdrant collection and hands the index folder over to it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.index.conftest import assert_index_matches_folder
from tests.index.test_remote_fake import FakeQdrant, fake
from zettel_lsp.index.remote_store import (
    RemoteStore,
    VaultIdentity,
    collection_name,
    export_points,
)
from zettel_lsp.index.state import read_state
from zettel_lsp.index.store_api import point_id
from zettel_lsp.index.sync import Indexer, IndexSettings

__all__ = ["fake"]  # the fixture, imported
pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


def test_export_points_to_memory(tmp_path: Path, cache_dir: Path) -> None:
    """Against qdrant-client's in-process mode: the collection answers as the shard does;
    exporting again changes nothing; after an edit, it follows the shard."""
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT / "retrieval", vault)
    settings = IndexSettings(multilingual="off")
    with Indexer(vault, tmp_path / "idx", settings, cache_dir=cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        st = ix.state
        identity = VaultIdentity(str(ix.vault), st.model, st.dim, st.chunker)
        target = RemoteStore.connect(
            ":memory:", None, "zettel-x", st.dim, st.bm25_avg_len, identity=identity
        )
        try:
            files = {p: f.chunks for p, f in st.files.items()}
            rep = export_points(ix.store, files, target)
            assert rep.points == rep.with_dense == sum(files.values()) and rep.removed == 0
            assert target.paths() == ix.store.paths()
            ids = [point_id(p, i) for p, n in files.items() for i in range(n)]
            assert target.retrieve(ids) == ix.store.retrieve(ids)
            for query in ("reciprocal rank fusion", "inverted index postings", "BM25"):
                got = [h.id for h in target.bm25_search(query, 5)]
                assert got == [h.id for h in ix.store.bm25_search(query, 5)], query
                vec = ix.embedder.embed_query(query)
                got = [h.id for h in target.dense_search(vec, 5)]
                assert got == [h.id for h in ix.store.dense_search(vec, 5)], query

            again = export_points(ix.store, files, target)  # a rerun (a resume): no change
            assert (again.points, again.removed) == (rep.points, 0)
            assert target.count() == rep.points

            gone = sorted(files)[0]
            (vault / gone).unlink()
            ix.sync()
            files = {p: f.chunks for p, f in ix.state.files.items()}
            rep = export_points(ix.store, files, target)
            assert rep.removed == 1 and gone not in target.paths()
            assert target.paths() == ix.store.paths()
        finally:
            target.close()


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zettel_lsp", *args], capture_output=True, text=True, timeout=180
    )


def test_cli_export_then_start_on_the_server(
    fake: FakeQdrant, tmp_path: Path, cache_dir: Path
) -> None:
    """The command, as a user runs it, against the HTTP fake (one upsert answered 500 once):
    then an indexer pointed at the server continues without re-indexing anything."""
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT / "baking", vault)
    idx = tmp_path / "idx"
    common = ["--index-dir", str(idx), "--cache-dir", str(cache_dir), "--multilingual", "off"]
    bad = run("index", str(vault), *common, "--export-to", fake.url, "--watch")
    assert bad.returncode == 2 and "--watch" in bad.stderr

    failed = fake.fail("PUT", "/points", status=500)
    out = run("index", str(vault), *common, "--json", "--export-to", fake.url)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)  # --json: the export's lines go to stderr
    assert "Exported" in out.stderr and f'qdrantUrl to "{fake.url}"' in out.stderr
    name = collection_name(idx)
    assert fake.engine.count(name).count == summary["chunks"]
    assert failed.reached.is_set()
    state = read_state(idx)
    assert state is not None and state.backend == f"qdrant:{fake.url}"

    settings = IndexSettings(qdrant_url=fake.url, multilingual="off")
    with Indexer(vault, idx, settings, cache_dir=cache_dir) as ix:
        r = ix.sync()
        assert (r.indexed, r.deleted) == (0, 0)
        assert ix.embed_pending() == 0
        assert_index_matches_folder(ix)
        assert ix.store.bm25_search("autolyse", 3)[0].path == "Autolyse.md"
