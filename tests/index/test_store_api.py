"""The chunk payload schema and the ids and hashes stored with it (index/store_api.py)."""

from __future__ import annotations

from zettel_lsp.index.chunker import Chunk
from zettel_lsp.index.store_api import (
    CJK_FIELD,
    LANG_FIELD,
    PATH_FIELD,
    TEXT_FIELD,
    ChunkPayload,
    chunk_payload,
    point_id,
    text_hash,
)

CHUNK = Chunk(
    card_path="a/B.md",
    index=2,
    heading_path=("Intro", "Detail"),
    line_start=4,
    line_end=9,
    text="Some text.",
    embed_text="B > Intro > Detail\nSome text.",
    tokens=3,
)


def test_the_indexer_writes_every_payload_key() -> None:
    payload = chunk_payload("a/B.md", "B", CHUNK)
    assert list(payload) == [k for k in ChunkPayload.__annotations__ if k != CJK_FIELD]
    assert payload == {
        "path": "a/B.md",
        "title": "B",
        "chunk": 2,
        "heading": "Intro > Detail",
        "line_start": 4,
        "line_end": 9,
        "text": "Some text.",
        "embed_hash": text_hash(CHUNK.embed_text),
        "lang": "en",
    }


def test_a_chunk_with_chinese_text_also_fills_the_segmented_field() -> None:
    chunk = Chunk("a/B.md", 0, (), 0, 0, "我的笔记都在这里", "B\n我的笔记都在这里", 8)
    payload = chunk_payload("a/B.md", "B", chunk, "zh")
    assert list(payload) == list(ChunkPayload.__annotations__)
    assert payload["lang"] == "zh"
    assert payload["cjk"] == payload["text"]
    # a stray character in an English card does not fill it (the tokenizer costs ~50 MB)
    assert "cjk" not in chunk_payload("a/B.md", "B", chunk, "en")


def test_indexed_fields_are_payload_keys() -> None:
    assert {PATH_FIELD, TEXT_FIELD, LANG_FIELD, CJK_FIELD} <= set(ChunkPayload.__annotations__)


def test_ids_and_hashes_are_stable() -> None:
    # stored in every index: a change would orphan every existing point and vector
    assert point_id("a/B.md", 0) == 13989245696641244340
    assert point_id("a/B.md", 1) == 2334346476028044797
    assert text_hash("Title\nsome text") == "476910b52bed576c5930796d"
