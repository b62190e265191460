"""Reading files safely and walking a vault: bad input is reported, never raised, never lost."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zettel_lsp.notes.reader import ReadStatus, read_note
from zettel_lsp.notes.scan import ScanReport, is_ignored, iter_note_paths, load_card, load_vault


def test_invalid_utf8_is_decoded_with_replacement(tmp_path: Path) -> None:
    p = tmp_path / "bad.md"
    p.write_bytes(b"caf\xe9 [[Link]]\r\nline two\r\n")
    result = read_note(p)
    assert result.ok and result.replaced_invalid_utf8
    assert result.text == "caf\ufffd [[Link]]\nline two\n"
    assert "invalid UTF-8" in result.problems[0]
    card = load_card(tmp_path, "bad.md").card
    assert card is not None and card.decoded_with_replacement
    assert [ln.target for ln in card.links] == ["Link"]


def test_bom_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "bom.md").write_bytes(b"\xef\xbb\xbf# Title\n")
    assert read_note(tmp_path / "bom.md").text == "# Title\n"


def test_binary_file_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "img.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    result = read_note(tmp_path / "img.md")
    assert result.status is ReadStatus.BINARY and "binary" in result.problems[0]


def test_text_with_a_stray_nul_is_kept(tmp_path: Path) -> None:
    (tmp_path / "n.md").write_bytes(b"# Notes\n" + b"plain prose " * 200 + b"\x00 [[Link]]\n")
    result = read_note(tmp_path / "n.md")
    assert result.ok


def test_trailing_nul_padding_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "padded.md").write_bytes(b"Real text [[Link]]\n" + b"\x00" * 4000)
    result = read_note(tmp_path / "padded.md")
    assert result.ok and result.text == "Real text [[Link]]\n"
    assert "4,000 trailing NUL bytes ignored" in result.problems[0]


def test_huge_file_is_skipped_with_its_size(tmp_path: Path) -> None:
    (tmp_path / "big.md").write_text("x" * 2000)
    result = read_note(tmp_path / "big.md", max_bytes=1000)
    assert result.status is ReadStatus.TOO_LARGE
    assert "2,000 bytes" in result.problems[0] and "max_file_bytes" in result.problems[0]


def test_vanished_and_not_a_file(tmp_path: Path) -> None:
    assert read_note(tmp_path / "gone.md").status is ReadStatus.VANISHED
    (tmp_path / "dir.md").mkdir()
    assert read_note(tmp_path / "dir.md").status is ReadStatus.NOT_A_FILE
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    assert read_note(fifo).status is ReadStatus.NOT_A_FILE  # must not block on a FIFO


def test_symlink_loop_file_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "a.md").symlink_to(tmp_path / "b.md")
    (tmp_path / "b.md").symlink_to(tmp_path / "a.md")
    result = read_note(tmp_path / "a.md")
    assert result.status is ReadStatus.UNREADABLE and "symlink loop" in result.problems[0]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_permission_denied_is_unreadable(tmp_path: Path) -> None:
    p = tmp_path / "secret.md"
    p.write_text("x")
    p.chmod(0)
    try:
        assert read_note(p).status is ReadStatus.UNREADABLE
    finally:
        p.chmod(0o644)


def test_walk_skips_dot_folders_ignored_dirs_and_globs(tmp_path: Path) -> None:
    for rel in [
        "a.md",
        "sub/b.markdown",
        "sub/c.txt",
        ".obsidian/x.md",
        ".trash/y.md",
        ".git/z.md",
        "node_modules/pkg/readme.md",
        "drafts/d.md",
        ".hidden.md",
    ]:
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("x")
    assert sorted(iter_note_paths(tmp_path, ["drafts/*"])) == ["a.md", "sub/b.markdown"]
    assert is_ignored(".obsidian/x.md") and is_ignored("drafts/d.md", ["drafts/*"])
    assert not is_ignored("sub/b.md")


def test_walk_survives_symlink_loops_and_follows_linked_folders(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "n.md").write_text("x")
    (tmp_path / "notes" / "loop").symlink_to(tmp_path / "notes")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "e.md").write_text("x")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "notes").symlink_to(tmp_path / "notes")
    (vault / "linked").symlink_to(tmp_path / "elsewhere")
    (vault / "dangling").symlink_to(tmp_path / "nowhere")
    report = ScanReport()
    assert sorted(iter_note_paths(vault, report=report)) == ["linked/e.md", "notes/n.md"]
    assert any("symlink loop" in p for p in report.problems)


def test_load_vault_keeps_good_cards_and_reports_bad_ones(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("[[Other]]")
    (tmp_path / "Other.md").write_text("---\ntitle: [broken\n---\ntext")
    (tmp_path / "bin.md").write_bytes(b"\x00" * 100)
    (tmp_path / "huge.md").write_text("y" * 5000)
    (tmp_path / "latin1.md").write_bytes(b"r\xe9sum\xe9")
    report = ScanReport()
    cards, problems = load_vault(tmp_path, max_bytes=4000, report=report)
    assert sorted(c.path for c in cards) == ["Other.md", "good.md", "latin1.md"]
    assert report.skipped == 2  # bin.md and huge.md; the bad YAML and latin-1 cards load
    text = "\n".join(problems)
    for needle in ("bin.md", "huge.md", "latin1.md: invalid UTF-8", "Other.md: invalid YAML"):
        assert needle in text


def test_card_vanishing_between_listing_and_reading(tmp_path: Path) -> None:
    loaded = load_card(tmp_path, "was-here.md")
    assert loaded.card is None and loaded.read.status is ReadStatus.VANISHED
