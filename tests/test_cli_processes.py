"""The command line next to other processes, as a user meets it: Ctrl-C during ``index`` (a real
SIGINT to a real subprocess), ``search``/``suggest``/``graph`` while another process holds the
index (a real ``index --watch``), and ``--watch`` output on a real terminal (a pty)."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import copy_indexed
from zettel_lsp.index.state import read_state
from zettel_lsp.index.store import EdgeStore
from zettel_lsp.index.store_api import point_id

EXE = [sys.executable, "-m", "zettel_lsp"]


@pytest.fixture
def vault(tmp_path: Path, indexed_example: Path) -> Path:
    """A copy of examples/vault with a copy of its complete index in ``tmp_path / "idx"``: the
    commands below start on an index a first run left (what they check is not a cold index)."""
    dst = tmp_path / "vault"
    copy_indexed(indexed_example, dst, tmp_path / "idx")
    return dst


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """A subprocess whose stderr is a pseudo-terminal (so the progress line is on), read as it
    comes."""

    def __init__(self, *args: str) -> None:
        master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [*EXE, *args],
            stdout=subprocess.PIPE,
            stderr=slave,
            stdin=subprocess.DEVNULL,
            # As from a terminal: a shell runs background jobs (`bash .ci/run &`) with SIGINT
            # ignored, the children inherit that, and Python then leaves it ignored.
            preexec_fn=_sigint_default,
        )
        os.close(slave)
        self._master = master
        self.output = ""

    def read_until(self, done: object, timeout: float = 120.0) -> str:
        """Read until ``done(output)`` is true (a callable) or ``done`` (a string) appears."""
        check = done if callable(done) else (lambda out: str(done) in out)
        end = time.monotonic() + timeout
        while not check(self.output):
            left = end - time.monotonic()
            assert left > 0, f"timed out; the terminal shows:\n{self.output[-3000:]}"
            if not self._read(min(left, 1.0)) and self.proc.poll() is not None:
                assert check(self.output), f"exited {self.proc.returncode}:\n{self.output[-3000:]}"
        return self.output

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self._master, 65536)
        except OSError:  # EIO: the other end is closed
            return False
        self.output += chunk.decode("utf-8", "replace")
        return bool(chunk)

    def drain(self, seconds: float) -> None:
        """Read whatever comes for ``seconds``."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self._read(min(left, 0.2))

    def finish(self, timeout: float = 120.0) -> int:
        """Wait for the exit, reading what is left; the exit code."""
        end = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < end:
            self._read(0.2)
        while self._read(0.2):
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
            os.close(self._master)
            raise AssertionError(f"still running after {timeout} s:\n{self.output[-3000:]}")
        rc = self.proc.wait(timeout=5)
        os.close(self._master)
        return rc


def many_cards(root: Path, n: int = 64) -> Path:
    """A vault whose dense phase takes many model batches: n cards of two chunks, a short one
    and a long one. The queue is sorted by length, so a Ctrl-C after the first batches leaves
    cards with one chunk embedded and one not."""
    root.mkdir(parents=True, exist_ok=True)
    words = (
        "sourdough levain hydration gluten retrieval ranking fusion index embedding card "
        "link graph mention title alias chunk vector query recall precision fermentation"
    ).split()
    for i in range(n):
        short = " ".join(words[(i * 7 + j * 3) % len(words)] for j in range(20))
        long = " ".join(words[(i * 5 + j * 7) % len(words)] for j in range(120))
        text = f"# Card {i}\n\n{short}\n\n## More\n\n{long}\n"
        (root / f"card {i:04d}.md").write_text(text, encoding="utf-8")
    return root


def vectors_stored(index_dir: Path) -> tuple[int, int]:
    """(chunks with a dense vector, chunks) in an index folder no process holds."""
    state = read_state(index_dir)
    assert state is not None
    ids = [point_id(p, i) for p, f in state.files.items() for i in range(f.chunks)]
    store = EdgeStore(index_dir, state.dim, 100.0)
    try:
        with_vector = sum(1 for _, _, v in store.retrieve(ids, with_dense=True) if v is not None)
    finally:
        store.close()
    return with_vector, len(ids)


def embedding_started(out: str) -> bool:
    """The progress line shows "chunks embedded: N/M" with N > 0 (the lexical phase is over)."""
    tail = out.rsplit("chunks embedded: ", 1)
    return len(tail) == 2 and not tail[1].startswith("0/")


def test_ctrl_c_during_index_keeps_the_work_and_exits_quietly(tmp_path: Path) -> None:
    vault = many_cards(tmp_path / "vault")
    idx = tmp_path / "idx"
    cache = ["--cache-dir", str(tmp_path / "cache")]
    term = Terminal("index", str(vault), "--index-dir", str(idx), *cache)
    term.read_until(embedding_started)
    term.proc.send_signal(signal.SIGINT)
    rc = term.finish()
    out = term.output
    assert rc == 130, out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    last = out.strip().splitlines()[-1]
    assert last.startswith("zettel-lsp: interrupted; ") and last.endswith(
        " cards embedded, run again to finish"
    ), out
    cards_done = int(last.split("; ")[1].split()[0].replace(",", ""))
    state = read_state(idx)
    assert state is not None and cards_done == state.dense_done
    have, chunks = vectors_stored(idx)
    assert 0 < have < chunks, (have, chunks)  # work was kept, some is left
    # some vectors belong to cards not finished (one chunk of two embedded): kept too
    assert have > sum(f.chunks for f in state.files.values() if f.dense), (have, cards_done)

    again = subprocess.run(
        [*EXE, "index", str(vault), "--index-dir", str(idx), *cache, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    # it continues: exactly the chunks without a vector are embedded, none twice
    assert summary["chunks"] == chunks and summary["embedded"] == chunks - have
    assert vectors_stored(idx) == (chunks, chunks)


@contextmanager
def watching(vault: Path, idx: Path, cache: Path) -> Iterator[Terminal]:
    """``index --watch`` running (it holds the index folder), on a terminal."""
    term = Terminal(
        "index", str(vault), "--watch", "--index-dir", str(idx), "--cache-dir", str(cache)
    )
    try:
        term.read_until("(Ctrl-C to stop)")
        yield term
    finally:
        if term.proc.poll() is None:
            term.proc.send_signal(signal.SIGINT)
        term.finish()


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXE, *args], capture_output=True, text=True, timeout=120)


def test_search_suggest_graph_answer_read_only_while_another_process_holds_the_index(
    vault: Path, tmp_path: Path
) -> None:
    idx, cache = tmp_path / "idx", tmp_path / "cache"
    where = ["--index-dir", str(idx), "--cache-dir", str(cache)]
    with watching(vault, idx, cache) as watcher:
        found = run("search", str(vault), "levain", "--json", *where)
        assert found.returncode == 0, found.stderr
        lines = found.stderr.strip().splitlines()
        assert len(lines) == 1 and "read-only" in lines[0] and "in use by another" in lines[0]
        rows = json.loads(found.stdout)
        assert rows and rows[0]["path"] == "baking/Levain.md"
        assert all(set(r["legs"]) <= {"title", "scan"} for r in rows)
        assert "Traceback" not in found.stderr

        text = run("search", str(vault), "levain", *where)
        assert text.returncode == 0 and "Levain" in text.stdout

        sg = run("suggest", str(vault), "retrieval/Vector database.md", "--json", *where)
        assert sg.returncode == 0, sg.stderr
        assert len(sg.stderr.strip().splitlines()) == 1 and "read-only" in sg.stderr
        out = json.loads(sg.stdout)
        assert out["read_only"] is True and out["related"] == []
        assert out["card"] == "retrieval/Vector database.md"

        graph = run("graph", str(vault), "--card", "RRF")
        assert graph.returncode == 0 and "Reciprocal rank fusion" in graph.stdout

        # what needs the index itself still says who holds it
        index = run("index", str(vault), *where)
        assert index.returncode == 1 and "in use by another zettel-lsp" in index.stderr
        assert watcher.proc.poll() is None
    # once the other process is gone, the full answer is back
    full = run("search", str(vault), "levain", "--json", *where)
    assert full.returncode == 0 and "read-only" not in full.stderr
    assert any(leg in json.loads(full.stdout)[0]["legs"] for leg in ("dense", "bm25"))


def test_watch_output_keeps_each_message_on_its_own_line(vault: Path, tmp_path: Path) -> None:
    with watching(vault, tmp_path / "idx", tmp_path / "cache") as term:
        card = vault / "baking" / "Levain.md"
        card.write_text(card.read_text(encoding="utf-8") + "\nA new line.\n", encoding="utf-8")
        (vault / "New card.md").write_text("# New card\n\nAbout levain.\n")
        term.read_until("updated: ")
        term.drain(3.0)  # the rest of that line, and whatever the watcher's embedder prints
        out = term.output
    assert "updated: " in out
    for line in out.replace("\r\n", "\n").split("\n"):
        for message in ("updated: ", "watching "):
            if message in line:
                shown = line.rsplit("\r", 1)[-1]  # what a terminal shows after a carriage return
                assert shown.startswith(message), repr(line)


def test_a_cached_run_shows_no_rate_from_a_near_zero_duration(vault: Path, tmp_path: Path) -> None:
    """A scan of unchanged files is reported once, at its end, milliseconds in: no rate (it
    read "2,721,000,000/s") and no ETA from that."""
    args = ("index", str(vault), "--index-dir", str(tmp_path / "idx"))
    args += ("--cache-dir", str(tmp_path / "cache"))
    first = Terminal(*args)
    assert first.finish() == 0, first.output
    second = Terminal(*args)
    assert second.finish() == 0, second.output
    scans = [part for part in second.output.split("\r") if "scanning: " in part]
    assert scans, second.output
    for line in scans:
        assert "/s" not in line and "ETA" not in line, line
        assert "45/45 (100.0%)" in line and "0 to read" in line, line


def _tgkill(pid: int, tid: int, sig: int) -> None:
    """Send ``sig`` to one thread of ``pid`` (Linux ``tgkill``; Python has no wrapper)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    SYS_TGKILL = {"x86_64": 234, "aarch64": 131}[os.uname().machine]
    if libc.syscall(SYS_TGKILL, pid, tid, sig) != 0:
        raise OSError(ctypes.get_errno(), "tgkill failed")


@pytest.mark.skipif(
    sys.platform != "linux" or os.uname().machine not in ("x86_64", "aarch64"),
    reason="needs Linux tgkill to aim the signal at one thread",
)
def test_watch_stops_on_ctrl_c_delivered_to_another_thread(vault: Path, tmp_path: Path) -> None:
    """A terminal's Ctrl-C goes to the process; the kernel may hand it to any thread that does
    not block it (the watcher's, the model's). Python then runs the handler only when the main
    thread runs again, and `index --watch` slept an hour at a time: it did not stop (seen as
    two hung watchers in a loaded CI run). Aim SIGINT at a non-main thread on purpose."""
    term = Terminal(
        "index",
        str(vault),
        "--watch",
        "--index-dir",
        str(tmp_path / "idx"),
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    try:
        term.read_until("(Ctrl-C to stop)")
        pid = term.proc.pid
        targets = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            tid = int(task.name)
            status = (task / "status").read_text()
            blocked = int(
                next(x for x in status.splitlines() if x.startswith("SigBlk:")).split()[1], 16
            )
            if tid != pid and not blocked & (1 << (signal.SIGINT - 1)):
                targets.append(tid)
        if not targets:
            pytest.skip("every other thread blocks SIGINT: it can only reach the main thread")
        _tgkill(pid, targets[0], signal.SIGINT)
        end = time.monotonic() + 30
        while term.proc.poll() is None and time.monotonic() < end:
            term.drain(0.2)
        assert term.proc.poll() is not None, "index --watch did not stop on SIGINT"
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert term.finish() == 0, term.output


def test_index_watch_keeps_the_changes_made_during_its_first_sync(tmp_path: Path) -> None:
    """Issue #44, 3: notes created, deleted, renamed and edited while ``index --watch`` still
    embeds its first sync (nothing watched yet) are in the index once it watches: after Ctrl-C,
    ``--verify-only`` finds nothing missing, phantom or stale."""
    vault = many_cards(tmp_path / "vault", 16)
    where = ["--index-dir", str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache")]
    term = Terminal("index", str(vault), "--watch", *where)
    try:
        term.read_until("chunks embedded: ")  # the first sync is over, the model loads
        (vault / "card 0000.md").unlink()
        (vault / "card 0001.md").rename(vault / "renamed card.md")
        (vault / "card 0002.md").write_text("# Card 2\n\nRewritten: an okapi.\n")
        (vault / "new card.md").write_text("# New card\n\nA quokka.\n")
        term.read_until("(Ctrl-C to stop)")
        term.proc.send_signal(signal.SIGINT)
    finally:
        if term.proc.poll() is None:
            term.proc.send_signal(signal.SIGINT)
        assert term.finish() == 0, term.output
    checked = run("index", str(vault), "--verify-only", "--sample", "0", "--json", *where)
    verified = json.loads(checked.stdout)["verify"]
    assert verified["mismatch_counts"] == {}, verified["mismatches"]
    assert verified["cards_on_disk"] == verified["cards_in_state"] == 16


@pytest.mark.parametrize("command", [["search", "levain", "--json"], ["graph"]])
def test_output_to_a_closed_pipe_ends_quietly(
    vault: Path, tmp_path: Path, command: list[str]
) -> None:
    """`zettel-lsp search ... --json | head -c 600`: the reader is gone before the output."""
    name, *rest = command
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the pipe fails with EPIPE, as after `head` exits
    where = ["--index-dir", str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache")]
    args = [name, str(vault), *rest, *(where if name == "search" else [])]
    try:
        done = subprocess.run(
            [*EXE, *args], stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1, done.stderr
    assert done.stderr == "", done.stderr  # no traceback, no "Exception ignored" line
