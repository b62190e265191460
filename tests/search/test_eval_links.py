"""Link hold-out: un-linking in a copy (both variants) leaves the original vault untouched."""

from __future__ import annotations

from pathlib import Path

from zettel_lsp.search.eval_links import HeldOut, unlink_copy


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
