"""List a vault's note files and load them as cards."""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from zettel_lsp.notes.model import Card
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.reader import DEFAULT_MAX_BYTES, ReadResult, read_note
from zettel_lsp.notes.title_rule import TitleSource

log = logging.getLogger(__name__)

NOTE_SUFFIXES = (".md", ".markdown")
# Folders never walked: dot-folders (.git, .obsidian, .trash, ...) are skipped by rule, these too.
DEFAULT_IGNORED_DIRS = frozenset({"node_modules", "__pycache__"})


@dataclass(slots=True)
class ScanReport:
    """What a walk of the vault skipped, and why (one line each)."""

    problems: list[str] = field(default_factory=list)
    skipped: int = 0  # note files not loaded (binary, too large, unreadable, vanished)
    # symlinks (to notes or folders) whose target is outside the vault, not followed:
    # vault-relative link path -> resolved target (see external_link_problem)
    external_links: dict[str, str] = field(default_factory=dict)
    # files and folders whose names are not UTF-8, not read: shown path (``\\xff``) -> message
    bad_names: dict[str, str] = field(default_factory=dict)
    # dot-files named like notes (``.draft.md``, ``..x.md``): hidden, not read: path -> message
    hidden: dict[str, str] = field(default_factory=dict)


def is_note_path(rel_path: str) -> bool:
    return rel_path.lower().endswith(NOTE_SUFFIXES) and utf8_name(rel_path)


def utf8_name(name: str) -> bool:
    """False for a file name with bytes that are not UTF-8 (Python keeps them as lone
    surrogates, which JSON, URIs and Qdrant payloads cannot carry)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_path(path: str) -> str:
    """A path for messages: undecodable bytes shown as ``\\xff``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def is_ignored(rel_path: str, ignore_globs: Iterable[str] = ()) -> bool:
    """True for paths in dot-folders, ignored folders, dot-files, or matching a user glob."""
    parts = rel_path.split("/")
    if any(p.startswith(".") for p in parts) or any(p in DEFAULT_IGNORED_DIRS for p in parts[:-1]):
        return True
    return any(fnmatch.fnmatch(rel_path, g) for g in ignore_globs)


def hidden_problem(path: str) -> str:
    """The message for a dot-file named like a note: hidden by convention (``ls``, Obsidian),
    like the editor lock and resource-fork files (``.#a.md``, ``._a.md``) that share the rule."""
    return f"{path}: hidden file (the name starts with '.'): not indexed; rename it to index it"


def external_target(root: str | Path, rel_path: str) -> str | None:
    """The resolved target of ``rel_path`` when it (or a folder on its way) is a symlink that
    leads outside the vault ``root`` to something that exists; None when the path stays inside
    (or is a dangling symlink: that is reported as such)."""
    root_real = os.path.realpath(os.fspath(root))
    target = os.path.realpath(os.path.join(root_real, rel_path))
    return None if _stays_inside(target, root_real) else target


def _stays_inside(path: str, root_real: str) -> bool:
    if path == root_real or path.startswith(root_real.rstrip(os.sep) + os.sep):
        return True
    return not os.path.lexists(path)  # dangling: nothing outside is read


def external_link_problem(link: str, target: str) -> str:
    """The message for a symlink that is not followed because it leaves the vault."""
    return (
        f"{link}: symlink to {target}, outside the vault: not followed (to index what it points "
        "to, set followExternalSymlinks, or --follow-external-symlinks)"
    )


def iter_note_paths(
    root: str | Path,
    ignore_globs: Iterable[str] = (),
    report: ScanReport | None = None,
    *,
    follow_external_symlinks: bool = False,
) -> Iterator[str]:
    """Vault-relative paths (forward slashes) of every note under ``root``, sorted per folder.

    Symlinked folders are followed once: a folder already visited (same device and inode) is
    skipped, so symlink loops end. Unreadable folders are reported and skipped. A symlink (to
    a note or a folder) whose target lies outside the vault is not followed unless
    ``follow_external_symlinks``; it is listed in ``report.external_links``.
    """
    globs = tuple(ignore_globs)
    report = report if report is not None else ScanReport()
    root_str = os.fspath(root)
    root_real = os.path.realpath(root_str)
    seen: set[tuple[int, int]] = set()
    try:
        st = os.stat(root_str)
        seen.add((st.st_dev, st.st_ino))
    except OSError as exc:
        report.problems.append(f"{root_str}: cannot read the vault folder ({exc.strerror})")
        return
    stack: list[tuple[str, str]] = [(root_str, "")]
    while stack:
        folder, rel_folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            report.problems.append(f"{folder}: folder skipped ({exc.strerror})")
            continue
        subdirs: list[tuple[str, str]] = []
        for entry in entries:
            name = entry.name
            if _dot_entry(entry, f"{rel_folder}{name}", globs, report):
                continue
            if not utf8_name(name):
                # Such a name cannot travel as JSON, in a URI or in a Qdrant payload.
                if name.lower().endswith(NOTE_SUFFIXES) or entry.is_dir():
                    report.bad_names[shown_path(f"{rel_folder}{name}")] = (
                        f"{shown_path(entry.path)}: the name is not valid UTF-8, skipped "
                        "(rename it to index it)"
                    )
                continue
            rel = f"{rel_folder}{name}"
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                is_dir = False
            # only a symlink can lead out (its target resolved, no stat for other entries)
            leaves = not follow_external_symlinks and _is_symlink(entry)
            if is_dir:
                if name in DEFAULT_IGNORED_DIRS or any(
                    fnmatch.fnmatch(rel + "/", g) for g in globs
                ):
                    continue
                if leaves and _left(entry.path, rel, root_real, report):
                    continue
                try:
                    dst = entry.stat(follow_symlinks=True)
                except OSError as exc:
                    report.problems.append(f"{entry.path}: folder skipped ({exc.strerror})")
                    continue
                key = (dst.st_dev, dst.st_ino)
                if key in seen:
                    if entry.is_symlink():
                        report.problems.append(
                            f"{entry.path}: symlink loop or repeated folder, skipped"
                        )
                    continue
                seen.add(key)
                subdirs.append((entry.path, rel + "/"))
            elif is_note_path(name) and not any(fnmatch.fnmatch(rel, g) for g in globs):
                if leaves and _left(entry.path, rel, root_real, report):
                    continue
                yield rel
        stack.extend(reversed(subdirs))


def _dot_entry(entry: os.DirEntry[str], rel: str, globs: Sequence[str], report: ScanReport) -> bool:
    """True for a name that starts with a dot: skipped. A dot-folder silently; a dot-file named
    like a note (unless a glob ignores it) is recorded in ``report.hidden``."""
    if not entry.name.startswith("."):
        return False
    try:
        is_dir = entry.is_dir(follow_symlinks=True)
    except OSError:
        is_dir = False
    if not is_dir and is_note_path(entry.name) and not any(fnmatch.fnmatch(rel, g) for g in globs):
        report.hidden[rel] = hidden_problem(entry.path)
    return True


def _is_symlink(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _left(path: str, rel: str, root_real: str, report: ScanReport) -> bool:
    """True (and recorded in ``report``) when the symlink ``path`` resolves outside the vault."""
    target = os.path.realpath(path)
    if _stays_inside(target, root_real):
        return False
    report.external_links[rel] = target
    return True


@dataclass(slots=True)
class LoadedCard:
    card: Card | None
    read: ReadResult


def load_card(
    root: str | Path,
    rel_path: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    title_source: TitleSource | str = TitleSource.AUTO,
) -> LoadedCard:
    """Read and parse one note; ``card`` is None when the file was skipped (``read.problems``).
    ``title_source`` picks the title rule (``titleSource``)."""
    result = read_note(os.path.join(os.fspath(root), rel_path), max_bytes)
    if not result.ok:
        return LoadedCard(None, result)
    card = parse_card(
        rel_path,
        result.text,
        decoded_with_replacement=result.replaced_invalid_utf8,
        title_source=title_source,
    )
    card.problems[:0] = result.problems
    return LoadedCard(card, result)


def load_vault(
    root: str | Path,
    ignore_globs: Iterable[str] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    report: ScanReport | None = None,
    title_source: TitleSource | str = TitleSource.AUTO,
    follow_external_symlinks: bool = False,
) -> tuple[list[Card], list[str]]:
    """Every readable card of the vault, plus one line per problem (skipped files, bad YAML,
    symlinks leaving the vault...). Pass ``report`` to also get the count of skipped files;
    ``title_source`` picks the title rule; ``follow_external_symlinks`` follows symlinks whose
    target is outside the vault."""
    report = report if report is not None else ScanReport()
    cards: list[Card] = []
    paths = iter_note_paths(
        root, ignore_globs, report, follow_external_symlinks=follow_external_symlinks
    )
    for rel in paths:
        loaded = load_card(root, rel, max_bytes, title_source=title_source)
        if loaded.card is None:
            report.problems.extend(loaded.read.problems)
            report.skipped += 1
            continue
        cards.append(loaded.card)
        report.problems.extend(loaded.card.problems)
    for rel, target in report.external_links.items():
        report.problems.append(external_link_problem(os.path.join(os.fspath(root), rel), target))
        if is_note_path(rel):
            report.skipped += 1
    for names in (report.bad_names, report.hidden):
        report.problems.extend(names.values())
        report.skipped += len(names)
    for line in report.problems:
        log.warning("%s", line)
    return cards, report.problems
