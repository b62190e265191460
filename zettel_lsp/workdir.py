"""Work folders: folders zettel-lsp makes for itself (a vault copy, an evaluation's index) and may
later reuse or delete.

The rule (issue #12): a folder is reused or deleted only when it carries the marker file that
zettel-lsp wrote when it made the folder, and never when it is, holds or is inside the vault (or
whatever folder it works on: a BEIR collection). A new or empty folder may be claimed; any other
folder is refused with :class:`WorkDirError` and left untouched. Paths are compared resolved, so
a symlink or ``..`` does not hide an overlap; a symlink itself is never deleted through.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

MARKER = ".zettel-lsp-work.json"  # in each work folder: a dot-file, never taken for a note
TOOL = "zettel-lsp"  # every tool name written in a marker starts with this


class WorkDirError(Exception):
    """A folder zettel-lsp refuses to use or delete (not made by it, or overlapping the vault)."""


def overlap(folder: Path, vault: Path) -> str | None:
    """``"is"``, ``"is inside"`` or ``"contains"`` when the folders overlap, else None."""
    folder, vault = folder.resolve(), vault.resolve()
    if folder == vault:
        return "is"
    if vault in folder.parents:
        return "is inside"
    if folder in vault.parents:
        return "contains"
    return None


def check_apart(
    work: Path, vault: Path, *, what: str = "work folder", vault_what: str = "vault"
) -> None:
    """Raise :class:`WorkDirError` when ``work`` is, holds or is inside ``vault``."""
    relation = overlap(work, vault)
    if relation is not None:
        raise WorkDirError(
            f"{what} {work.resolve()} {relation} the {vault_what} {vault.resolve()}; choose a "
            f"folder apart from the {vault_what} (zettel-lsp never writes to, moves or deletes "
            "anything in it)"
        )


def read_marker(folder: Path, *, tool: str | None = None, marker: str = MARKER) -> dict[str, Any]:
    """The content of ``folder``'s marker; raises :class:`WorkDirError` when it is missing,
    unreadable, or written by another tool than ``tool`` (None: any zettel-lsp tool)."""
    path = folder / marker
    if path.is_symlink() or not path.is_file():
        raise WorkDirError(
            f"{folder} was not made by zettel-lsp (no {marker}); it is left untouched"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise WorkDirError(f"{path} cannot be read ({exc}); remove the folder by hand") from exc
    made_by = data.get("tool") if isinstance(data, dict) else None
    if not isinstance(made_by, str) or not (
        made_by == tool if tool is not None else made_by.startswith(TOOL)
    ):
        raise WorkDirError(f"{path} was not written by {tool or TOOL}; folder untouched")
    assert isinstance(data, dict)
    return data


def claim_work_dir(
    path: Path,
    *,
    vault: Path | None,
    tool: str = TOOL,
    marker: str = MARKER,
    what: str = "work folder",
    vault_what: str = "vault",
) -> dict[str, Any]:
    """Check that ``path`` may be used as a work folder; touches nothing.

    Allowed: a folder apart from ``vault`` that is new, empty, or carries ``marker`` written by
    ``tool``. Returns the marker's content (``{}`` for a new or empty folder); raises
    :class:`WorkDirError` otherwise. Call :func:`write_marker` once every check has passed."""
    if vault is not None:
        check_apart(path, vault, what=what, vault_what=vault_what)
    path = path.resolve()
    if not path.exists():
        return {}
    if not path.is_dir():
        raise WorkDirError(f"{what} {path} is a file, not a folder")
    if not (path / marker).exists() and not (path / marker).is_symlink():
        if any(path.iterdir()):
            raise WorkDirError(
                f"{what} {path} is not empty and was not made by zettel-lsp (no {marker}); it is "
                "left untouched: choose a new or empty folder"
            )
        return {}
    return read_marker(path, tool=tool, marker=marker)


def make_private_dir(folder: Path) -> None:
    """Create ``folder`` and each missing parent readable by the user alone (0700): an index
    holds the notes' text. A folder that exists keeps its mode (a user's folder is theirs)."""
    for path in [*reversed(folder.parents), folder]:
        if not path.is_dir():
            with contextlib.suppress(FileExistsError):  # made meanwhile by another process
                path.mkdir(mode=0o700)


def write_marker(folder: Path, *, tool: str = TOOL, marker: str = MARKER, **fields: Any) -> None:
    """Create ``folder`` (and its parents) if needed and write its marker atomically: ``tool``,
    the folder's resolved ``path`` and ``fields``; a new folder is private (0700)."""
    make_private_dir(folder)
    folder = folder.resolve()
    data = {"tool": tool, "path": str(folder), **fields}
    target = folder / marker
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    tmp.replace(target)


def make_temp_work_dir(
    *, vault: Path | None, tool: str = TOOL, prefix: str = "zettel-lsp-"
) -> Path:
    """A new folder from :func:`tempfile.mkdtemp`, marked; refused (and removed again) when the
    temporary folder would be, hold or be inside ``vault`` (e.g. ``TMPDIR`` in the vault)."""
    work = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    if vault is not None and overlap(work, vault) is not None:
        work.rmdir()  # just made by mkdtemp: empty, ours
        check_apart(work, vault, what="temporary folder")
    write_marker(work, tool=tool)
    return work


def remove_work_dir(path: Path, *, tool: str | None = None, vault: Path | None = None) -> None:
    """Delete a work folder: only one carrying :data:`MARKER` (by ``tool``; None: any
    zettel-lsp tool) that names this very folder, never a symlink, never when it overlaps
    ``vault``. Nothing to do when it does not exist; raises :class:`WorkDirError` when refused."""
    if path.is_symlink():
        raise WorkDirError(f"{path} is a symbolic link; zettel-lsp does not delete through it")
    if not path.exists():
        return
    if not path.is_dir():
        raise WorkDirError(f"{path} is a file, not a folder zettel-lsp made; left untouched")
    if vault is not None:
        check_apart(path, vault)
    data = read_marker(path, tool=tool)
    made_for = data.get("path")
    if made_for is not None and made_for != str(path.resolve()):
        raise WorkDirError(
            f"the marker in {path} was made for {made_for} (the folder was moved or copied); "
            "left untouched: remove it by hand"
        )
    shutil.rmtree(path)
