"""The verifier's keyword probes ask the index for every candidate its full-text tokenizer sees
(issue #12, found by the chaos storm): a probe word that the verifier counts in few chunks can
be in many more by the index's tokenizer ("doesn't" holds "doesn"; "woman_farmer" holds
"woman"), and a stopword has no BM25 terms, so keyword_search returns candidates in id order.
A probe limit from the verifier's own count then missed a card the index finds correctly: a
false mismatch. Real Edge shard, real model."""

from __future__ import annotations

from pathlib import Path

from zettel_lsp.index.sync import Indexer, IndexSettings
from zettel_lsp.index.verify import verify

CROWD = 60  # cards holding "doesn't": the index's candidates for "doesn"
LONELY = "Lonely 97.md"


def test_a_probe_word_the_tokenizer_sees_in_many_chunks_finds_its_card(
    tmp_path: Path, cache_dir: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(CROWD):
        (vault / f"Crowd {i:02d}.md").write_text(f"It doesn't matter {i}.\n", encoding="utf-8")
    # its probe word is "doesn" (as rare as "lonely" by the verifier's count, and sorts first);
    # the name is one whose point id sorts after the crowd's, so a scroll in id order that
    # stops early misses it
    (vault / LONELY).write_text("doesn\n", encoding="utf-8")
    with Indexer(vault, tmp_path / "index", IndexSettings(), cache_dir=cache_dir) as ix:
        ix.sync()
        assert ix.store.keyword_count("doesn") == CROWD + 1
        hits = ix.store.keyword_search("doesn", ix.store.keyword_count("doesn"))
        assert LONELY in {h.path for h in hits}
        report = verify(ix, sample=0, focus=[LONELY])
    assert report.keyword_probes >= 1
    assert report.ok, report.format()
