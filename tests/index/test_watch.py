"""Live watching: create, edit, rename, delete cards while the watcher runs; the index follows."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT, copy_indexed
from tests.index.conftest import assert_index_matches_folder
from zettel_lsp.index.sync import Indexer, IndexSettings
from zettel_lsp.index.watch import VaultWatcher


# A bound on waiting, not a timing assertion: embedding the sample vault under a loaded CI
# machine (load 10-12 on 2 cores) took longer than 20 s.
def wait_until(check: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (AssertionError, IndexError):
            pass  # not there yet
        time.sleep(0.1)
    check()  # one last time, raising what is wrong
    raise AssertionError("condition not reached in time")


def matches(ix: Indexer) -> bool:
    with ix.lock:  # a consistent view between syncs
        if ix.dense_pending:
            return False
        assert_index_matches_folder(ix)
    return True


@contextmanager
def watched(
    vault: Path, index_dir: Path, cache_dir: Path
) -> Iterator[tuple[Indexer, VaultWatcher]]:
    """An indexer on ``vault`` after a (lexical) sync, and a started watcher that embeds."""
    ix = Indexer(vault, index_dir, IndexSettings(), cache_dir=cache_dir)
    ix.sync()
    watcher = VaultWatcher(ix, debounce_ms=100)
    watcher.start()
    watcher.wake_embedder()
    assert watcher.ready.wait(5)
    time.sleep(0.3)  # let the OS watch register before files change
    try:
        yield ix, watcher
    finally:
        watcher.stop()
        ix.close()


@pytest.fixture
def running(tmp_path: Path, cache_dir: Path):
    """A copy of examples/vault never indexed: the watcher's embedder has every card to do."""
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    with watched(vault, tmp_path / "idx", cache_dir) as (ix, watcher):
        yield vault, ix, watcher


@pytest.fixture
def running_warm(tmp_path: Path, cache_dir: Path, indexed_example: Path):
    """The same on a copy of a complete index of the vault: nothing left to embed at start."""
    vault = tmp_path / "vault"
    copy_indexed(indexed_example, vault, tmp_path / "idx")
    with watched(vault, tmp_path / "idx", cache_dir) as (ix, watcher):
        yield vault, ix, watcher


def test_watcher_follows_create_edit_rename_delete(running) -> None:
    vault, ix, _ = running
    wait_until(lambda: matches(ix))

    (vault / "Fresh idea.md").write_text("# Fresh idea\nCapybaras are the largest rodents.\n")
    wait_until(
        lambda: matches(ix) and ix.store.keyword_search("capybaras", 3)[0].path == "Fresh idea.md"
    )

    (vault / "Fresh idea.md").write_text("# Fresh idea\nWombats have cube-shaped droppings.\n")
    wait_until(
        lambda: matches(ix) and ix.store.keyword_search("wombats", 3)[0].path == "Fresh idea.md"
    )
    assert ix.store.keyword_search("capybaras", 3) == []

    (vault / "Fresh idea.md").rename(vault / "method" / "Renamed idea.md")
    wait_until(lambda: matches(ix) and "method/Renamed idea.md" in ix.state.files)
    assert "Fresh idea.md" not in ix.store.paths() or ix.store.count("Fresh idea.md") == 0

    (vault / "method" / "Renamed idea.md").unlink()
    (vault / "baking" / "Crumb.md").unlink()
    wait_until(lambda: matches(ix) and "baking/Crumb.md" not in ix.state.files)


def test_watcher_handles_folder_moves_and_ignores_dot_folders(running_warm) -> None:
    vault, ix, _ = running_warm
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "workspace.md").write_text("not a card")
    shutil.move(str(vault / "baking"), str(vault / "bread"))
    wait_until(lambda: matches(ix) and "bread/Levain.md" in ix.state.files)
    assert not any(p.startswith((".obsidian", "baking/")) for p in ix.state.files)


def test_watcher_indexes_the_notes_of_a_folder_that_replaced_a_note(
    tmp_path: Path, cache_dir: Path
) -> None:
    """Issue #44, 4: a note deleted and a folder of the same name made holding a note, beside a
    case-only rename and a rename. The folder is made before the OS watches it, so the event of
    the note in it may never come (seen in about half the tries): the folder's own event must
    find it. Four such folders at once, so that the old watcher misses one almost surely."""
    vault = tmp_path / "vault"
    vault.mkdir()
    words = ("okapi", "quokka", "axolotl", "pangolin")
    folders = [f"-dash{i}.md" for i in range(len(words))]
    for name in folders:
        (vault / name).write_text(f"# {name}\n\nA note that becomes a folder.\n")
    (vault / "Case.md").write_text("# Case\n\nOnly the case of its name changes.\n")
    (vault / "Old name.md").write_text("# Old name\n\nRenamed while watched.\n")
    with watched(vault, tmp_path / "idx", cache_dir) as (ix, _):
        (vault / "Case.md").rename(vault / "CASE.md")
        for name, word in zip(folders, words, strict=True):
            (vault / name).unlink()
            (vault / name).mkdir()
            (vault / name / "child.md").write_text(f"# Child\n\nThe {word} lives here.\n")
        (vault / "Old name.md").rename(vault / "New name.md")
        expected = {"CASE.md", "New name.md", *(f"{name}/child.md" for name in folders)}
        wait_until(lambda: {p for p, _ in ix.card_items()} == expected, timeout=15)
        with ix.lock:
            assert_index_matches_folder(ix, dense=False)
            assert ix.state.skipped == {}
            for name, word in zip(folders, words, strict=True):
                assert ix.store.keyword_search(word, 3)[0].path == f"{name}/child.md"


def test_watcher_drops_the_cards_of_a_note_named_folder_a_note_replaced(
    tmp_path: Path, cache_dir: Path
) -> None:
    """The other way round: a folder named like a note, holding a note, moved out of the vault
    and a note of that name made in its place. Only the folder's own event comes: its cards
    must go too."""
    vault = tmp_path / "vault"
    (vault / "Topic.md").mkdir(parents=True)
    (vault / "Topic.md" / "child.md").write_text("# Child\n\nThe okapi lives here.\n")
    (vault / "Other.md").write_text("# Other\n\nStays.\n")
    with watched(vault, tmp_path / "idx", cache_dir) as (ix, _):
        shutil.move(str(vault / "Topic.md"), str(tmp_path / "moved away"))
        (vault / "Topic.md").write_text("# Topic\n\nNow a note: the quokka.\n")
        wait_until(lambda: {p for p, _ in ix.card_items()} == {"Other.md", "Topic.md"}, 15)
        with ix.lock:
            assert_index_matches_folder(ix, dense=False)
            assert ix.store.keyword_search("okapi", 3) == []
