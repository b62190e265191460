"""One embedding queue per model: jobs sorted by length, an edit's job first, batches within
the model's limits that never mix jobs, superseded chunks skipped, per-card counts. The real
default model's tokenizer and limits."""

from __future__ import annotations

from pathlib import Path

from zettel_lsp.index.embed_queue import EmbedItem, EmbedQueue, count_tokens
from zettel_lsp.index.embedders import make_embedder


def items(path: str, texts: list[str], generation: int = 1) -> list[EmbedItem]:
    return [EmbedItem(path, generation, i, t) for i, t in enumerate(texts)]


def test_batches_follow_the_models_limits_and_never_mix_jobs(cache_dir: Path) -> None:
    model = make_embedder(cache_dir=cache_dir, batch_size=4, max_batch_tokens=64)
    q = EmbedQueue()
    bulk = items("bulk.md", ["word " * n for n in (1, 30, 2, 3, 4, 5)])
    edit = items("edit.md", ["an edit", "another line of the edit"])
    assert count_tokens(bulk + edit, model)
    q.push(bulk)
    q.push(edit, first=True)
    assert len(q) == 8
    first = q.next_batch(model, lambda it: True)
    assert [it.path for it in first] == ["edit.md", "edit.md"]  # the edit's job, alone
    got: list[EmbedItem] = []
    while batch := q.next_batch(model, lambda it: it.point != 0):  # point 0: superseded
        assert [it.tokens for it in batch] == sorted(it.tokens for it in batch)
        assert len(batch) == 1 or (len(batch) <= 4 and len(batch) * batch[-1].tokens <= 64)
        got += batch
    assert sorted(it.point for it in got) == [1, 2, 3, 4, 5] and len(q) == 0


def test_counts_finish_a_card_at_its_last_chunk() -> None:
    q = EmbedQueue()
    q.expect("a.md", 2)
    assert not q.embedded("a.md") and q.embedded("a.md") and "a.md" not in q.left
    q.expect("b.md", 3)
    q.uncount(items("b.md", ["x", "y"]))
    assert q.left == {"b.md": 1}
    q.forget("b.md")
    assert q.left == {}
