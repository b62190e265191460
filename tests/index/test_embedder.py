"""The default embedding model, loaded offline from the PyPI packages (the real model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from zettel_lsp.index.embedders import EmbedderError, assemble_default_model, make_embedder


def test_default_model_folder_is_assembled_once(cache_dir: Path) -> None:
    folder = assemble_default_model(cache_dir)
    names = {p.name for p in folder.iterdir()}
    assert names == {
        "model.onnx",
        "tokenizer.json",
        "config.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
    }
    mtime = (folder / "model.onnx").stat().st_mtime_ns
    assert assemble_default_model(cache_dir) == folder
    assert (folder / "model.onnx").stat().st_mtime_ns == mtime


def test_vectors_are_unit_length_and_meaningful(cache_dir: Path) -> None:
    e = make_embedder(cache_dir=cache_dir)
    texts = [
        "Reciprocal rank fusion combines several ranked lists.",
        "Bake the sourdough loaf in a preheated Dutch oven.",
        "Merging rankings from many retrieval systems.",
    ]
    v = e.embed(texts)
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-3)
    sims = v @ v.T
    assert sims[0, 2] > 0.5 > sims[0, 1] + 0.3  # paraphrase close, unrelated far
    q = e.embed_query("how to combine rankings")
    assert int(np.argmax(v @ q)) in (0, 2)
    # order is kept although texts are embedded sorted by length
    assert np.allclose(e.embed(texts[::-1])[::-1], v, atol=1e-5)


def test_token_counts_and_model_id(cache_dir: Path) -> None:
    e = make_embedder(cache_dir=cache_dir)
    assert e.count_tokens(["hello world", "x " * 1000]) == [2, 1000]  # no truncation, no pad
    assert e.model_tokens(["hello world", "x " * 1000]) == 4 + 256  # specials, truncation
    assert e.model_id.endswith(":max256")
    assert make_embedder(cache_dir=cache_dir, max_length=128).model_id != e.model_id


def test_unknown_model_fails_with_a_clear_message(cache_dir: Path) -> None:
    with pytest.raises(EmbedderError, match=r"could not be loaded.*default model.*works offline"):
        make_embedder("no-such-org/no-such-model", cache_dir=cache_dir).embed(["x"])


def test_models_loading_at_once_in_one_process_all_load(cache_dir: Path) -> None:
    """Two vaults in one server load their models at the same time. fastembed's model
    registry is global and its check-then-add is not atomic: the second registration raised
    "already registered" and that vault's search stayed lexical (seen in CI with two workspace
    folders). A fresh process, so the registry starts empty; several threads start together."""
    import subprocess
    import sys

    script = f"""
import sys, threading
sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race shows
from pathlib import Path
from zettel_lsp.index.embedders import make_embedder
n = 6
embedders = [make_embedder(cache_dir=Path({str(cache_dir)!r})) for _ in range(n)]
barrier = threading.Barrier(n)
errors = []
def load(e):
    barrier.wait()
    try:
        e.embed(["a sourdough loaf"])
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=load, args=(e,)) for e in embedders]
for t in threads: t.start()
for t in threads: t.join()
print(errors)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
