"""Ollama as the index's embedding provider ('ollama:<name>'), against the stand-in server."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.llm.stub import OllamaStub, free_port
from zettel_lsp.index.embedders import EmbedderError, make_embedder
from zettel_lsp.index.sync import Indexer, IndexSettings
from zettel_lsp.ollama_client import OllamaSettings
from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.vault import Vault

NOMIC = "ollama:nomic-embed-text"


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, root)
    return root


def test_embedder_over_ollama(stub: OllamaStub, cache_dir: Path) -> None:
    e = make_embedder(NOMIC, cache_dir=cache_dir, ollama=OllamaSettings(stub.url), batch_size=16)
    assert e.model_id == "ollama:nomic-embed-text:latest"
    assert e.dim == 64
    texts = [f"note number {i} about sourdough" for i in range(40)]
    v = e.embed(texts)
    assert v.shape == (40, 64) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    batches = [b["input"] for b in stub.bodies("/api/embed")[1:]]  # after the probe
    assert [len(b) for b in batches] == [16, 16, 8]  # /api/embed in batches, in order
    assert batches[0][0] == "search_document: note number 0 about sourdough"  # model's prefix
    q = e.embed_query("sourdough")
    assert q.shape == (64,)
    assert stub.bodies("/api/embed")[-1]["input"] == ["search_query: sourdough"]
    # tokens for chunking come from the default model's tokenizer, offline
    assert e.count_tokens(["hello world"]) == [2]
    # the id does not depend on the host, and a tag is spelled out
    other = make_embedder(
        "ollama:nomic-embed-text:latest", cache_dir=cache_dir, ollama=OllamaSettings("x:1")
    )
    assert other.model_id == e.model_id


def test_unknown_ollama_model(stub: OllamaStub, cache_dir: Path) -> None:
    e = make_embedder(
        "ollama:no-such-embedder", cache_dir=cache_dir, ollama=OllamaSettings(stub.url)
    )
    with pytest.raises(EmbedderError, match=r"not found; pull it with 'ollama pull no-such"):
        _ = e.dim
    with pytest.raises(EmbedderError, match="give an Ollama model"):
        make_embedder("ollama:", cache_dir=cache_dir)


def test_a_vault_indexes_and_searches_with_ollama_embeddings(
    stub: OllamaStub, cache_dir: Path, notes: Path, tmp_path: Path
) -> None:
    nomic = IndexSettings(model=NOMIC, ollama=OllamaSettings(stub.url))
    index = tmp_path / "index"
    with Vault(notes, index, nomic, cache_dir=cache_dir) as v:
        report = v.open()
        assert v.indexer.state.model == "ollama:nomic-embed-text:latest"
        assert v.indexer.state.dim == 64
        assert report.embedded == report.sync.chunks > 0
        assert v.engine.dense_available
        dense_only = SearchOptions(legs=("dense",), graph=False)
        top = [r.path for r in v.engine.search("sourdough starter culture", dense_only)]
        assert "baking/Sourdough starter.md" in top[:3]
        best = v.engine.search("Reciprocal rank fusion")[0]
        assert best.path == "retrieval/Reciprocal rank fusion.md"
        chunks = report.sync.chunks
    # the same model again: nothing is re-embedded
    with Vault(notes, index, nomic, cache_dir=cache_dir) as v:
        assert v.open().embedded == 0
    # another model (another dimension): every chunk is re-embedded, search works on
    other = IndexSettings(model="ollama:other-embed", ollama=OllamaSettings(stub.url))
    with Vault(notes, index, other, cache_dir=cache_dir) as v:
        report = v.open()
        assert report.embedded == chunks
        assert v.indexer.state.model == "ollama:other-embed:latest"
        assert v.indexer.state.dim == 32
        dense_only = SearchOptions(legs=("dense",), graph=False)
        assert v.engine.search("sourdough starter culture", dense_only)


def test_ollama_down_keeps_lexical_search(
    stub: OllamaStub, cache_dir: Path, notes: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    up = IndexSettings(model=NOMIC, ollama=OllamaSettings(stub.url))
    with Vault(notes, index, up, cache_dir=cache_dir) as v:
        v.open()
    (notes / "New card.md").write_text("# New card\n\nAbout a fresh levain build.\n")
    down = IndexSettings(model=NOMIC, ollama=OllamaSettings(f"http://127.0.0.1:{free_port()}"))
    # the dimension is remembered: the index opens, the lexical phase runs
    with Indexer(notes, index, down, cache_dir=cache_dir) as ix:
        report = ix.sync()
        assert report.indexed == 1 and ix.dense_pending == 1
        with pytest.raises(EmbedderError, match="not reachable; start Ollama") as info:
            ix.embed_pending()
        assert "\n" not in str(info.value)
        t0 = time.monotonic()
        with pytest.raises(EmbedderError):  # fails at once for a while, no waiting
            ix.embedder.embed_query("levain")
        assert time.monotonic() - t0 < 0.1
        hits = ix.store.bm25_search("fresh levain build", 5)
        assert hits and hits[0].path == "New card.md"


def test_ollama_down_without_a_remembered_dimension(tmp_path: Path, notes: Path) -> None:
    down = IndexSettings(model=NOMIC, ollama=OllamaSettings(f"http://127.0.0.1:{free_port()}"))
    with pytest.raises(EmbedderError, match=r"ollama:nomic-embed-text:latest.*not reachable"):
        Indexer(notes, tmp_path / "index", down, cache_dir=tmp_path / "c")
