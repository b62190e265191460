"""Chaos benchmark (issue #12, "keep proving it"): kill the indexer, storm the server, then prove
the index still equals the vault.

    python benchmarks/chaos.py VAULT [--kills 20] [--storm 1000] [--bursts 1] [--seed 0]
        [--work DIR] [--cache-dir DIR] [--sample 200] [--hostile] [--out chaos.json]
        [--scenarios all] [--targets index-watch,server] [--settle-timeout 60]

VAULT is copied to a fresh work folder (``--work``, new or empty, default a new temp folder) and
never touched.

1. **Kill loop** (``--kills N``): N times, ``python -m zettel_lsp index COPY --index-dir IDX``
   runs under a pseudo-terminal (its progress line shows the phase) and is killed with SIGKILL
   at a random moment of a chosen phase: scan (the process holds the folder lock, which names
   its pid, and has not printed progress yet), lexical (cards being chunked and stored) or dense
   (embedding). Between kills the copy is mutated: edits, renames (some changing the title),
   moves into folders, deletes, creates; before a lexical kill, a bulk edit makes the lexical
   phase long enough to land in. Then a clean index runs to the end, and the verifier
   (``zettel_lsp.index.verify``) checks cards, chunks, keyword probes and re-embedded vectors
   (every card the loop touched, plus ``--sample`` others).
2. **Edit storm** (``--storm OPS``): the real language server runs over stdio on the copy (index
   and cache folders through ``initializationOptions``); once it is ready, OPS random file
   operations are applied as fast as Python makes them: atomic saves (temp file + rename),
   in-place rewrites, creates, deletes, renames, moves, folder renames, swaps of two files,
   rename chains (b->c then a->b). Then ``zettel.status`` and the saved state
   (:func:`~zettel_lsp.index.verify.quick_check`) are polled every 0.1 s: *lexically
   consistent* is the first poll at which only vectors are missing; *consistent* is the server
   ready with every card embedded and the saved state equal to the folder, for
   :data:`SETTLE_SECONDS` in a row (the time to consistency is measured to the start of that
   stretch). ``--bursts B`` splits the OPS into B bursts, each waited out (median, p95). The
   server is stopped with shutdown/exit, the index opened as it is (no sync) and the full
   verifier run (vectors of every card the storm touched, renamed ones included).

3. **Watcher scenarios** (``--scenarios``, default all, ``none`` skips them): changes during
   the initial sync, a folder replacing a note, a branch switch (each against ``index --watch``
   and the server) and a read-only second server, on a git copy of the vault with a second
   branch; each ends with the time to consistency, the exit code and the verifier
   (:mod:`chaos_watch`).

``--hostile`` adds same-size edits with the old mtime restored (no editor makes them; ``cp -p``
and ``rsync -t`` can). Prints a summary; ``--out`` writes everything as JSON (with the operation
journal, so a mismatch can be traced to the operations that touched its card). Exit 1 on any
mismatch.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import pty
import random
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from zettel_lsp.index.chunker import chunk_cards
from zettel_lsp.index.embedders import Embedder, make_embedder
from zettel_lsp.index.sync import IndexSettings
from zettel_lsp.index.verify import HashMemo, VerifyReport, quick_check, verify_folder
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.reader import read_note
from zettel_lsp.notes.scan import iter_note_paths

try:  # run as a script (benchmarks/ on sys.path) or imported from the project root (tests)
    import chaos_watch  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - the tests' import path
    from benchmarks import chaos_watch

PHASE_LABELS = {"scanning": "scan", "files indexed": "lexical", "chunks embedded": "dense"}
SETTLE_SECONDS = 2.0  # consistency must hold this long (the watcher debounces 500 ms)
CONSISTENCY_TIMEOUT = 900.0
READY_TIMEOUT = 1800.0
POLL_SECONDS = 0.1
BULK_EDITS = 200  # cards edited before a lexical kill, so the lexical phase lasts
_WORDS = re.compile(r"[A-Za-z]{4,12}")


# ---------------------------------------------------------------------- file operations


@dataclass
class Mutator:
    """Random file operations on the vault copy, with a journal of what touched which path."""

    vault: Path
    rng: random.Random
    vocabulary: list[str]
    journal: list[dict[str, Any]] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)  # current paths of cards changed or moved
    moved: set[str] = field(default_factory=set)  # current paths of cards renamed or moved
    counter: int = 0
    stage: str = ""
    # the notes and folders, kept up to date by the operations (a rescan per operation would
    # make the storm a slow drizzle on a large vault); None: scan again
    _notes: set[str] | None = field(default=None, repr=False)
    _folders: list[str] | None = field(default=None, repr=False)

    def notes(self) -> list[str]:
        if self._notes is None:
            self._notes = set(iter_note_paths(self.vault))
        return sorted(self._notes)

    def _paths_changed(self, removed: tuple[str, ...], added: tuple[str, ...]) -> None:
        if self._notes is not None:
            self._notes.difference_update(removed)
            self._notes.update(added)

    def _rescan(self) -> None:
        self._notes = None
        self._folders = None

    def folders(self) -> list[str]:
        if self._folders is None:
            self._folders = self._scan_folders()
        return self._folders

    def _scan_folders(self) -> list[str]:
        out = []
        for root, dirs, _ in os.walk(self.vault):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            rel = os.path.relpath(root, self.vault)
            if rel != ".":
                out.append(rel.replace(os.sep, "/"))
        return sorted(out)

    def _log(self, op: str, *paths: str) -> None:
        self.journal.append({"stage": self.stage, "n": len(self.journal), "op": op, "paths": paths})

    def _words(self, n: int) -> str:
        return " ".join(self.rng.choice(self.vocabulary) for _ in range(n))

    def _fresh_name(self, folder: str = "") -> str:
        self.counter += 1
        name = f"{self._words(2)} chaos {self.counter}.md"
        return f"{folder}/{name}" if folder else name

    def _paragraph(self) -> str:
        return self._words(self.rng.randint(8, 40)).capitalize() + "."

    def _body(self) -> str:
        kind = self.rng.random()
        if kind < 0.1:
            return ""  # front matter only / empty
        if kind < 0.25:  # long: several chunks
            return "\n\n".join(
                f"## {self._words(2)}\n\n" + "\n\n".join(self._paragraph() for _ in range(6))
                for _ in range(self.rng.randint(2, 5))
            )
        return "\n\n".join(self._paragraph() for _ in range(self.rng.randint(1, 4)))

    def _moved(self, old: str, new: str) -> None:
        self._paths_changed((old,), (new,))
        self.touched.discard(old)
        self.touched.add(new)
        self.moved.discard(old)
        self.moved.add(new)

    # -- the operations; each returns False when it had nothing to work on

    def create(self) -> bool:
        folder = self.rng.choice(["", "", *self.folders()])
        rel = self._fresh_name(folder)
        text = self._body()
        if self.rng.random() < 0.3:
            text = f"---\ntitle: {self._words(3)}\ndesc: {self._words(5)}\n---\n{text}"
        (self.vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.vault / rel).write_text(text, encoding="utf-8")
        self._paths_changed((), (rel,))
        self.touched.add(rel)
        self._log("create", rel)
        return True

    def _pick(self, notes: list[str] | None = None) -> str | None:
        notes = notes if notes is not None else self.notes()
        return self.rng.choice(notes) if notes else None

    def _read(self, rel: str) -> str:
        return (self.vault / rel).read_text(encoding="utf-8", errors="replace")

    def _edited(self, text: str) -> str:
        r = self.rng.random()
        lines = text.split("\n")
        if r < 0.4:
            return text.rstrip("\n") + "\n\n" + self._paragraph() + "\n"
        if r < 0.7 and len(lines) > 1:
            i = self.rng.randrange(len(lines))
            lines.insert(i, self._paragraph())
            return "\n".join(lines)
        if r < 0.85 and len(lines) > 2:
            del lines[self.rng.randrange(len(lines))]
            return "\n".join(lines)
        return self._paragraph() + "\n" + text

    def edit_in_place(self) -> bool:
        rel = self._pick()
        if rel is None:
            return False
        text = self._edited(self._read(rel))
        with open(self.vault / rel, "r+", encoding="utf-8") as fh:  # truncate + write, same inode
            fh.seek(0)
            fh.truncate()
            fh.write(text)
        self.touched.add(rel)
        self._log("edit-in-place", rel)
        return True

    def atomic_save(self) -> bool:
        rel = self._pick()
        if rel is None:
            return False
        path = self.vault / rel
        tmp = path.with_name(f".{path.name}.{self.counter}.tmp")
        self.counter += 1
        tmp.write_text(self._edited(self._read(rel)), encoding="utf-8")
        os.replace(tmp, path)
        self.touched.add(rel)
        self._log("atomic-save", rel)
        return True

    def delete(self) -> bool:
        rel = self._pick()
        if rel is None:
            return False
        (self.vault / rel).unlink()
        self._paths_changed((rel,), ())
        self.touched.discard(rel)
        self.moved.discard(rel)
        self._log("delete", rel)
        return True

    def rename(self) -> bool:
        """Same folder, new name (the title changes unless front matter sets it)."""
        rel = self._pick()
        if rel is None:
            return False
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        new = self._fresh_name(folder)
        os.rename(self.vault / rel, self.vault / new)
        self._moved(rel, new)
        self._log("rename", rel, new)
        return True

    def rename_retitle(self) -> bool:
        """A rename whose front-matter title changes too (Dendron cards take it from there)."""
        rel = self._pick()
        if rel is None:
            return False
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        new = self._fresh_name(folder)
        text = self._read(rel)
        title = self._words(3)
        text, n = re.subn(r"(?m)^title:.*$", f"title: {title}", text, count=1)
        os.rename(self.vault / rel, self.vault / new)
        if n:
            (self.vault / new).write_text(text, encoding="utf-8")
        self._moved(rel, new)
        self._log("rename-retitle", rel, new)
        return True

    def move(self) -> bool:
        rel = self._pick()
        if rel is None:
            return False
        folder = self.rng.choice(
            ["moved", "archive/old", "topics/" + self._words(1), *self.folders()]
        )
        new = f"{folder}/{rel.rsplit('/', 1)[-1]}"
        if (self.vault / new).exists():
            return False
        if not (self.vault / folder).is_dir():
            (self.vault / folder).mkdir(parents=True)
            self._folders = None
        os.rename(self.vault / rel, self.vault / new)
        self._moved(rel, new)
        self._log("move", rel, new)
        return True

    def folder_rename(self) -> bool:
        folders = [f for f in self.folders() if any((self.vault / f).iterdir())]
        if not folders:
            return False
        old = self.rng.choice(folders)
        parent = old.rsplit("/", 1)[0] + "/" if "/" in old else ""
        self.counter += 1
        new = f"{parent}{self._words(1)}-{self.counter}"
        os.rename(self.vault / old, self.vault / new)
        self._rescan()
        for p in list(self.touched):
            if p.startswith(old + "/"):
                self._moved(p, new + p[len(old) :])
        # every card in it moved: their vectors must follow
        inside = [p for p in self.notes() if p.startswith(new + "/")]
        self.touched.update(inside)
        self.moved.update(inside)
        self._log("folder-rename", old, new)
        return True

    def swap(self) -> bool:
        notes = self.notes()
        if len(notes) < 2:
            return False
        a, b = self.rng.sample(notes, 2)
        tmp = self.vault / f".swap-{self.counter}.tmp"
        self.counter += 1
        os.rename(self.vault / a, tmp)
        os.rename(self.vault / b, self.vault / a)
        os.rename(tmp, self.vault / b)
        self.touched.update((a, b))
        self.moved.update((a, b))
        self._log("swap", a, b)
        return True

    def rename_chain(self) -> bool:
        """a->b->c: b moves to a new name c, then a takes b's name."""
        notes = self.notes()
        if len(notes) < 2:
            return False
        a, b = self.rng.sample(notes, 2)
        folder = b.rsplit("/", 1)[0] if "/" in b else ""
        c = self._fresh_name(folder)
        os.rename(self.vault / b, self.vault / c)
        os.rename(self.vault / a, self.vault / b)
        self._paths_changed((a,), (c,))
        self.touched.discard(a)
        self.touched.update((b, c))
        self.moved.discard(a)
        self.moved.update((b, c))
        self._log("rename-chain", a, b, c)
        return True

    def same_stat_edit(self) -> bool:
        """Hostile (``--hostile``): one letter changed in place, size kept, mtime restored (as
        ``cp -p``, ``rsync -t`` or an archive extraction leave a file): invisible to a
        size + mtime check."""
        rel = self._pick()
        if rel is None:
            return False
        path = self.vault / rel
        data = path.read_bytes()
        spots = [i for i, c in enumerate(data) if 97 <= c <= 122]  # ASCII a-z
        if not spots:
            return False
        st = path.stat()
        i = self.rng.choice(spots)
        new = bytes([97 + (data[i] - 97 + self.rng.randint(1, 25)) % 26])
        with open(path, "r+b") as fh:
            fh.seek(i)
            fh.write(new)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        self.touched.add(rel)
        self._log("same-stat-edit", rel)
        return True

    def random_op(self, ops: dict[str, float]) -> str:
        names = list(ops)
        weights = [ops[n] for n in names]
        for _ in range(10):
            name = self.rng.choices(names, weights)[0]
            if getattr(self, name.replace("-", "_"))():
                return name
        return "none"


KILL_OPS = {
    "edit-in-place": 3,
    "atomic-save": 2,
    "create": 2,
    "delete": 1,
    "rename": 1.5,
    "rename-retitle": 1.5,
    "move": 1,
}
STORM_OPS = {
    "atomic-save": 3,
    "edit-in-place": 3,
    "create": 2,
    "delete": 1.5,
    "rename": 1.5,
    "rename-retitle": 1,
    "move": 1,
    "folder-rename": 0.3,
    "swap": 0.7,
    "rename-chain": 0.7,
}


HOSTILE_OPS = {"same-stat-edit": 0.5}


def vocabulary(vault: Path, rng: random.Random) -> list[str]:
    words: set[str] = set()
    paths = sorted(iter_note_paths(vault))
    for rel in rng.sample(paths, min(100, len(paths))):
        res = read_note(vault / rel)
        if res.ok:
            words.update(w.lower() for w in _WORDS.findall(res.text))
    return sorted(words) or ["alpha", "beta", "gamma", "delta"]


# ---------------------------------------------------------------------- kill loop


def index_command(vault: Path, index_dir: Path, cache_dir: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "zettel_lsp", "index", str(vault),
            "--index-dir", str(index_dir), "--cache-dir", str(cache_dir), *extra]  # fmt: skip


def run_and_kill(
    cmd: list[str], target: str, rng: random.Random, index_dir: Path, scan_window: float
) -> dict[str, Any]:
    """Run ``cmd`` with stderr on a pseudo-terminal; SIGKILL it in the ``target`` phase.

    Phases: *start-up* (imports, model load), *scan* (the process holds the index folder's lock,
    which it writes its pid into, and opens the shard, scans and compares; no progress line
    yet), *lexical* and *dense* (from the progress line). A scan kill waits for the lock, then
    picks a moment within ``scan_window`` seconds (the last run's lock-to-progress time)."""
    master, slave = pty.openpty()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, close_fds=True
    )
    os.close(slave)
    phase = "start-up"
    lock_at: float | None = None
    first_progress: float | None = None
    kill_at: float | None = None
    buf = ""
    killed = False
    try:
        while True:
            now = time.monotonic()
            if kill_at is not None and now >= kill_at:
                proc.send_signal(signal.SIGKILL)
                killed = True
                break
            if proc.poll() is not None:
                break
            if lock_at is None and _holds_lock(index_dir, proc.pid):
                lock_at = now
                if phase == "start-up":
                    phase = "scan"
                if kill_at is None and target == "scan":
                    kill_at = now + rng.uniform(0, scan_window)
            wait = 0.01 if kill_at is None else max(0.0, min(0.01, kill_at - now))
            ready, _, _ = select.select([master], [], [], wait)
            if ready:
                try:
                    data = os.read(master, 65536).decode("utf-8", "replace")
                except OSError:
                    data = ""
                buf = (buf + data)[-4096:]
                seen = [
                    (buf.rfind(label), name) for label, name in PHASE_LABELS.items() if label in buf
                ]
                if seen:
                    now_phase = max(seen)[1]
                    if now_phase == "scan":  # the scan's progress line: the comparison is done
                        now_phase = "lexical"
                    if first_progress is None:
                        first_progress = time.monotonic() - t0
                    if now_phase != phase:
                        phase = now_phase
                        if kill_at is None and phase == target:
                            delay = rng.uniform(0, 0.3 if target == "lexical" else 5.0)
                            kill_at = time.monotonic() + delay
                        elif kill_at is None and target == "lexical" and phase == "dense":
                            kill_at = time.monotonic()  # lexical was too short to catch
    finally:
        proc.wait()
        os.close(master)
    return {
        "target": target,
        "phase_at_kill": phase if killed else "finished",
        "killed": killed,
        "seconds": round(time.monotonic() - t0, 2),
        "lock_taken_s": None if lock_at is None else round(lock_at - t0, 2),
        "first_progress_s": None if first_progress is None else round(first_progress, 2),
        "returncode": proc.returncode,
    }


def _holds_lock(index_dir: Path, pid: int) -> bool:
    """Whether process ``pid`` holds the index folder (its lock file names it)."""
    try:
        return (index_dir / "lock").read_text(encoding="utf-8").strip() == str(pid)
    except OSError:
        return False


def kill_loop(
    args: argparse.Namespace, vault: Path, index_dir: Path, cache: Path, mut: Mutator
) -> dict[str, Any]:
    rng = mut.rng
    # the first kill interrupts the initial build; the others in turn, in a random order
    rest = [["scan", "lexical", "dense"][i % 3] for i in range(args.kills - 1)]
    rng.shuffle(rest)
    targets = ["lexical", *rest][: args.kills]
    rounds: list[dict[str, Any]] = []
    scan_window = 1.0
    t0 = time.monotonic()
    for i, target in enumerate(targets):
        mut.stage = f"kill {i}"
        ops: dict[str, int] = {}
        if i:
            for _ in range(rng.randint(5, 30)):
                op = mut.random_op(KILL_OPS)
                ops[op] = ops.get(op, 0) + 1
            if target == "lexical":
                for _ in range(BULK_EDITS):
                    mut.edit_in_place()
                ops["bulk-edit"] = BULK_EDITS
        cmd = index_command(vault, index_dir, cache)
        result = run_and_kill(cmd, target, rng, index_dir, scan_window)
        if result["first_progress_s"] and result["lock_taken_s"]:
            scan_window = max(0.05, result["first_progress_s"] - result["lock_taken_s"])
        result["ops_before"] = ops
        rounds.append(result)
        print(
            f"kill {i + 1:>2}/{len(targets)}: target {target:<7} killed in "
            f"{result['phase_at_kill']:<13} after {result['seconds']:6.2f} s "
            f"({sum(ops.values())} ops before)",
            file=sys.stderr,
        )
    t_clean = time.monotonic()
    clean = subprocess.run(
        index_command(vault, index_dir, cache, "--json"), capture_output=True, text=True
    )
    clean_s = time.monotonic() - t_clean
    summary: dict[str, Any] = {}
    if clean.returncode == 0:
        data = json.loads(clean.stdout)
        keys = ("cards", "chunks", "indexed", "new", "changed", "renamed", "deleted")
        summary = {k: data.get(k) for k in (*keys, "embedded", "reused_vectors")}
    else:
        summary = {"returncode": clean.returncode, "stderr": clean.stderr[-2000:]}
    phases: dict[str, int] = {}
    for r in rounds:
        phases[r["phase_at_kill"]] = phases.get(r["phase_at_kill"], 0) + 1
    report = run_verify(vault, index_dir, cache, args, mut.touched)
    return {
        "touched_cards": len(mut.touched),
        "moved_cards": moved_summary(report, mut.moved, vault),
        "kills": len(rounds),
        "killed_by_phase": phases,
        "rounds": rounds,
        "loop_seconds": round(t_clean - t0, 1),
        "clean_index": summary | {"seconds": round(clean_s, 1)},
        "verify": report.to_json(),
        "ok": report.ok and clean.returncode == 0,
    }


def moved_summary(report: VerifyReport, moved: set[str], vault: Path) -> dict[str, Any]:
    """Renamed/moved cards (all re-embedded by the verifier: they are in its focus) and the
    mismatches among them, by kind."""
    alive = {p for p in moved if (vault / p).is_file()}
    bad: dict[str, list[str]] = {}
    for m in report.mismatches:
        if m.path in alive:
            bad.setdefault(m.kind, []).append(m.path)
    return {
        "cards": len(alive),
        "mismatched_cards": len({p for paths in bad.values() for p in paths}),
        "mismatches_by_kind": {k: len(v) for k, v in sorted(bad.items())},
    }


def run_verify(
    vault: Path, index_dir: Path, cache: Path, args: argparse.Namespace, touched: set[str]
) -> VerifyReport:
    """Open the index as it was left (no sync) and run the full verifier."""
    focus = {p for p in touched if (vault / p).is_file()}
    report = verify_folder(
        vault, index_dir, IndexSettings(), cache_dir=cache, sample=args.sample, seed=args.seed,
        focus=focus,
    )  # fmt: skip
    print(report.format(), file=sys.stderr)
    return report


# ---------------------------------------------------------------------- edit storm


def expected_totals(vault: Path, embedder: Embedder, chunk_tokens: int) -> tuple[int, int]:
    """(cards, chunks) the index must hold for the vault as it is on disk."""
    cards = []
    for rel in iter_note_paths(vault):
        res = read_note(vault / rel)
        if res.ok:
            cards.append(
                parse_card(rel, res.text, decoded_with_replacement=res.replaced_invalid_utf8)
            )
    chunks = chunk_cards(cards, embedder.count_tokens, chunk_tokens)
    return len(cards), sum(len(c) for c in chunks)


async def status(client: LanguageClient) -> dict[str, Any]:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="zettel.status", arguments=[])
    )
    vaults = result.get("vaults") if isinstance(result, dict) else None
    return dict(vaults[0]) if vaults else {}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ranked = sorted(values)
    return ranked[max(0, min(len(ranked) - 1, math.ceil(q / 100 * len(ranked)) - 1))]


async def storm_burst(
    client: LanguageClient,
    mut: Mutator,
    size: int,
    vault: Path,
    index_dir: Path,
    counts: dict[str, int],
) -> dict[str, Any]:
    """``size`` random operations as fast as they go, then poll until the server's index is
    consistent with the folder: status (ready, every card embedded, no chunk waiting, as many
    cards as readable notes) and the saved state (:func:`quick_check`: every note with its
    current hash, nothing else, nothing pending), holding for :data:`SETTLE_SECONDS`."""
    t_ops = time.monotonic()
    for i in range(size):
        op = mut.random_op(STORM_OPS)
        counts[op] = counts.get(op, 0) + 1
        if i % 50 == 49:
            await asyncio.sleep(0)  # let the client read the server's messages
    t_end = time.monotonic()
    out: dict[str, Any] = {"ops": size, "ops_seconds": round(t_end - t_ops, 3)}
    since: float | None = None
    polls = 0
    memo: HashMemo = {}
    last_quick: VerifyReport | None = None
    while True:
        st = await status(client)
        polls += 1
        last_quick = quick_check(vault, index_dir, memo=memo)
        now = time.monotonic()
        lexical = (
            st.get("phase") == "ready"
            and last_quick.cards_on_disk == st.get("cards")
            and set(last_quick.counts()) <= {"vector"}  # only vectors still to come
        )
        if lexical and "lexical_consistency_s" not in out:
            out["lexical_consistency_s"] = round(now - t_end, 2)
        good = (
            lexical
            and last_quick.ok
            and st.get("chunks_waiting_for_vectors") == 0
            and st.get("cards") == st.get("cards_embedded")
        )
        if good and since is None:
            since = now
        elif not good:
            since = None
        if since is not None and now - since >= SETTLE_SECONDS:
            out["time_to_consistency_s"] = round(since - t_end, 2)
            break
        if now - t_end > CONSISTENCY_TIMEOUT:
            out["time_to_consistency_s"] = None
            out["timed_out"] = True
            break
        await asyncio.sleep(POLL_SECONDS)
    out["polls"] = polls
    if last_quick is not None and not last_quick.ok:
        out["last_quick_check"] = last_quick.to_json(limit=50)
    return out


async def storm(
    args: argparse.Namespace, vault: Path, index_dir: Path, cache: Path, mut: Mutator
) -> dict[str, Any]:
    mut.stage = "storm"
    mut.touched = set()
    mut.moved = set()
    client = make_test_lsp_client()
    t_spawn = time.monotonic()
    await client.start_io(sys.executable, "-m", "zettel_lsp")
    out: dict[str, Any] = {"ops": args.storm}
    try:
        caps = client_capabilities("visual_studio_code")
        client.capabilities = caps  # pytest-lsp checks requests against them
        await asyncio.wait_for(
            client.initialize_async(
                types.InitializeParams(
                    process_id=os.getpid(),
                    capabilities=caps,
                    root_uri=vault.as_uri(),
                    workspace_folders=[types.WorkspaceFolder(uri=vault.as_uri(), name=vault.name)],
                    initialization_options={"indexDir": str(index_dir), "cacheDir": str(cache)},
                )
            ),
            120,
        )
        client.initialized(types.InitializedParams())
        deadline = time.monotonic() + READY_TIMEOUT
        while (st := await status(client)).get("phase") != "ready":
            if time.monotonic() > deadline:
                raise RuntimeError(f"server not ready: {st}")
            await asyncio.sleep(POLL_SECONDS)
        out["server_ready_s"] = round(time.monotonic() - t_spawn, 2)
        await asyncio.sleep(1.0)  # the watcher is running

        counts: dict[str, int] = {}
        bursts: list[dict[str, Any]] = []
        n, extra = divmod(args.storm, args.bursts)
        sizes = [n + (b < extra) for b in range(args.bursts)]
        for b, size in enumerate(sizes):
            mut.stage = f"storm burst {b}" if args.bursts > 1 else "storm"
            burst = await storm_burst(client, mut, size, vault, index_dir, counts)
            bursts.append(burst)
            print(
                f"storm burst {b + 1}/{len(sizes)}: {size} operations in {burst['ops_seconds']} s; "
                f"lexically consistent after {burst.get('lexical_consistency_s')} s, fully "
                f"{burst['time_to_consistency_s']} s after the last one "
                f"({burst['polls']} polls)",
                file=sys.stderr,
            )
            if burst.get("timed_out"):
                out["timed_out"] = True
                break
        out["ops_by_kind"] = counts
        out["bursts"] = bursts
        times = [t for x in bursts if (t := x["time_to_consistency_s"]) is not None]
        lex = [t for x in bursts if (t := x.get("lexical_consistency_s")) is not None]
        out["ops_seconds"] = round(sum(x["ops_seconds"] for x in bursts), 3)
        out["time_to_consistency_s"] = times[0] if len(bursts) == 1 and times else None
        if times:
            out["time_to_consistency"] = {
                "median_s": round(statistics.median(times), 2),
                "p95_s": round(percentile(times, 95), 2),
                "max_s": max(times),
                "n": len(times),
            }
        if lex:
            out["lexical_consistency"] = {
                "median_s": round(statistics.median(lex), 2),
                "p95_s": round(percentile(lex, 95), 2),
                "max_s": max(lex),
                "n": len(lex),
            }
        embedder = make_embedder(cache_dir=cache, max_length=IndexSettings().chunk_tokens)
        want_cards, want_chunks = expected_totals(vault, embedder, IndexSettings().chunk_tokens)
        out["expected"] = {"cards": want_cards, "chunks": want_chunks}
        st = await status(client)
        out["final_status"] = {
            k: st.get(k)
            for k in ("phase", "cards", "chunks", "cards_embedded", "chunks_waiting_for_vectors")
        }
        if (st.get("cards"), st.get("chunks")) != (want_cards, want_chunks):
            out["totals_differ"] = True
    finally:
        t_stop = time.monotonic()
        server = client._server
        try:
            await asyncio.wait_for(client.shutdown_session(), 60)
            out["shutdown"] = "clean"
        except (TimeoutError, RuntimeError, OSError) as exc:
            out["shutdown"] = f"failed: {exc!r}"
        if server is not None and server.returncode is None:  # never leave a server behind
            out.setdefault("shutdown", "terminated")
            server.terminate()
            try:
                await asyncio.wait_for(server.wait(), 10)
            except TimeoutError:
                server.kill()
                await server.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.stop(), 10)  # type: ignore[no-untyped-call]
        out["shutdown_s"] = round(time.monotonic() - t_stop, 2)
    report = run_verify(vault, index_dir, cache, args, mut.touched)
    out["touched_cards"] = len(mut.touched)
    out["moved_cards"] = moved_summary(report, mut.moved, vault)
    out["verify"] = report.to_json()
    out["ok"] = report.ok and not out.get("timed_out")
    return out


# ---------------------------------------------------------------------- main


def prepare(source: Path, work: Path) -> Path:
    source, work = source.resolve(), work.resolve()
    if work == source or work.is_relative_to(source) or source.is_relative_to(work):
        raise SystemExit(f"the work folder {work} must not overlap the vault {source}")
    if work.exists() and any(work.iterdir()):
        raise SystemExit(f"the work folder {work} is not empty; give a new or empty one")
    work.mkdir(parents=True, exist_ok=True)
    copy = work / "vault"
    shutil.copytree(source, copy, symlinks=True)
    return copy


def _touches(entry: dict[str, Any], path: str) -> bool:
    """Whether a journal entry names ``path`` or a folder holding it (folder renames)."""
    return any(path == p or path.startswith(p + "/") for p in entry["paths"])


def trace(out: dict[str, Any], journal: list[dict[str, Any]]) -> None:
    """For each mismatch: the operations that touched its card."""
    for part in ("kill_loop", "storm"):
        verified = out.get(part, {}).get("verify", {})
        for m in verified.get("mismatches", []):
            m["operations"] = [j for j in journal if _touches(j, m["path"])][-10:]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("vault", type=Path)
    p.add_argument("--kills", type=int, default=20)
    p.add_argument("--storm", type=int, default=1000, metavar="OPS")
    p.add_argument(
        "--bursts",
        type=int,
        default=1,
        help="split the storm into this many bursts, each waited out (median/p95 of the time "
        "to consistency)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--work", type=Path, default=None, help="a new or empty folder")
    p.add_argument("--cache-dir", type=Path, default=None, help="model cache (default: in work)")
    p.add_argument(
        "--sample", type=int, default=200, help="random cards re-probed and re-embedded (-1: all)"
    )
    p.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    p.add_argument(
        "--hostile",
        action="store_true",
        help="add operations no editor makes: same-size edits with the old mtime restored",
    )
    p.add_argument(
        "--scenarios",
        default="all",
        help="watcher scenarios (benchmarks/chaos_watch.py), comma-separated, 'all' or 'none': "
        + ", ".join(chaos_watch.SCENARIOS),
    )
    p.add_argument(
        "--targets",
        default=",".join(chaos_watch.TARGETS),
        help="what the scenarios run against: index-watch (zettel-lsp index --watch), server",
    )
    p.add_argument(
        "--settle-timeout",
        type=float,
        default=60.0,
        help="scenarios: seconds after the last operation to reach consistency",
    )
    p.add_argument(
        "--found-timeout",
        type=float,
        default=20.0,
        help="read-only scenario: seconds the second server gets to find the changes",
    )
    args = p.parse_args(argv)
    try:
        scenarios = chaos_watch.parse_scenarios(args.scenarios)
        targets = chaos_watch.parse_targets(args.targets)
    except ValueError as exc:
        p.error(str(exc))
    if args.hostile:
        KILL_OPS.update(HOSTILE_OPS)
        STORM_OPS.update(HOSTILE_OPS)
    if args.bursts < 1:
        p.error("--bursts must be at least 1")
    if args.sample < 0:
        args.sample = None
    work = args.work or Path(tempfile.mkdtemp(prefix="zettel-chaos-"))
    vault = prepare(args.vault, work)
    index_dir = work / "index"
    cache = (args.cache_dir or work / "cache").resolve()
    rng = random.Random(args.seed)
    mut = Mutator(vault, rng, vocabulary(vault, rng))
    out: dict[str, Any] = {
        "source": str(args.vault.resolve()),
        "work": str(work),
        "seed": args.seed,
        "notes_before": len(mut.notes()),
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
    }
    t0 = time.monotonic()
    print(f"chaos: {out['notes_before']} notes copied to {vault}", file=sys.stderr)
    if args.kills > 0:
        out["kill_loop"] = kill_loop(args, vault, index_dir, cache, mut)
    if args.storm > 0:
        if args.kills <= 0:  # the server starts on an index: build it first
            subprocess.run(index_command(vault, index_dir, cache), check=True)
        out["storm"] = asyncio.run(storm(args, vault, index_dir, cache, mut))
    if scenarios:
        opts = chaos_watch.Options(
            cache, args.seed, args.sample, args.settle_timeout, args.found_timeout
        )
        out["scenarios"] = chaos_watch.run(args.vault, work / "watch", opts, scenarios, targets)
    out["notes_after"] = len(mut.notes())
    out["seconds"] = round(time.monotonic() - t0, 1)
    trace(out, mut.journal)
    ok = all(out[k]["ok"] for k in ("kill_loop", "storm", "scenarios") if k in out)
    out["ok"] = ok
    print_summary(out)
    if args.out:
        out["journal"] = mut.journal
        args.out.write_text(json.dumps(out, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0 if ok else 1


def print_summary(out: dict[str, Any]) -> None:
    print(f"\nchaos on {out['source']} (copy in {out['work']}), seed {out['seed']}")
    if "kill_loop" in out:
        k = out["kill_loop"]
        v = k["verify"]
        print(
            f"  kill loop: {k['kills']} SIGKILLs by phase {k['killed_by_phase']}; clean index "
            f"{k['clean_index'].get('seconds')} s; verify: {sum(v['mismatch_counts'].values())} "
            f"mismatches {v['mismatch_counts']}, {v['cards_on_disk']} cards, "
            f"{v['points_checked']} points, {v['vectors_checked']} vectors re-embedded "
            f"(min cosine {v['min_cosine']})"
        )
    if "storm" in out:
        s = out["storm"]
        v = s["verify"]
        bursts = s.get("bursts", [])
        if len(bursts) == 1:
            when = (
                f"lexically consistent after {bursts[0].get('lexical_consistency_s')} s, "
                f"fully (vectors too) after {s.get('time_to_consistency_s')} s"
            )
        else:
            t, lx = s.get("time_to_consistency", {}), s.get("lexical_consistency", {})
            when = (
                f"{len(bursts)} bursts; lexically consistent after median {lx.get('median_s')} "
                f"s (p95 {lx.get('p95_s')}), fully after median {t.get('median_s')} s (p95 "
                f"{t.get('p95_s')}, max {t.get('max_s')})"
            )
        print(
            f"  storm: {s['ops']} ops in {s.get('ops_seconds')} s {s.get('ops_by_kind')}; {when}"
            f"{'; TIMED OUT' if s.get('timed_out') else ''}; verify: "
            f"{sum(v['mismatch_counts'].values())} mismatches {v['mismatch_counts']}, "
            f"{v['cards_on_disk']} cards, {v['points_checked']} points, "
            f"{v['vectors_checked']} vectors re-embedded ({s['touched_cards']} touched cards; "
            f"min cosine {v['min_cosine']})"
        )
    for part in ("kill_loop", "storm"):
        if part in out:
            mc = out[part]["moved_cards"]
            print(
                f"  {part}: {mc['cards']} renamed/moved cards re-verified (vectors re-embedded), "
                f"{mc['mismatched_cards']} with mismatches {mc['mismatches_by_kind']}"
            )
    for part in ("kill_loop", "storm"):
        for m in out.get(part, {}).get("verify", {}).get("mismatches", [])[:20]:
            print(f"  MISMATCH ({part}) {m['kind']}: {m['path']}: {m['reason']}")
            for j in m.get("operations", [])[-3:]:
                print(f"      after {j['stage']} op {j['n']}: {j['op']} {j['paths']}")
    for r in out.get("scenarios", {}).get("runs", []):
        print(f"  scenario {chaos_watch.summary_line(r)}")
        for m in r["verify"].get("mismatches", [])[:10]:
            print(f"      MISMATCH {m['kind']}: {m['path']}: {m['reason']}")
    print(f"  {'OK' if out['ok'] else 'FAILED'} in {out['seconds']} s")


if __name__ == "__main__":
    sys.exit(main())
