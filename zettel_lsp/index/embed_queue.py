"""The chunks waiting for one model's vectors: one queue per model (the English one and the
multilingual one), used the same way by the indexer's embedding loop.

A queue holds jobs, each a list of items sorted by padded token count (padding is what makes
unsorted batches slow); an edit's job goes in front of a bulk one, and a batch never mixes
jobs. It also counts, per card, the chunks still waiting: the card's vectors are done when
that count reaches 0. An item of an older version of its card is skipped when it comes up.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from zettel_lsp.index.embedders import Embedder

TOKEN_SLICE = 4096  # texts counted per tokenizer call


@dataclass(slots=True)
class EmbedItem:
    path: str
    generation: int  # the version of the card the chunk was cut from
    point: int
    text: str
    tokens: int = 0  # model tokens (specials included, truncated): what a batch pads to


def count_tokens(
    items: list[EmbedItem], embedder: Embedder, should_stop: Callable[[], bool] | None = None
) -> bool:
    """Set each item's padded token count, a slice of texts at a time; False: ``should_stop``
    said so between slices."""
    max_len = embedder.max_length
    for start in range(0, len(items), TOKEN_SLICE):
        if should_stop is not None and should_stop():
            return False
        part = items[start : start + TOKEN_SLICE]
        for it, n in zip(part, embedder.count_tokens([it.text for it in part]), strict=True):
            it.tokens = min(n + 2, max_len)
    return True


class EmbedQueue:
    """Jobs of :class:`EmbedItem` for one model, and the chunks each card still waits for.
    Not thread-safe: the indexer calls it under its lock."""

    def __init__(self) -> None:
        self.jobs: deque[deque[EmbedItem]] = deque()
        self.left: dict[str, int] = {}  # card -> its chunks not yet embedded (queued ones)
        self.tokens = 0  # the queued items' tokens (superseded ones included)

    def __len__(self) -> int:
        """Items queued (superseded ones included until they come up)."""
        return sum(len(job) for job in list(self.jobs))

    def push(self, items: Iterable[EmbedItem], *, first: bool = False) -> None:
        """Queue one job of counted items (:func:`count_tokens`), in front when ``first``."""
        job = deque(sorted(items, key=lambda it: it.tokens))
        self.tokens += sum(it.tokens for it in job)
        if first:
            self.jobs.appendleft(job)
        else:
            self.jobs.append(job)

    def expect(self, path: str, chunks: int) -> None:
        """The card at ``path`` waits for ``chunks`` vectors (its items are being queued)."""
        self.left[path] = chunks

    def uncount(self, items: Iterable[EmbedItem]) -> None:
        """Take ``items`` back out of the counts (they were not queued after all)."""
        for it in items:
            self.embedded(it.path)

    def forget(self, path: str) -> None:
        """The card changed or went: its queued items (older generations) are skipped."""
        self.left.pop(path, None)

    def embedded(self, path: str) -> bool:
        """One of the card's chunks got its vector; True when that was its last."""
        left = self.left.get(path, 0) - 1
        if left <= 0:
            self.left.pop(path, None)
            return True
        self.left[path] = left
        return False

    def next_batch(self, embedder: Embedder, live: Callable[[EmbedItem], bool]) -> list[EmbedItem]:
        """Exactly one model batch: the embedder's limits (texts, padded tokens) applied to the
        queue, so the model never gets fragments of a batch. Items not ``live`` (of an older
        version of their card, or of a card gone) are dropped on the way."""
        batch: list[EmbedItem] = []
        size = embedder.batch_size
        budget = embedder.max_batch_tokens
        while self.jobs:
            job = self.jobs[0]
            while job:
                it = job[0]
                if not live(it):
                    self.tokens -= job.popleft().tokens
                    continue
                if batch and (len(batch) >= size or (len(batch) + 1) * it.tokens > budget):
                    return batch
                self.tokens -= it.tokens
                batch.append(job.popleft())
            self.jobs.popleft()
            if batch:
                return batch  # an edit's job and the bulk are not mixed in one batch
        return batch
