"""Opening a shard gives back the pages its load mapped (issue #18: the write-ahead log and
the appendable segment's preallocated full-text pages, read once by ``EdgeShard.load`` and
never again, counted in the server's resident memory until it closed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.index.test_sync import make_big_vault
from zettel_lsp.index.store import SHARD_DIR, EdgeStore
from zettel_lsp.index.sync import Indexer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc: Linux")


def mapped_kb(folder: Path) -> int:
    """Resident KB of this process's mappings of files under ``folder``."""
    total, inside = 0, False
    prefix = str(folder.resolve())
    with open("/proc/self/smaps", encoding="utf-8") as fh:
        for line in fh:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                parts = line.split()
                inside = len(parts) > 5 and parts[5].startswith(prefix)
            elif inside and head == "Rss:":
                total += int(line.split()[1])
    return total


def test_an_opened_shard_keeps_little_mapped_and_answers(tmp_path: Path) -> None:
    vault = make_big_vault(tmp_path / "vault", 300)
    with Indexer(vault, tmp_path / "index") as ix:
        ix.sync()  # lexical points only; the shard is closed with its log and segments
    store = EdgeStore(tmp_path / "index", 384, 80.0)
    try:
        # the load alone maps ~77 MB here (two preallocated 32 MB full-text pages and more)
        assert mapped_kb(tmp_path / "index" / SHARD_DIR) < 8 * 1024
        text = (vault / sorted(p.name for p in vault.glob("*.md"))[0]).read_text()
        word = max((w for w in text.split() if w.isalpha()), key=len)
        assert store.keyword_search(word, 5, phrase=False)  # what it reads maps back
        assert store.bm25_search(word, 5)
    finally:
        store.close()
