"""The keyword leg's full-text index waits for the compaction while many points are
uncompacted (issue #18: Edge rebuilds it at every load of a never-compacted shard, most of the
open after an interrupted first index). The answers must be the same without it."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tests.index.test_sync import make_big_vault
from zettel_lsp.index.compact import COMPACT_AFTER_ENV, compact, uncompacted
from zettel_lsp.index.state import read_state
from zettel_lsp.index.store import KEYWORD_DEPTH, EdgeStore
from zettel_lsp.index.sync import Indexer


def queries(vault: Path, n: int, seed: int) -> list[str]:
    """Words and runs of two or three words from the vault's own text, as written (case,
    punctuation, apostrophes, digits), plus words it does not hold and stopwords only."""
    rng = random.Random(seed)
    tokens = [t for p in sorted(vault.glob("*.md")) for t in p.read_text().split()]
    out = ["the", "of the", "zyxwv", "Serial", "SERIAL 17", "17.", "(the", "doesn't"]
    while len(out) < n:
        k = rng.choice((1, 1, 2, 3))
        at = rng.randrange(len(tokens) - k)
        out.append(" ".join(tokens[at : at + k]))
    return out


def keyword_answers(store: EdgeStore, qs: list[str], among: bool = False) -> list[object]:
    """Every query's full keyword answer (all matches: the cards share paragraphs, so a cut
    inside a tie could list either card) as (id, rounded score) sets, phrase and not, and
    its count. ``among``: only the matches among the best BM25 points the keyword leg looks
    at without its index (:data:`KEYWORD_DEPTH`, or twice the asked number)."""
    out: list[object] = []
    for q in qs:
        for phrase in (False, True):
            n = store.keyword_count(q, phrase=phrase)
            hits = store.keyword_search(q, n + 5, phrase=phrase)
            got = sorted((h.id, round(h.score, 4)) for h in hits)
            if among:
                depth = max(KEYWORD_DEPTH, 2 * (n + 5))
                best = {h.id for h in store.bm25_search(q, depth)}
                if best:  # else only stopwords: every point is looked at, as with the index
                    got = [(i, sc) for i, sc in got if i in best]
            out.append((q, phrase, n, got))
    return out


@pytest.mark.parametrize("cards", [200, 700])
def test_the_keyword_leg_answers_the_same_without_its_index(
    tmp_path: Path, cache_dir: Path, cards: int
) -> None:
    """200 cards: fewer points than the leg looks at, so every answer is the same; 700: the
    same among the best BM25 points, which is what it promises."""
    vault = make_big_vault(tmp_path / "vault", cards)
    with Indexer(vault, tmp_path / "index", cache_dir=cache_dir) as ix:
        ix.sync()
        store = ix.store
        assert isinstance(store, EdgeStore) and store.keyword_indexed  # few points: kept
        qs = queries(vault, 120, seed=5)
        small = cards < KEYWORD_DEPTH  # one point per card
        before = keyword_answers(store, qs, among=not small)
        assert sum(1 for _, _, n, _ in before if n) > 100  # most queries match something
        assert store.keyword_index(False) and not store.keyword_indexed
        assert store.keyword_index(False) is False  # nothing left to drop
        after = keyword_answers(store, qs)
        assert after == (before if small else keyword_answers(store, qs, among=True))
        if not small:
            assert after == before
            # and further down the BM25 ranking, matches are missed: what it costs
            assert any(n > len(got) for _, _, n, got in after)
        assert store.keyword_index(True) and store.keyword_indexed
        assert keyword_answers(store, qs, among=not small) == before


def test_past_the_threshold_the_index_waits_for_the_compaction(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(COMPACT_AFTER_ENV, "50")
    vault = make_big_vault(tmp_path / "vault", 40)
    index_dir = tmp_path / "index"
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        ix.sync()  # 40 points written: below 50
        assert isinstance(ix.store, EdgeStore) and ix.store.keyword_indexed
        for i in range(40, 60):
            (vault / f"card {i:04d}.md").write_text(f"# Card {i}\n\nA new one, marked qwv{i}.\n")
        ix.sync()  # 60 points written since the last compaction
        assert ix.state.uncompacted == 60 and not ix.store.keyword_indexed
        assert [h.path for h in ix.store.keyword_search("marked qwv45", 5)] == ["card 0045.md"]
    # opened again before a compaction: still left to it (the load does not build it)
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        assert isinstance(ix.store, EdgeStore) and not ix.store.keyword_indexed
        found = ix.store.keyword_search("marked qwv45", 5, phrase=True)
        assert [h.path for h in found] == ["card 0045.md"]
    state = read_state(index_dir)
    assert state is not None and uncompacted(state, index_dir) == 60
    compact(index_dir)  # builds it on disk
    store = EdgeStore(index_dir, 384, 10.0)
    try:
        assert store.keyword_indexed
    finally:
        store.close()
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        assert isinstance(ix.store, EdgeStore) and ix.store.keyword_indexed
        assert [h.path for h in ix.store.keyword_search("qwv59", 5)] == ["card 0059.md"]
        ix.sync()
        ix.embed_pending()  # 60 vectors: past the threshold again
        assert ix.state.uncompacted == 60 and not ix.store.keyword_indexed


def test_a_shard_without_the_index_is_given_one_when_few_points_wait(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # e.g. a process killed right after creating the shard, before its payload indexes
    vault = make_big_vault(tmp_path / "vault", 10)
    index_dir = tmp_path / "index"
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        ix.sync()
        assert isinstance(ix.store, EdgeStore) and ix.store.keyword_index(False)
    with Indexer(vault, index_dir, cache_dir=cache_dir) as ix:
        assert isinstance(ix.store, EdgeStore) and ix.store.keyword_indexed
        assert re.fullmatch(r"card 000\d\.md", ix.store.keyword_search("Serial 3", 1)[0].path)


def test_verify_probes_the_index_and_leaves_it_waiting(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zettel_lsp.index.verify import verify

    monkeypatch.setenv(COMPACT_AFTER_ENV, "50")
    vault = make_big_vault(tmp_path / "vault", 60)
    with Indexer(vault, tmp_path / "index", cache_dir=cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        assert isinstance(ix.store, EdgeStore) and not ix.store.keyword_indexed
        report = verify(ix, None)
        assert report.keyword_probes >= 60 and report.ok, report.to_json()
        assert not ix.store.keyword_indexed  # dropped again


def test_an_evaluation_ranks_with_the_index(tmp_path: Path, cache_dir: Path) -> None:
    """``zettel-lsp eval`` on a fresh index past the threshold builds the keyword index first:
    it measures the ranking a compacted index has, not the interim leg."""
    import json
    import os
    import subprocess
    import sys

    vault = make_big_vault(tmp_path / "vault", 12)
    judged = tmp_path / "judged.json"
    judged.write_text(
        json.dumps([{"id": "q1", "query": "Serial 7", "relevant_paths": ["card 0007.md"]}])
    )
    cmd = [sys.executable, "-m", "zettel_lsp", "eval", str(vault), str(judged), "--json"]
    cmd += ["--index-dir", str(tmp_path / "index"), "--cache-dir", str(cache_dir)]
    env = {**os.environ, COMPACT_AFTER_ENV: "5"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "built the keyword index" in out.stderr
    assert json.loads(out.stdout)["overall"]["mrr"] == 1.0
