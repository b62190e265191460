"""The reconcile's decisions, as pure functions of what the index knows and what is on disk:
which notes to read, which cards are gone, and which new cards are renamed old ones.
No file is read and no store is touched here (see :meth:`Indexer.sync` for the I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass

from zettel_lsp.index.state import FileState


@dataclass(frozen=True, slots=True)
class Plan:
    read: list[str]  # notes to read and hash: new, resized or touched, pending, or all
    gone: set[str]  # known paths (indexed, pending or skipped) that are no longer notes
    unchanged: int  # notes whose size and mtime match their row (not read)


def plan(
    known: Mapping[str, FileState],
    on_disk: Mapping[str, tuple[int, int]],
    *,
    pending: Set[str] = frozenset(),
    skipped: Set[str] = frozenset(),
    scope: Set[str] | None = None,
    rechunk_all: bool = False,
) -> Plan:
    """What a reconcile of ``scope`` (None: the whole vault) must do. ``known``: the indexed
    cards' rows; ``on_disk``: the notes found, with (size, mtime_ns); ``pending``: paths an
    interrupted pass may have half written (read again whatever their row says);
    ``rechunk_all``: the chunker changed, every note is read."""
    if scope is None:
        gone = (set(known) | set(pending) | set(skipped)) - set(on_disk)
    else:
        gone = {p for p in scope if p not in on_disk and (p in known or p in skipped)}
    read = [
        rel
        for rel, (size, mtime) in on_disk.items()
        if rechunk_all
        or rel in pending
        or rel not in known
        or known[rel].size != size
        or known[rel].mtime_ns != mtime
    ]
    return Plan(read, gone, len(on_disk) - len(read))


def match_renames(
    gone: Iterable[str], known: Mapping[str, FileState], new: Mapping[str, str]
) -> dict[str, str]:
    """New path -> old path: a gone card whose content hash reappears under a new path (``new``:
    path -> hash of the cards read, those already known excluded). Several cards may share a
    text (empty ones): each old path is used once, the one with the same file name first."""
    by_sha: dict[str, list[str]] = {}
    for g in sorted(gone):
        if g in known:
            by_sha.setdefault(known[g].sha256, []).append(g)
    renames: dict[str, str] = {}
    for rel, sha in new.items():
        olds = by_sha.get(sha)
        if olds and rel not in known:
            name = rel.rsplit("/", 1)[-1]
            old_path = next((o for o in olds if o.rsplit("/", 1)[-1] == name), olds[0])
            olds.remove(old_path)
            renames[rel] = old_path
    return renames
