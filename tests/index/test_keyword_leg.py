"""The keyword leg (``EdgeStore.keyword_search``): every point whose stored ``text`` holds the
words, none left out because the text BM25 ranks (the embedded text) lacks them. A real shard
in a temporary folder; its answers across a compaction: tests/index/test_compact.py."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from zettel_lsp.index.chunker import chunk_card
from zettel_lsp.index.store import SHARD_DIR, EdgeStore
from zettel_lsp.index.store_api import TEXT_FIELD, ChunkPoint, chunk_payload, point_id
from zettel_lsp.notes.parser import parse_card


def words(texts: Sequence[str]) -> list[int]:
    return [len(t.split()) for t in texts]


CARDS = {
    # the link's target is in the stored text only: the embedded text shows "the island"
    "Trip.md": "# Trip\n\nWe sailed to [[Zanzibar Harbour|the island]] in May.\n",
    "Zanzibar.md": "# Zanzibar\n\nZanzibar harbour is busy; Zanzibar spices fill the air.\n",
    "Diary.md": "# Diary\n\nA quiet day; [[Zanzibar|over there]] the rain stopped.\n",
    "Other.md": "# Other\n\nNothing about islands here.\n",
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EdgeStore]:
    store = EdgeStore(tmp_path / "index", 4, 10.0)
    points = []
    for path, text in CARDS.items():
        card = parse_card(path, text)
        for chunk in chunk_card(card, words):
            payload = chunk_payload(path, card.title, chunk)
            points.append(ChunkPoint(point_id(path, chunk.index), payload, chunk.embed_text))
    store.upsert(points)
    try:
        yield store
    finally:
        store.close()


def test_the_cards_hold_the_word_in_their_stored_text_only(store: EdgeStore) -> None:
    # what the test relies on: BM25 (over the embedded text) does not see the word there
    bm25 = {h.path for h in store.bm25_search("Zanzibar", 10)}
    assert bm25 == {"Zanzibar.md"}


def test_a_word_only_in_the_stored_text_is_found(store: EdgeStore) -> None:
    hits = store.keyword_search("zanzibar", 10)
    assert store.keyword_count("zanzibar") == 3
    assert hits[0].path == "Zanzibar.md"  # the word in its embedded text too
    assert {h.path for h in hits} == {"Zanzibar.md", "Trip.md", "Diary.md"}
    # a phrase as well; and a limit keeps the best
    phrase = store.keyword_search("Zanzibar Harbour", 10, phrase=True)
    assert [h.path for h in phrase] == ["Zanzibar.md", "Trip.md"]
    assert [h.path for h in store.keyword_search("zanzibar", 1)] == ["Zanzibar.md"]


def test_a_shard_without_the_full_text_index_gets_it_at_its_open(tmp_path: Path) -> None:
    # e.g. a process killed right after creating the shard, before its payload indexes
    from qdrant_edge import EdgeShard, UpdateOperation

    store = EdgeStore(tmp_path / "index", 4, 10.0)
    card = parse_card("Trip.md", CARDS["Trip.md"])
    [chunk] = chunk_card(card, words)
    payload = chunk_payload("Trip.md", card.title, chunk)
    store.upsert([ChunkPoint(point_id("Trip.md", 0), payload, chunk.embed_text)])
    store.close()
    shard = EdgeShard.load(str(tmp_path / "index" / SHARD_DIR))
    shard.update(UpdateOperation.delete_field_index(TEXT_FIELD))
    assert TEXT_FIELD not in shard.info().payload_schema
    shard.close()
    store = EdgeStore(tmp_path / "index", 4, 10.0)
    try:
        assert [h.path for h in store.keyword_search("zanzibar harbour", 5)] == ["Trip.md"]
    finally:
        store.close()
    shard = EdgeShard.load(str(tmp_path / "index" / SHARD_DIR))
    try:
        assert TEXT_FIELD in shard.info().payload_schema
    finally:
        shard.close()
