"""The reconcile's decisions without a store or a file: what to read, what is gone, what moved."""

from __future__ import annotations

from zettel_lsp.index.plan import match_renames, plan
from zettel_lsp.index.state import FileState


def row(size: int, mtime: int, sha: str = "h") -> FileState:
    return FileState(size, mtime, sha, 1)


KNOWN = {"a.md": row(1, 10, "ha"), "b.md": row(2, 20, "hb"), "c.md": row(3, 30, "hc")}


def test_only_new_resized_touched_and_pending_notes_are_read() -> None:
    disk = {"a.md": (1, 10), "b.md": (2, 21), "c.md": (3, 30), "d.md": (4, 40)}
    p = plan(KNOWN, disk, pending={"c.md"})
    assert p.read == ["b.md", "c.md", "d.md"] and p.gone == set() and p.unchanged == 1
    assert plan(KNOWN, disk, rechunk_all=True).read == list(disk)


def test_gone_covers_indexed_pending_and_skipped_paths() -> None:
    disk = {"a.md": (1, 10)}
    p = plan(KNOWN, disk, pending={"x.md"}, skipped={"big.md"})
    assert p.gone == {"b.md", "c.md", "x.md", "big.md"} and p.read == []


def test_a_scoped_plan_judges_its_paths_only() -> None:
    p = plan(KNOWN, {"d.md": (4, 40)}, skipped={"big.md"}, scope={"b.md", "d.md", "big.md", "n.md"})
    assert p.gone == {"b.md", "big.md"} and p.read == ["d.md"]


def test_renames_pair_a_gone_card_with_a_new_one_of_the_same_text() -> None:
    known = {"old/x.md": row(1, 1, "same"), "old/y.md": row(1, 1, "same"), "z.md": row(1, 1, "z")}
    new = {"new/y.md": "same", "new/q.md": "same", "new/r.md": "same", "z2.md": "other"}
    got = match_renames(["old/x.md", "old/y.md", "z.md"], known, new)
    assert got["new/y.md"] == "old/y.md"  # the same file name first
    assert got["new/q.md"] == "old/x.md" and "new/r.md" not in got and "z2.md" not in got
    assert match_renames(["z.md"], known, {"z.md": "z"}) == {}  # not new: no rename
