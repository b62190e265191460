"""The index state's file: cards as columns (format 2), the older object-per-card format still
read, and a damaged file read as no state (a full reconcile, nothing lost)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zettel_lsp.index.state import (
    PENDING_FILE,
    STATE_FILE,
    FileState,
    IndexState,
    load_state,
    save_pending,
    save_state,
)


def a_state() -> IndexState:
    files = {
        "a.md": FileState(10, 1_700_000_000_123_456_789, "0" * 64, 3, dense=True),
        "sub/b.md": FileState(20, 2, "1" * 64, 1, dense=False, lang="de", ml=True),
        "c\udcff.md": FileState(0, 3, "2" * 64, 0, dense=True, lang="ru"),  # a lone surrogate
        "d.md": FileState(5, 4, "3" * 64, 2, dense=False, ml=True),
    }
    return IndexState(
        "/vault", "model", "chunker", dim=384, bm25_avg_len=71.5, files=files,
        skipped={"big.md": "too large"}, ml_model="use", uncompacted=7, store_layout=3,
    )  # fmt: skip


def test_the_state_round_trips_through_its_file(tmp_path: Path) -> None:
    state = a_state()
    save_state(tmp_path, state)
    data = json.loads((tmp_path / STATE_FILE).read_text(encoding="utf-8"))
    assert data["format"] == 2 and isinstance(data["files"]["paths"], list)
    back = load_state(tmp_path)
    assert back == state
    assert list(back.files) == list(state.files)  # the order too


def test_an_object_per_card_state_is_still_read_and_rewritten_as_columns(tmp_path: Path) -> None:
    state = a_state()
    old = state.to_json()
    old["format"] = 1
    old["files"] = {
        p: {"size": f.size, "mtime_ns": f.mtime_ns, "sha256": f.sha256, "chunks": f.chunks}
        | {"dense": f.dense}
        | ({"lang": f.lang} if f.lang != "en" else {})
        | ({"ml": True} if f.ml else {})
        for p, f in state.files.items()
    }
    (tmp_path / STATE_FILE).write_text(json.dumps(old), encoding="utf-8")
    # a pending file written by the older version too: its paths are still taken
    (tmp_path / PENDING_FILE).write_text(json.dumps({"format": 1, "pending": ["d.md"]}))
    back = load_state(tmp_path)
    assert back is not None and back.files == state.files and back.pending == ["d.md"]
    save_state(tmp_path, back)
    assert json.loads((tmp_path / STATE_FILE).read_text())["format"] == 2
    assert load_state(tmp_path) == back


def test_pending_paths_are_added_to_a_columns_state(tmp_path: Path) -> None:
    save_state(tmp_path, a_state())
    save_pending(tmp_path, ["a.md", "new.md"])
    back = load_state(tmp_path)
    assert back is not None and back.pending == ["a.md", "new.md"]


@pytest.mark.parametrize(
    "damage",
    [
        lambda f: f["size"].pop(),  # a column shorter than the paths
        lambda f: f.update(dense=f["dense"][:-1]),
        lambda f: f.update(dense="x" * len(f["paths"])),
        lambda f: f.update(lang={"99": "de"}),  # a row that does not exist
        lambda f: f.update(ml=[99]),
        lambda f: f["paths"].__setitem__(1, f["paths"][0]),  # the same path twice
        lambda f: f.pop("sha256"),
        lambda f: f.update(chunks="1234"),
        lambda f: f.update(lang=["de"]),  # not a mapping
        lambda f: f.update(paths=dict.fromkeys(f["paths"], 1)),
    ],
)
def test_a_damaged_columns_state_reads_as_none(tmp_path: Path, damage: object) -> None:
    data = a_state().to_json()
    damage(data["files"])  # type: ignore[operator]
    (tmp_path / STATE_FILE).write_text(json.dumps(data), encoding="utf-8")
    assert load_state(tmp_path) is None  # the caller reconciles the whole folder again
