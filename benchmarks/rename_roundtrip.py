"""Rename round trip: rename N random cards of a copy of a vault, then rename them back.

    python benchmarks/rename_roundtrip.py ../shared/data/vaults/obsidian-help-en [--n 100]
        [--seed 0] [--json] [--keep]
    python benchmarks/rename_roundtrip.py VAULT --latency [--extra-backlinks 500]

Works on a temporary copy (the vault itself is never touched). Each rename is the server's
computation (``zettel_lsp.graph.rename.plan_file_rename``, turned into an LSP ``WorkspaceEdit``
in UTF-16 by ``zettel_lsp.server.features.rename.workspace_edit``), applied to the files by a
small applier here that stands in for the editor: ``TextDocumentEdit`` ranges by line and
UTF-16 column on the file as it is on disk (CRLF, BOM and all), then the ``RenameFile``. The
graph is updated from the changed files after each rename, as the watcher would. Checks:

- after each forward rename, the card keeps every backlink (no link broke); cards that link to
  it *only after* the rename are listed too (an ambiguous link, one name for several cards,
  picks the card with the shortest path: a new file name can change which one it picks);
- at the end, every file of the copy is byte-identical to the start (same set of files);
- ``zettel-lsp graph COPY --json`` counts are the same before and after.

Also reports the edit computation time per rename (p50, p95, max) and the edit counts.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.rename import (
    RenameError,
    check_file_name,
    new_path_for,
    plan_file_rename,
)
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.reader import bom_encoding
from zettel_lsp.notes.scan import load_card, load_vault
from zettel_lsp.server.features.rename import workspace_edit

_LINE_END = ("\r\n", "\n", "\r")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


# ------------------------------------------------------------------ the editor's side


def _uri_path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def _decode(data: bytes) -> tuple[str, str, bytes]:
    found = bom_encoding(data)
    if found is not None:
        codec, _, skip = found
        return data[skip:].decode(codec, errors="surrogateescape"), codec, data[:skip]
    return data.decode("utf-8", errors="surrogateescape"), "utf-8", b""


def _lines(text: str) -> list[str]:
    """Lines with their endings, split as LSP does (``\\r\\n``, ``\\n``, ``\\r``)."""
    out: list[str] = []
    start = i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\r" or ch == "\n":
            end = i + 2 if text.startswith("\r\n", i) else i + 1
            out.append(text[start:end])
            start = i = end
        else:
            i += 1
    out.append(text[start:])
    return out


def _offset(lines: list[str], pos: types.Position) -> int:
    """A (line, UTF-16 column) position as a code-point offset into the joined lines."""
    before = sum(len(x) for x in lines[: pos.line])
    line = lines[pos.line]
    units = 0
    for i, ch in enumerate(line):
        if units >= pos.character:
            return before + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return before + len(line.rstrip("\r\n"))


def apply_text_edits(path: Path, edits: list[types.TextEdit]) -> None:
    data = path.read_bytes()
    text, codec, bom = _decode(data)
    lines = _lines(text)
    spans = sorted(
        ((_offset(lines, e.range.start), _offset(lines, e.range.end), e.new_text) for e in edits),
        key=lambda s: s[0],
    )
    out: list[str] = []
    done = 0
    for start, end, new in spans:
        if start < done:
            raise ValueError(f"overlapping edits in {path}")
        out += [text[done:start], new]
        done = end
    out.append(text[done:])
    path.write_bytes(bom + "".join(out).encode(codec, errors="surrogateescape"))


def apply_workspace_edit(edit: types.WorkspaceEdit) -> tuple[set[Path], tuple[Path, Path] | None]:
    """Apply ``edit`` like an editor; the changed files and the move."""
    touched: set[Path] = set()
    move: tuple[Path, Path] | None = None
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            path = _uri_path(change.text_document.uri)
            apply_text_edits(path, [e for e in change.edits if isinstance(e, types.TextEdit)])
            touched.add(path)
        elif isinstance(change, types.RenameFile):
            old, new = _uri_path(change.old_uri), _uri_path(change.new_uri)
            if new.exists() and new != old:
                raise FileExistsError(new)
            new.parent.mkdir(parents=True, exist_ok=True)
            os.rename(old, new)
            move = (old, new)
        else:
            raise ValueError(f"unexpected change {change!r}")
    for uri, edits in (edit.changes or {}).items():
        path = _uri_path(uri)
        apply_text_edits(path, edits)
        touched.add(path)
    return touched, move


# ------------------------------------------------------------------ the round trip


def snapshot(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def graph_counts(vault: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "zettel_lsp", "graph", str(vault), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(done.stdout)
    return {k: v for k, v in data.items() if isinstance(v, int) and not isinstance(v, bool)}


def _rel(root: Path, p: Path) -> str:
    return p.relative_to(root).as_posix()


def rename_once(
    root: Path, graph: LinkGraph, old: str, new: str, codec: PositionCodec
) -> tuple[float, int, int]:
    """One rename through a WorkspaceEdit; returns (seconds to compute, edits, files)."""
    t0 = time.perf_counter()
    plan = plan_file_rename(graph, old, new)

    def text_of(path: str) -> str | None:
        card = graph.cards.get(path)
        return card.text if card is not None else None

    edit = workspace_edit(root, plan, text_of, codec)
    seconds = time.perf_counter() - t0
    touched, move = apply_workspace_edit(edit)
    # what the watcher does: the moved card leaves its old path, changed files are re-read
    changed = {_rel(root, p) for p in touched}
    if move is not None:
        changed.discard(_rel(root, move[0]))
        loaded = load_card(root, _rel(root, move[1]))
        assert loaded.card is not None, loaded.read.problems
        graph.rename(_rel(root, move[0]), loaded.card)
    for rel in sorted(changed):
        loaded = load_card(root, rel)
        if loaded.card is not None:
            graph.upsert(loaded.card)
    return seconds, plan.edit_count, len(plan.edits)


def run(vault: Path, n: int, seed: int, keep: bool = False) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="rename-roundtrip-"))
    copy = tmp / vault.name
    try:
        shutil.copytree(vault, copy, symlinks=True)
        before = snapshot(copy)
        counts_before = graph_counts(copy)
        cards, _ = load_vault(copy)
        graph = LinkGraph.build(cards)
        codec = PositionCodec(types.PositionEncodingKind.Utf16)
        rng = random.Random(seed)
        renameable = []
        for path in sorted(graph.cards):
            try:  # a name the server refuses cannot be given back (e.g. "a#b.md")
                check_file_name(graph.cards[path].stem)
                renameable.append(path)
            except RenameError:
                pass
        chosen = rng.sample(renameable, min(n, len(renameable)))
        times: list[float] = []
        edits = files = 0
        refused: list[str] = []
        broken: list[str] = []
        gained: list[str] = []
        done: list[tuple[str, str]] = []
        for i, old in enumerate(chosen):
            new = new_path_for(old, f"Zz renamed {seed} {i:04d} é")
            backlinks = set(graph.backlinks(old))
            try:
                secs, e, f = rename_once(copy, graph, old, new, codec)
            except RenameError as exc:
                refused.append(f"{old}: {exc}")
                continue
            times.append(secs)
            edits += e
            files += f
            done.append((old, new))
            now = set(graph.backlinks(new))
            if backlinks - now:
                broken.append(f"{old}: no longer linked from {sorted(backlinks - now)}")
            if now - backlinks:
                gained.append(f"{old}: now also linked from {sorted(now - backlinks)}")
        for old, new in reversed(done):
            secs, e, f = rename_once(copy, graph, new, old, codec)
            times.append(secs)
        after = snapshot(copy)
        changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
        counts_after = graph_counts(copy)
        count_diff = {
            k: (counts_before.get(k), counts_after.get(k))
            for k in counts_before.keys() | counts_after.keys()
            if k != "seconds" and counts_before.get(k) != counts_after.get(k)
        }
        return {
            "vault": vault.name,
            "cards": len(graph.cards),
            "renamed": len(done),
            "not_renameable": len(graph.cards) - len(renameable),
            "refused": refused,
            "link_edits_forward": edits,
            "files_edited_forward": files,
            "backlinks_lost": broken,
            "backlinks_gained": gained,
            "byte_identical": not changed,
            "changed_files": changed[:20],
            "changed_file_count": len(changed),
            "graph_counts_equal": not count_diff,
            "graph_count_diff": count_diff,
            "graph_counts": counts_before,
            "compute_ms": {
                "p50": round(statistics.median(times) * 1000, 2) if times else None,
                "p95": round(percentile(times, 0.95) * 1000, 2) if times else None,
                "max": round(max(times) * 1000, 2) if times else None,
            },
            "copy": str(copy) if keep else None,
        }
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def latency(
    vault: Path, runs: int = 10, prepares: int = 300, seed: int = 0, extra_backlinks: int = 0
) -> dict[str, Any]:
    """In-process timings on the vault itself (read only): the rename edit (plan and UTF-16
    ``WorkspaceEdit``) of the card with the most links to it, and prepareRename (the open card
    parsed, as every request does, then the target under the cursor) at random links.
    ``extra_backlinks`` adds that many cards (in memory only: text of real cards plus links to
    that card in several forms) so the card has more backlinks than any the vault holds."""
    from types import SimpleNamespace

    from zettel_lsp.notes.positions import LineIndex
    from zettel_lsp.server.features.rename import target_at

    cards, _ = load_vault(vault)
    graph = LinkGraph.build(cards)
    incoming: dict[str, int] = {}
    for path in graph.cards:
        for rl in graph.links_of(path):
            if rl.target is not None and rl.target != path:
                incoming[rl.target] = incoming.get(rl.target, 0) + 1
    top = max(incoming, key=lambda p: (incoming[p], p))
    if extra_backlinks:
        from urllib.parse import quote

        donors = sorted(graph.cards)
        stem = graph.cards[top].stem
        forms = f"[[{stem}]], [[{stem}#Intro|see]], ![[{stem}]], [m](../{quote(top)})"
        extra = [
            parse_card(
                f"zz-synthetic/Backlink {i}.md",
                f"{graph.cards[donors[(i * 7919) % len(donors)]].text}\n\n{forms}\n",
            )
            for i in range(extra_backlinks)
        ]
        graph = LinkGraph.build([*graph.cards.values(), *extra])  # one build, not 500 updates
        incoming[top] = sum(
            1 for src in graph.backlinks(top) for rl in graph.links_of(src) if rl.target == top
        )
    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    new = new_path_for(top, "Zz latency probe")

    def text_of(path: str) -> str | None:
        card = graph.cards.get(path)
        return card.text if card is not None else None

    times: list[float] = []
    edits = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        plan = plan_file_rename(graph, top, new)
        workspace_edit(vault, plan, text_of, codec)
        times.append(time.perf_counter() - t0)
        edits = plan.edit_count
    rng = random.Random(seed)
    with_links = sorted(p for p in graph.cards if graph.cards[p].links)
    prep: list[float] = []
    for _ in range(prepares):
        card = graph.cards[rng.choice(with_links)]
        link = rng.choice(card.links)
        t0 = time.perf_counter()
        parsed = parse_card(card.path, card.text)
        doc = SimpleNamespace(card=parsed, rel=card.path, index=LineIndex(card.text))
        with contextlib.suppress(RenameError):
            target_at(doc, link.span.start + 2, graph)  # type: ignore[arg-type]
        prep.append(time.perf_counter() - t0)
    return {
        "vault": vault.name,
        "cards": len(graph.cards),
        "card": top,
        "links_to_it": incoming[top],
        "cards_linking": len(graph.backlinks(top)),
        "edits": edits,
        "rename_ms": {
            "median": round(statistics.median(times) * 1000, 1),
            "max": round(max(times) * 1000, 1),
        },
        "prepare_rename_ms": {
            "p50": round(statistics.median(prep) * 1000, 2),
            "p95": round(percentile(prep, 0.95) * 1000, 2),
            "max": round(max(prep) * 1000, 2),
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--n", type=int, default=100, help="how many cards to rename")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--keep", action="store_true", help="keep the copy (its path is printed)")
    ap.add_argument(
        "--latency",
        action="store_true",
        help="instead: time the rename of the most linked card and prepareRename (read only)",
    )
    ap.add_argument(
        "--extra-backlinks",
        type=int,
        default=0,
        help="with --latency: give the card this many more linking cards (in memory)",
    )
    args = ap.parse_args(argv)
    if args.latency:
        found = latency(args.vault, seed=args.seed, extra_backlinks=args.extra_backlinks)
        print(json.dumps(found, ensure_ascii=False, indent=2))
        return 0
    result = run(args.vault, args.n, args.seed, args.keep)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        ok = (
            result["byte_identical"]
            and result["graph_counts_equal"]
            and not result["backlinks_lost"]
        )
        print(
            f"{result['vault']}: {result['renamed']} of {result['cards']} cards renamed and back, "
            f"{result['link_edits_forward']} link edits in {result['files_edited_forward']} "
            f"files; byte-identical: {result['byte_identical']}, graph counts equal: "
            f"{result['graph_counts_equal']}, backlinks lost: {len(result['backlinks_lost'])}, "
            f"gained: {len(result['backlinks_gained'])}; "
            f"compute p50 {result['compute_ms']['p50']} ms, p95 {result['compute_ms']['p95']} ms,"
            f" max {result['compute_ms']['max']} ms"
        )
        for line in result["refused"] + result["backlinks_lost"] + result["changed_files"]:
            print("  " + line)
        if result["graph_count_diff"]:
            print("  graph counts: " + json.dumps(result["graph_count_diff"]))
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
