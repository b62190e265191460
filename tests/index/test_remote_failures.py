"""Remote mode when the server fails: down, slow, holding another model's vectors, failing one
batch; through the HTTP fake of ``test_remote_fake.py`` (a real socket, qdrant-client's real
REST client, faults injected by the fake)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.index.conftest import assert_index_matches_folder
from tests.index.test_remote_fake import IDENT, FakeQdrant, fake, free_port_url, point
from zettel_lsp.index import remote_store
from zettel_lsp.index.remote_store import DOCKER_RUN, RemoteStore, VaultIdentity
from zettel_lsp.index.state import read_state
from zettel_lsp.index.store_api import StoreError
from zettel_lsp.index.sync import Indexer, IndexSettings

__all__ = ["fake"]  # the fixture, imported
pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Back-off in hundredths of a second: the policy is the same, the tests are faster."""
    monkeypatch.setattr(remote_store, "BACKOFF_S", 0.01)


def _vault(tmp_path: Path, part: str = "baking") -> Path:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT / part, vault)
    return vault


def test_server_down_at_start(tmp_path: Path, cache_dir: Path) -> None:
    url = free_port_url()
    settings = IndexSettings(qdrant_url=url, multilingual="off")
    with pytest.raises(StoreError) as err:
        Indexer(_vault(tmp_path), tmp_path / "idx", settings, cache_dir=cache_dir)
    text = str(err.value)
    assert url in text and DOCKER_RUN in text and "connection failed" in text, text
    assert "qdrantUrl" in text
    # the folder's lock was released: the next start (server up or not) can open it
    with pytest.raises(StoreError):
        Indexer(_vault(tmp_path / "again"), tmp_path / "idx", settings, cache_dir=cache_dir)


def test_slow_server_is_retried(fake: FakeQdrant, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write answered after the client's timeout (but applied) is sent again: it lands once."""
    monkeypatch.setattr(remote_store, "TIMEOUT_S", 1)
    store = RemoteStore.connect(fake.url, None, "c", 4, 10.0, identity=IDENT)
    try:
        slow = fake.fail("PUT", "/points", delay=2.5)
        store.upsert([point(i, f"{i}.md", f"card {i}", [1, 0, 0, i]) for i in range(1, 6)])
        assert slow.reached.is_set()
        assert fake.count("PUT", "/points") == 2
        assert store.count() == 5 and store.paths() == {f"{i}.md": 1 for i in range(1, 6)}

        # slow every time: a clear error after a bounded number of attempts, not a hang
        monkeypatch.setattr(remote_store, "ATTEMPTS", 2)
        fake.fail("POST", "/points/count", delay=2.5, times=2)
        t0 = time.monotonic()
        with pytest.raises(StoreError) as err:
            store.count()
        assert time.monotonic() - t0 < 10
        assert "no answer within 1 s" in str(err.value) and "after 2 attempts" in str(err.value)
        assert fake.url in str(err.value)
    finally:
        store.close()


def test_other_model_in_the_collection(fake: FakeQdrant) -> None:
    RemoteStore.connect(fake.url, None, "team", 4, 10.0, identity=IDENT).close()
    store = RemoteStore.connect(fake.url, None, "team", 4, 10.0, identity=IDENT)
    store.upsert([point(1, "a.md", "kept", [1, 0, 0, 0])])
    store.close()

    other = VaultIdentity("/vault", "big-model", 8, "chunker-1")
    for model in (other, VaultIdentity("/vault", "other-model", 4, "chunker-1")):
        with pytest.raises(StoreError) as err:
            RemoteStore.connect(fake.url, None, "team", model.dim, 10.0, identity=model)
        text = str(err.value)
        assert "test-model" in text and model.model in text and "team" in text, text
        assert "curl -X DELETE" in text
    # nothing was deleted or changed
    assert fake.engine.count("team").count == 1
    meta = fake.engine.get_collection("team").config.metadata or {}
    assert meta[remote_store.IDENTITY_KEY]["model"] == "test-model"

    # another vault's index in the collection: refused too
    with pytest.raises(StoreError, match="holds the index of the vault /vault"):
        RemoteStore.connect(
            fake.url, None, "team", 4, 10.0, identity=VaultIdentity("/other", "test-model", 4, "x")
        )

    # a vector of the wrong size sent anyway: the server's 400 becomes a StoreError at once
    store = RemoteStore.connect(fake.url, None, "team", 4, 10.0, identity=IDENT)
    try:
        n = fake.count("PUT", "/points")
        with pytest.raises(StoreError, match="dimension"):
            store.upsert([point(2, "b.md", "wrong", [1, 0, 0])])
        assert fake.count("PUT", "/points") == n + 1  # not retried: it cannot succeed
    finally:
        store.close()

    # this writer's own earlier model (its state says so): a model change, re-embedded
    store = RemoteStore.connect(
        fake.url, None, "team", 8, 10.0, identity=other, previous_model="test-model"
    )
    try:
        assert store.dim == 4
        assert store.reset_dense(8) is False  # another size: its own collection, made again
        assert store.stored_identity() == (other, 8, True)
        assert store.count() == 0
    finally:
        store.close()


def test_partial_batch_failure_loses_nothing(
    fake: FakeQdrant, tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 2nd of several upsert requests and one vector update answer 500 once: retried,
    everything there exactly once."""
    monkeypatch.setattr(remote_store, "BATCH_POINTS", 8)
    vault = _vault(tmp_path)
    fake.fail("PUT", "/points", status=500, skip=1)
    fake.fail("PUT", "/points/vectors", status=503, skip=1)
    fake.fail("POST", "/facet", status=429)
    settings = IndexSettings(qdrant_url=fake.url, multilingual="off")
    with Indexer(vault, tmp_path / "idx", settings, cache_dir=cache_dir) as ix:
        r = ix.sync()
        assert fake.count("PUT", "/points") >= 3
        ix.embed_pending()
        assert_index_matches_folder(ix)
        assert ix.store.count() == r.chunks
    assert all(f.reached.is_set() for f in fake.faults)


def test_server_down_mid_index_then_resume(
    fake: FakeQdrant, tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stops answering after two batches: the sync fails with a clear error, the
    state does not claim the cards that were not written, and the next start finishes."""
    monkeypatch.setattr(remote_store, "BATCH_POINTS", 8)
    vault = _vault(tmp_path)
    idx = tmp_path / "idx"
    settings = IndexSettings(qdrant_url=fake.url, multilingual="off")
    down = fake.fail("PUT", "/points", status=503, skip=2, times=1000)
    ix = Indexer(vault, idx, settings, cache_dir=cache_dir)
    try:
        with pytest.raises(StoreError) as err:
            ix.sync()
        assert "nothing is lost" in str(err.value) and fake.url in str(err.value)
    finally:
        ix.close()
    state = read_state(idx)
    assert state is not None and state.files == {} and len(state.pending) > 0
    assert fake.count("PUT", "/points") == 2 + remote_store.ATTEMPTS

    down.times = 0  # the server is back
    (vault / "Levain.md").write_text(
        "# Levain\nA stiff levain, changed while the server was down.\n"
    )
    with Indexer(vault, idx, settings, cache_dir=cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        assert_index_matches_folder(ix)
        assert ix.store.keyword_search("stiff levain", 3, phrase=True)[0].path == "Levain.md"
