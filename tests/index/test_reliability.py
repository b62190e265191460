"""Reliability regressions (issue #12): file names that are not UTF-8, failures that must free
the index folder, deeply nested front matter, vectors after renames, cards with front matter
only, and two processes on a fresh index folder. Real model, real Edge shard, real files."""

from __future__ import annotations

import fcntl
import logging
import math
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT, SHARED, copy_indexed
from tests.graph.test_link_graph import snapshot
from tests.index.conftest import assert_index_matches_folder, card_rows, mention_rows
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.chunker import chunk_cards
from zettel_lsp.index.db import DB_FILE, IndexDB
from zettel_lsp.index.state import read_state
from zettel_lsp.index.store_api import IndexLockedError, point_id
from zettel_lsp.index.sync import Indexer, IndexSettings
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.server.service import Phase, VaultService
from zettel_lsp.server.settings import ServerSettings
from zettel_lsp.vault import Vault


def index_cmd(vault: Path, index_dir: Path, cache_dir: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "zettel_lsp", "index", str(vault),
            "--index-dir", str(index_dir), "--cache-dir", str(cache_dir), *extra]  # fmt: skip


def open_indexer(vault: Path, index_dir: Path, cache_dir: Path) -> Indexer:
    return Indexer(vault, index_dir, IndexSettings(), cache_dir=cache_dir)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    dst = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, dst)
    return dst


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def assert_vectors_fresh(ix: Indexer, rel: str) -> int:
    """Every stored vector of ``rel`` is the embedding of the text its chunk embeds now."""
    chunks = chunk_cards(
        [parse_card(rel, (ix.vault / rel).read_text(encoding="utf-8"))],
        ix.embedder.count_tokens,
        ix.settings.chunk_tokens,
    )[0]
    stored = ix.store.retrieve([point_id(rel, c.index) for c in chunks], with_dense=True)
    by_id = {pid: vec for pid, _, vec in stored}
    fresh = ix.embedder.embed([c.embed_text for c in chunks])
    for chunk, vec in zip(chunks, fresh, strict=True):
        got = by_id.get(point_id(rel, chunk.index))
        assert got is not None, (rel, chunk.index)
        assert cosine(got, vec) > 0.999, (rel, chunk.index, cosine(got, vec))
    return len(chunks)


# ---------------------------------------------------------------- 3. names that are not UTF-8


def test_file_name_that_is_not_utf8_is_skipped_with_a_message(
    tmp_path: Path, cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "good.md").write_text("# Good\nNotes on sourdough starters.\n", encoding="utf-8")
    with open(os.path.join(os.fsencode(vault), b"bad\xffname.md"), "wb") as fh:
        fh.write(b"Text in a file whose name is not UTF-8.\n")
    idx = tmp_path / "idx"
    caplog.set_level(logging.WARNING)
    with open_indexer(vault, idx, cache_dir) as ix:
        report = ix.sync()
        assert "bad\\xffname.md: the name is not valid UTF-8" in caplog.text
        assert set(ix.state.files) == {"good.md"}
        assert ix.store.keyword_search("sourdough", 3)[0].path == "good.md"
        assert list(report.skipped) == ["bad\\xffname.md"]
        caplog.clear()
        assert list(ix.sync().skipped) == ["bad\\xffname.md"]
        assert "not valid UTF-8" not in caplog.text  # said once, not at every reconcile
    saved = read_state(idx)
    assert saved is not None and set(saved.files) == {"good.md"}
    # the folder is free again, and the command line indexes the vault too
    out = subprocess.run(
        index_cmd(vault, idx, cache_dir), capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "Indexed 1 cards" in out.stdout
    assert "skipped bad\\xffname.md: " in out.stdout and "not valid UTF-8" in out.stdout


def test_a_failed_start_up_frees_the_index_folder(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    """Start-up fails after the index is open (here: its state cannot be written, as when
    another program holds the database). The server must close the index, so
    'zettel.reindex' (or the CLI) can open it later instead of hearing that "another
    zettel-lsp" (the server itself) holds it."""
    idx = tmp_path / "idx"
    IndexDB(idx).close()
    with _database_held(idx):
        settings = ServerSettings(index_dir=str(idx), cache_dir=str(cache_dir), watch=False)
        service = VaultService(vault, settings)
        service.start()
        assert service.done.wait(300)
        assert service.phase == Phase.FAILED, service.reason
    with open_indexer(vault, idx, cache_dir) as ix:  # raised IndexLockedError before the fix
        assert ix.sync().indexed == 45
    service.close()


@contextmanager
def _database_held(idx: Path) -> Iterator[None]:
    """Another program writing to the index's database: no write of ours gets through."""
    other = sqlite3.connect(idx / DB_FILE, isolation_level=None, timeout=0)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_closing_an_indexer_frees_the_folder_even_when_the_state_cannot_be_saved(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    idx = tmp_path / "idx"
    ix = open_indexer(vault, idx, cache_dir)
    ix.sync()
    with _database_held(idx), pytest.raises(sqlite3.OperationalError):
        ix.close()
    with open_indexer(vault, idx, cache_dir) as again:
        assert again.sync().unchanged == 45


# ---------------------------------------------------------------- 4. deep front matter


def test_deeply_nested_front_matter_is_bounded_and_the_cache_still_works(
    tmp_path: Path, cache_dir: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    deep = "[" * 500 + "quokka" + "]" * 500  # 1 KB, 500 levels
    (vault / "deep.md").write_text(
        f"---\ntitle: Deep card\nnested: {deep}\n---\nBody about wombats.\n", encoding="utf-8"
    )
    (vault / "plain.md").write_text("# Plain\nAbout echidnas.\n", encoding="utf-8")
    card = parse_card("deep.md", (vault / "deep.md").read_text(encoding="utf-8"))
    assert card.title == "Deep card"
    assert any("nested deeper than" in p for p in card.problems)
    idx = tmp_path / "idx"
    with Vault(vault, idx, IndexSettings(), cache_dir=cache_dir) as v:
        report = v.open(embed=False)
        assert any("nested deeper than" in p for p in report.problems)
        hits = v.engine.search("wombats")
        assert hits and hits[0].path == "deep.md"
    assert card_rows(idx) == 2
    with Vault(vault, idx, IndexSettings(), cache_dir=cache_dir) as v:  # from the database
        v.open(embed=False)
        assert v.graph.cards["deep.md"] == card


def test_a_card_whose_front_matter_has_no_json_form_is_parsed_at_every_start(
    tmp_path: Path, cache_dir: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "keys.md").write_text("---\nblob: !!binary aGVsbG8=\nwhen: 2020-01-02\n---\nBytes.\n")
    (vault / "plain.md").write_text("# Plain\nAbout echidnas.\n", encoding="utf-8")
    idx = tmp_path / "idx"
    for _ in range(2):
        with Vault(vault, idx, IndexSettings(), cache_dir=cache_dir) as v:
            v.open(embed=False)
            assert v.graph.cards["keys.md"].frontmatter == {
                "blob": b"hello",
                "when": date(2020, 1, 2),
            }
        assert card_rows(idx) == 1  # plain.md only


# ---------------------------------------------------------------- 5. vectors after renames


def test_a_renamed_card_gets_vectors_for_its_new_title(
    tmp_path: Path, cache_dir: Path, indexed_example: Path
) -> None:
    vault = tmp_path / "vault"
    copy_indexed(indexed_example, vault, tmp_path / "idx")  # indexed and embedded
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        r = ix.sync()
        assert (r.indexed, r.unchanged) == (0, 45) and ix.dense_pending == 0
        (vault / "baking" / "Levain.md").rename(vault / "baking" / "Leaven build.md")
        r = ix.sync()
        assert (r.renamed, r.deleted) == (1, 0)
        assert r.reused_vectors == 0  # the title is in every chunk's embedded text
        ix.embed_pending()
        assert_vectors_fresh(ix, "baking/Leaven build.md")
        assert_index_matches_folder(ix)


def test_chunks_cut_from_one_long_line_keep_their_own_vectors_after_a_move(
    tmp_path: Path, cache_dir: Path
) -> None:
    vault = tmp_path / "vault"
    (vault / "a").mkdir(parents=True)
    topics = ["bread", "rivers", "volcanoes", "violins", "glaciers", "satellites"]
    line = " ".join(
        f"Sentence {i} is about {topics[i % len(topics)]} and nothing else at all."
        for i in range(120)
    )
    (vault / "a" / "Long line.md").write_text(line + "\n", encoding="utf-8")
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
        ix.embed_pending()
        assert ix.state.files["a/Long line.md"].chunks >= 3
        (vault / "b").mkdir()
        (vault / "a" / "Long line.md").rename(vault / "b" / "Long line.md")
        r = ix.sync()
        assert r.renamed == 1 and r.reused_vectors == ix.state.files["b/Long line.md"].chunks
        assert assert_vectors_fresh(ix, "b/Long line.md") >= 3


# ---------------------------------------------------------------- 6. front matter only


def test_a_card_with_front_matter_only_is_found_by_title_alias_and_values(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    (vault / "quokka.md").write_text(
        "---\nid: 8f3k2q\ntitle: Quokka Habitat\naliases: [Rottnest marsupials]\n"
        "desc: Where the small wallabies live\ntags: [zoology]\n---\n",
        encoding="utf-8",
    )
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()
        assert ix.state.files["quokka.md"].chunks == 1
        for words, phrase in [
            ("Quokka Habitat", True),
            ("Rottnest marsupials", True),
            ("wallabies", False),
            ("zoology", False),
        ]:
            hits = ix.store.keyword_search(words, 3, phrase=phrase)
            assert hits and hits[0].path == "quokka.md", words
        assert ix.store.bm25_search("wallabies", 1)[0].path == "quokka.md"


@pytest.mark.skipif(
    not (SHARED / "data/vaults/dendron-site").is_dir(), reason="needs ../shared dendron-site"
)
def test_every_front_matter_only_card_of_dendron_site_is_found_by_its_title(
    tmp_path: Path, cache_dir: Path
) -> None:
    vault = SHARED / "data/vaults/dendron-site"
    with open_indexer(vault, tmp_path / "idx", cache_dir) as ix:
        ix.sync()  # lexical only
        only_fm = []
        for rel in ix.state.files:
            card = parse_card(rel, (vault / rel).read_text(encoding="utf-8", errors="replace"))
            if card.frontmatter and not card.text[card_body_offset(card) :].strip():
                only_fm.append(card)
        assert len(only_fm) > 50  # the issue counted 113
        missing = [
            c.path
            for c in only_fm
            if c.path not in {h.path for h in ix.store.keyword_search(c.title, 200, phrase=True)}
        ]
        assert missing == []


def card_body_offset(card: Card) -> int:
    lines = card.text.split("\n")
    return sum(len(line) + 1 for line in lines[: card.body_start_line])


# ---------------------------------------------------------------- 7. two processes, one folder


def test_a_locked_folder_is_never_judged_or_rebuilt(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    """Another process holds the folder (it is creating the shard: the folder is still empty).
    A second opener must say it is in use, and touch nothing."""
    idx = tmp_path / "idx"
    (idx / "shard").mkdir(parents=True)
    with (idx / "lock").open("a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(IndexLockedError, match="in use by another zettel-lsp"):
            open_indexer(vault, idx, cache_dir)
        assert list((idx / "shard").iterdir()) == []
        assert not (idx / DB_FILE).exists()
    with open_indexer(vault, idx, cache_dir) as ix:
        assert ix.sync().indexed == 45


def test_two_index_processes_started_together_on_a_fresh_folder(
    tmp_path: Path, cache_dir: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(3):
        (vault / f"n{i}.md").write_text(f"# N{i}\nCard number {i} about kestrels.\n")
    for attempt in range(4):
        idx = tmp_path / f"idx{attempt}"
        procs = [
            subprocess.Popen(
                index_cmd(vault, idx, cache_dir),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outs = [p.communicate(timeout=300) for p in procs]
        codes = sorted(p.returncode for p in procs)
        errs = "\n".join(err for _, err in outs)
        assert "Traceback" not in errs and "rebuilding" not in errs, errs
        assert codes in ([0, 0], [0, 1]), (codes, errs)
        if codes == [0, 1]:
            assert "in use by another zettel-lsp" in errs
        with open_indexer(vault, idx, cache_dir) as ix:
            assert ix.sync().unchanged == 3
            assert_index_matches_folder(ix)


def test_an_index_folder_that_is_or_holds_the_vault_or_a_users_folder_is_refused(
    vault: Path, tmp_path: Path, cache_dir: Path
) -> None:
    """The index writes (and, when damaged, deletes) its files in its folder: never the notes'."""
    from zettel_lsp.index.store_api import StoreError

    (vault / "shard").mkdir()
    (vault / "shard" / "Keep.md").write_text("a note in a folder named shard\n")
    before = sorted(p.relative_to(vault) for p in vault.rglob("*"))
    for index_dir in (vault, tmp_path):
        with pytest.raises(StoreError, match="notes folder"):
            open_indexer(vault, index_dir, cache_dir)
    users = tmp_path / "mine"
    users.mkdir()
    (users / "todo.txt").write_text("mine\n")
    with pytest.raises(StoreError, match="not an index folder made by zettel-lsp"):
        open_indexer(vault, users, cache_dir)
    assert sorted(p.relative_to(vault) for p in vault.rglob("*")) == before
    assert sorted(p.name for p in users.iterdir()) == ["todo.txt"]
    with open_indexer(vault, vault / ".zettel-index", cache_dir) as ix:  # inside is allowed
        assert ix.sync().indexed == 46


def test_a_vault_reopened_reuses_its_mentions(tmp_path: Path, cache_dir: Path) -> None:
    """Real index folder: the second start searches only the card edited in between, and its
    graph is the one built from scratch."""
    vault, idx = tmp_path / "vault", tmp_path / "idx"
    shutil.copytree(EXAMPLE_VAULT, vault)
    with Vault(vault, idx, IndexSettings(), cache_dir=cache_dir) as v:
        v.open(embed=False)
        n = len(v.graph.cards)
        assert v.graph.mentions_found == n
    assert mention_rows(idx) == n
    with Vault(vault, idx, IndexSettings(), cache_dir=cache_dir) as v:
        v.open(embed=False)
        assert v.graph.mentions_found == 0
    with (vault / "baking" / "Levain.md").open("a", encoding="utf-8") as fh:
        fh.write("\nNow about autolyse too.\n")  # the same titles and aliases
    with Vault(vault, idx, IndexSettings(), cache_dir=cache_dir) as v:
        v.open(embed=False)
        assert v.graph.mentions_found == 1
        fresh = LinkGraph.build(load_vault(vault)[0])
        assert snapshot(v.graph) == snapshot(fresh)
