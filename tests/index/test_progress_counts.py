"""What the user sees of an index run's progress: an ETA measured in model tokens (a long chunk
costs many short ones), and every count written the same way, with thousands separators, on
the terminal and in the server's work-done progress. The real tokenizer, a real index run."""

from __future__ import annotations

import re
from pathlib import Path

from zettel_lsp.index.embed_queue import EmbedItem, EmbedQueue, count_tokens
from zettel_lsp.index.embedders import make_embedder
from zettel_lsp.index.status import Progress
from zettel_lsp.index.sync import Indexer
from zettel_lsp.progress import eta_seconds, line
from zettel_lsp.server.progress import VaultProgress

UNSEPARATED = re.compile(r"(?<![\d,.])\d{4,}(?![\d.])")  # 2721, not 2,721 nor 1.5 or 0.1234


def test_eta_follows_tokens_when_cards_differ_in_size(cache_dir: Path) -> None:
    """A few long cards and many short ones: the queue puts the short chunks first, so a
    chunk-based ETA after them would be far too low. At a fixed cost per token the token-based
    ETA is right at every report."""
    model = make_embedder(cache_dir=cache_dir)
    long_text = " ".join(f"word{i}" for i in range(400))
    texts = [long_text] * 10 + [f"note {i}" for i in range(200)]
    queued = [EmbedItem(f"{i}.md", 1, 0, t) for i, t in enumerate(texts)]
    assert count_tokens(queued, model)
    q = EmbedQueue()
    q.push(queued)
    total_tokens = sum(it.tokens for it in queued)
    assert q.tokens == total_tokens
    seconds_per_token = 0.01
    done = tokens = 0
    worst_items, worst_shown = 1.0, 0.0
    while batch := q.next_batch(model, lambda it: True):
        done += len(batch)
        tokens += sum(it.tokens for it in batch)
        assert q.tokens == total_tokens - tokens
        elapsed = tokens * seconds_per_token
        truth = q.tokens * seconds_per_token
        if truth < 10 or elapsed < 1:
            continue
        p = Progress("dense", done, done + len(q), "", tokens, tokens + q.tokens)
        shown = re.search(r"ETA (\d+):(\d\d)", line(p, elapsed))
        assert shown is not None
        eta = 60 * int(shown[1]) + int(shown[2])
        worst_shown = max(worst_shown, abs(eta - truth) / truth)
        by_items = Progress("dense", done, done + len(q))
        worst_items = min(worst_items, eta_seconds(by_items, elapsed) / truth)
    assert worst_shown < 0.1
    assert worst_items < 0.5  # what a count of chunks would have shown


def counts_written(messages: list[str]) -> list[str]:
    return [m for m in messages if UNSEPARATED.search(m)]


def test_every_count_of_an_index_run_has_separators(tmp_path: Path, cache_dir: Path) -> None:
    """A real sync of 1,200 notes and the start of their embedding, its progress written as
    the terminal line and as the server's messages."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(1200):
        (vault / f"n{i}.md").write_text(f"# Note {i}\n\nSome text {i}.\n", encoding="utf-8")
    seen: list[Progress] = []
    server: list[str] = []

    class Op:
        def report(self, message: str, percentage: int | None = None) -> None:
            server.append(message)

        def end(self, message: str) -> None:
            server.append(message)

    vp = VaultProgress("vault", lambda title, msg: Op(), lambda: False)
    vp.begin("Indexing vault", "starting")

    def record(p: Progress) -> None:
        seen.append(p)
        vp.on_progress(p)

    with Indexer(vault, tmp_path / "index", cache_dir=cache_dir, progress=record) as ix:
        ix.sync()
        ix.embed_pending(lambda: sum(p.phase == "dense" for p in seen) >= 2)
    phases = {p.phase for p in seen}
    assert {"scan", "lexical", "dense"} <= phases
    dense = [p for p in seen if p.phase == "dense"]
    assert all(0 < p.tokens_done < p.tokens_total for p in dense)
    terminal = [line(p, 2.0) for p in seen]
    assert any("1,200" in t for t in terminal) and any("1,200" in m for m in server)
    assert counts_written(terminal) == [] and counts_written(server) == []
