"""Link hold-out: un-linking in a copy (both variants) leaves the original vault untouched, and
``zettel-lsp eval-links`` never deletes, reuses or writes into a folder it did not make (issue
#12: ``--index-dir .`` beside ``./vault`` once deleted the vault)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_workdir import tree
from zettel_lsp.eval.links import HeldOut, holdout_copy, unlink_copy
from zettel_lsp.workdir import MARKER, WorkDirError


def make(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Src.md").write_text(
        "Intro. Fusion uses [[RRF|rank fusion]] here. Keep [[Other]].\nAlso ![[RRF]] and [[RRF]]!\n"
    )
    (vault / "RRF.md").write_text("# RRF\n")
    (vault / "Other.md").write_text("# Other\n")
    return vault


def test_mention_variant_keeps_the_visible_text(tmp_path: Path) -> None:
    vault = make(tmp_path)
    original = (vault / "Src.md").read_text()
    n = unlink_copy(vault, tmp_path / "copy", [HeldOut("Src.md", "RRF.md")], "mention")
    assert n == 3
    assert (tmp_path / "copy" / "Src.md").read_text() == (
        "Intro. Fusion uses rank fusion here. Keep [[Other]].\nAlso RRF and RRF!\n"
    )
    assert (vault / "Src.md").read_text() == original


def test_removed_variant_deletes_the_sentences(tmp_path: Path) -> None:
    vault = make(tmp_path)
    unlink_copy(vault, tmp_path / "copy", [HeldOut("Src.md", "RRF.md")], "removed")
    text = (tmp_path / "copy" / "Src.md").read_text()
    assert "RRF" not in text and "[[Other]]" in text and text.startswith("Intro.")


# ---------------------------------------------------------------------------------- safety

HELD = [HeldOut("Src.md", "RRF.md")]


def test_unlink_copy_never_replaces_an_existing_folder(tmp_path: Path) -> None:
    vault = make(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "Keep.md").write_text("mine")
    with pytest.raises(WorkDirError, match="already exists"):
        unlink_copy(vault, other, HELD, "mention")
    assert tree(other) == {"Keep.md": b"mine"}
    before = tree(tmp_path)
    for copy in (vault, vault / "copy", tmp_path / "x" / ".."):
        with pytest.raises(WorkDirError):
            unlink_copy(vault, copy, HELD, "mention")
    assert tree(tmp_path) == before


def test_holdout_copy_is_temporary_and_the_index_folder_is_claimed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    vault = make(tmp_path)
    before = tree(vault)
    with holdout_copy(vault, HELD, "mention") as hc:
        assert hc.changed == 3 and hc.vault.parent.parent == temp.resolve()
        assert hc.index_dir.parent == hc.vault.parent  # no --index-dir: in the temporary folder
        assert "[[RRF" not in (hc.vault / "Src.md").read_text()
    assert list(temp.iterdir()) == [] and tree(vault) == before
    # an index folder given: new or marked, kept afterwards
    with holdout_copy(vault, HELD, "mention", tmp_path / "idx") as hc:
        assert hc.index_dir == (tmp_path / "idx").resolve()
    assert json.loads((tmp_path / "idx" / MARKER).read_text())["tool"] == "zettel-lsp eval-links"
    with holdout_copy(vault, HELD, "removed", tmp_path / "idx"):
        pass  # reused: it carries the marker
    # the temporary folder goes even when the evaluation fails
    with pytest.raises(RuntimeError), holdout_copy(vault, HELD, "mention"):
        raise RuntimeError("boom")
    assert list(temp.iterdir()) == [] and tree(vault) == before


# ------------------------------------------------------ the command line, as a user runs it


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


def eval_links(cwd: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``zettel-lsp eval-links ARGS`` run in ``cwd``, temporary folders in ``cwd/tmp``."""
    (cwd / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(cwd / "tmp")}
    return subprocess.run(
        [sys.executable, "-m", "zettel_lsp", "eval-links", *args, "--cache-dir", str(cache)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def user_dir(tmp_path: Path) -> Path:
    """A user's folder: ``vault/`` with notes and ``held.tsv`` beside it."""
    make(tmp_path)
    (tmp_path / "vault" / "sub").mkdir()
    (tmp_path / "vault" / "sub" / "Deep.md").write_text("# Deep\nSee [[Other]].\n")
    (tmp_path / "held.tsv").write_text("src\tdst\nSrc.md\tRRF.md\n")
    (tmp_path / "tmp").mkdir()
    return tmp_path


def test_index_dir_holding_the_vault_is_refused_and_nothing_is_deleted(
    tmp_path: Path, cache: Path
) -> None:
    """The reported data loss: ``eval-links vault held.tsv --index-dir .`` beside ``./vault``."""
    cwd = user_dir(tmp_path)
    before = tree(cwd)
    out = eval_links(cwd, cache, "vault", "held.tsv", "--index-dir", ".")
    assert out.returncode == 2, out.stderr
    assert "contains the vault" in out.stderr
    assert tree(cwd) == before  # notes, held.tsv: all there, nothing written


@pytest.mark.parametrize(
    ("index_dir", "relation"),
    [
        ("vault", "is the vault"),
        ("vault/.zettel", "is inside the vault"),
        ("vault/sub", "is inside the vault"),
        ("box", "contains the vault"),
    ],
)
def test_index_dir_overlapping_the_vault_is_refused(
    tmp_path: Path, cache: Path, index_dir: str, relation: str
) -> None:
    cwd = user_dir(tmp_path)
    vault = "vault"
    if index_dir == "box":  # a vault inside the index folder, not named vault/
        (cwd / "box").mkdir()
        os.rename(cwd / "vault", cwd / "box" / "notes")
        vault = "box/notes"
    before = tree(cwd)
    out = eval_links(cwd, cache, vault, "held.tsv", "--index-dir", index_dir)
    assert out.returncode == 2, out.stderr
    assert relation in out.stderr
    assert tree(cwd) == before


def test_an_unmarked_folder_is_never_used(tmp_path: Path, cache: Path) -> None:
    cwd = user_dir(tmp_path)
    other = cwd / "other"
    (other / "vault").mkdir(parents=True)  # what an older eval-links would have replaced
    (other / "vault" / "Keep.md").write_text("precious")
    (other / "index").mkdir()
    before = tree(cwd)
    out = eval_links(cwd, cache, "vault", "held.tsv", "--index-dir", "other")
    assert out.returncode == 2, out.stderr
    assert "not empty and was not made by zettel-lsp" in out.stderr
    assert tree(cwd) == before


def test_eval_links_end_to_end_leaves_no_copy_behind(tmp_path: Path, cache: Path) -> None:
    cwd = user_dir(tmp_path)
    vault_before = tree(cwd / "vault")
    out = eval_links(cwd, cache, "vault", "held.tsv", "--index-dir", "idx", "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert (r["pairs"], r["sources"], r["links_changed"]) == (1, 1, 3)
    assert r["rankers"]["title"]["recall@5"] == 1.0
    assert (cwd / "idx" / MARKER).is_file() and not (cwd / "idx" / "vault").exists()
    assert list((cwd / "tmp").iterdir()) == []  # the copy is gone
    assert tree(cwd / "vault") == vault_before
    # again into the same (marked) index folder, and without one: the index is temporary too
    again = eval_links(cwd, cache, "vault", "held.tsv", "--index-dir", "idx", "--json")
    assert again.returncode == 0, again.stderr
    plain = eval_links(cwd, cache, "vault", "held.tsv", "--variant", "removed")
    assert plain.returncode == 0, plain.stderr
    assert "held-out links from 1 cards" in plain.stdout
    assert list((cwd / "tmp").iterdir()) == []
    assert tree(cwd / "vault") == vault_before


def test_removing_the_copy_never_follows_a_symlink_out_of_the_vault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy keeps the vault's symlinks as links; deleting the copy deletes the links only."""
    import tempfile

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    vault = make(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Shared.md").write_text("# Shared\n")
    (vault / "linked").symlink_to(outside, target_is_directory=True)
    (vault / "Alias.md").symlink_to(outside / "Shared.md")
    before = tree(outside)
    with holdout_copy(vault, HELD, "mention") as hc:
        assert (hc.vault / "linked").is_symlink() and (hc.vault / "Alias.md").is_symlink()
    assert list(temp.iterdir()) == []
    assert tree(outside) == before
    assert (vault / "linked").is_symlink() and (vault / "Alias.md").is_symlink()
