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
    report = ScanReport()
    assert sorted(iter_note_paths(tmp_path, ["drafts/*"], report)) == ["a.md", "sub/b.markdown"]
    assert list(report.hidden) == [".hidden.md"]  # a dot-file is said; dot-folders are not
    assert "hidden file" in report.hidden[".hidden.md"]
    report = ScanReport()
    load_vault(tmp_path, ["drafts/*", ".hidden.md"], report=report)  # ignored by a glob: silent
    assert report.hidden == {} and report.skipped == 0
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
    # both linked folders lie outside the vault: followed only when allowed (issue #12)
    found = iter_note_paths(vault, report=report, follow_external_symlinks=True)
    assert sorted(found) == ["linked/e.md", "notes/n.md"]
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


# ---------------------------------------------------------------- issue #12: encodings, NULs


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_notes_are_decoded_by_their_bom(tmp_path: Path, codec: str) -> None:
    text = "# Café\r\nA note about [[Crème brûlée]] 🍮.\r\n"
    bom = "\ufeff".encode(codec)
    (tmp_path / "wide.md").write_bytes(bom + text.encode(codec))
    result = read_note(tmp_path / "wide.md")
    assert result.ok, result.problems
    assert result.text == "# Café\nA note about [[Crème brûlée]] 🍮.\n"
    assert not result.replaced_invalid_utf8 and result.problems == []
    card = load_card(tmp_path, "wide.md").card
    assert card is not None and [ln.target for ln in card.links] == ["Crème brûlée"]


def test_utf16_with_a_broken_last_code_unit_is_decoded_with_replacement(tmp_path: Path) -> None:
    (tmp_path / "odd.md").write_bytes(b"\xff\xfe" + "Text".encode("utf-16-le") + b"\x41")
    result = read_note(tmp_path / "odd.md")
    assert result.ok and result.replaced_invalid_utf8
    assert result.text == "Text\ufffd" and "UTF-16" in result.problems[0]


def test_a_small_note_with_one_stray_nul_is_kept_and_the_nul_replaced(tmp_path: Path) -> None:
    (tmp_path / "small.md").write_bytes(b"# Small\nSee [[Other]]\x00 here.\n")
    result = read_note(tmp_path / "small.md")
    assert result.ok, result.problems
    assert "\x00" not in result.text and result.text == "# Small\nSee [[Other]]\ufffd here.\n"
    assert any("NUL" in p and "U+FFFD" in p for p in result.problems)
    card = load_card(tmp_path, "small.md").card
    assert card is not None and [ln.target for ln in card.links] == ["Other"]


def test_binary_is_judged_by_proportion_of_nul_and_control_bytes(tmp_path: Path) -> None:
    prose = b"Plain prose about sourdough. " * 40  # 1,160 bytes
    cases = {
        "few-nuls.md": (prose + b"\x00" * 5 + prose, True),  # 0.2% NULs: text
        "many-nuls.md": (prose[:300] + b"\x00" * 20 + prose[:300], False),  # 3% NULs: binary
        "controls.md": (bytes(range(1, 9)) * 50 + b"some text", False),  # >30% controls
        "ansi.md": (b"\x1b[31mred\x1b[0m and\ttabs\x0c\n" * 50, True),  # ESC, tab, FF are text
    }
    for name, (data, is_text) in cases.items():
        (tmp_path / name).write_bytes(data)
        result = read_note(tmp_path / name)
        assert result.ok is is_text, (name, result.status, result.problems)
        if not is_text:
            assert result.status is ReadStatus.BINARY and "binary" in result.problems[0]


# ---------------------------------------------------------------- issue #12: FIFOs, dangling links


def test_fifo_and_dangling_symlink_are_reported_with_their_reason(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("[[pipe]]")
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "dangling.md").symlink_to(tmp_path / "gone" / "target.md")
    fifo = read_note(tmp_path / "pipe.md")
    assert fifo.status is ReadStatus.NOT_A_FILE and "FIFO" in fifo.problems[0]
    dangling = read_note(tmp_path / "dangling.md")
    assert dangling.status is ReadStatus.DANGLING_SYMLINK
    assert "dangling symlink" in dangling.problems[0] and "gone/target.md" in dangling.problems[0]
    report = ScanReport()
    cards, problems = load_vault(tmp_path, report=report)
    assert [c.path for c in cards] == ["good.md"] and report.skipped == 2
    text = "\n".join(problems)
    assert "pipe.md: " in text and "FIFO" in text
    assert "dangling.md: dangling symlink" in text


# ---------------------------------------------------------------- issue #12: links out of the vault


def make_vault_with_links(tmp_path: Path) -> Path:
    """A vault with symlinks leaving it (a file, a folder) and symlinks staying inside."""
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.md").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (outside / "folder" / "private.md").write_text("private text\n")
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "n.md").write_text("# N\n")
    (vault / ".store" / "kept").mkdir(parents=True)  # a dot-folder: reached only by a link
    (vault / ".store" / "kept" / "k.md").write_text("# K\n")
    (vault / "passwd.md").symlink_to(outside / "secret.md")
    (vault / "external").symlink_to(outside / "folder")
    (vault / "relative.md").symlink_to(Path("..") / "outside" / "secret.md")
    (vault / "alias.md").symlink_to(vault / "notes" / "n.md")  # inside: followed
    (vault / "kept").symlink_to(Path(".store") / "kept")  # inside: followed
    return vault


def test_symlinks_leaving_the_vault_are_not_followed_by_default(tmp_path: Path) -> None:
    vault = make_vault_with_links(tmp_path)
    outside = (tmp_path / "outside").resolve()
    report = ScanReport()
    assert sorted(iter_note_paths(vault, report=report)) == ["alias.md", "kept/k.md", "notes/n.md"]
    assert report.external_links == {
        "external": str(outside / "folder"),
        "passwd.md": str(outside / "secret.md"),
        "relative.md": str(outside / "secret.md"),
    }
    report = ScanReport()
    cards, problems = load_vault(vault, report=report)
    assert sorted(c.path for c in cards) == ["alias.md", "kept/k.md", "notes/n.md"]
    assert not any("root:x" in c.text for c in cards)
    line = next(p for p in problems if "passwd.md" in p)
    assert str(outside / "secret.md") in line and "followExternalSymlinks" in line
    assert any("external" in p and str(outside / "folder") in p for p in problems)
    assert report.skipped == 2  # the two note links; the folder link is a folder


def test_symlinks_leaving_the_vault_are_followed_when_allowed(tmp_path: Path) -> None:
    vault = make_vault_with_links(tmp_path)
    report = ScanReport()
    paths = sorted(iter_note_paths(vault, report=report, follow_external_symlinks=True))
    assert paths == [
        "alias.md", "external/private.md", "kept/k.md", "notes/n.md", "passwd.md", "relative.md",
    ]  # fmt: skip
    assert report.external_links == {}
    cards, _ = load_vault(vault, follow_external_symlinks=True)
    assert len(cards) == 6
