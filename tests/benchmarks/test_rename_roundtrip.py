"""benchmarks/rename_roundtrip.py on examples/vault: renaming cards and back leaves the vault
byte-identical, the editor stand-in applies UTF-16 ranges on CRLF files, and a broken rename
is caught."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from benchmarks import rename_roundtrip
from tests.conftest import EXAMPLE_VAULT


def test_round_trip_on_the_example_vault_is_byte_identical() -> None:
    result = rename_roundtrip.run(EXAMPLE_VAULT, n=12, seed=3)
    assert result["renamed"] == 12
    assert result["link_edits_forward"] > 12
    assert result["byte_identical"], result["changed_files"]
    assert result["graph_counts_equal"], result["graph_count_diff"]
    assert result["backlinks_lost"] == []


def test_the_applier_counts_utf16_units_and_keeps_crlf(tmp_path: Path) -> None:
    f = tmp_path / "a.md"
    f.write_bytes("x\r\n😀 [[Old]] é\r\n".encode())
    pos = lambda c: types.Position(line=1, character=c)  # noqa: E731
    edit = types.TextEdit(range=types.Range(start=pos(5), end=pos(8)), new_text="New")
    rename_roundtrip.apply_text_edits(f, [edit])
    assert f.read_bytes() == "x\r\n😀 [[New]] é\r\n".encode()


def test_a_rename_that_loses_links_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "v"
    shutil.copytree(EXAMPLE_VAULT, vault)
    real = rename_roundtrip.plan_file_rename

    def no_links(*args: object, **kwargs: object) -> object:
        plan = real(*args, **kwargs)  # type: ignore[arg-type]
        plan.edits = {}
        return plan

    monkeypatch.setattr(rename_roundtrip, "plan_file_rename", no_links)
    result = rename_roundtrip.run(vault, n=5, seed=1)
    assert result["backlinks_lost"]
