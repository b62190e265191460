"""The watcher scenarios of the chaos benchmark (issue #44), run by ``benchmarks/chaos.py
--scenarios``: changes made during the initial sync, a folder replacing a note, a branch switch
(each against ``zettel-lsp index --watch`` and against the language server) and a read-only
second server (server only).

The source vault is copied to ``WORK/vault`` and made a git repository: branch ``main`` is the
vault plus three fixture notes (``Case.md``, ``-dash.md``, ``Replaced.md``); branch ``b2``
differs from it in :data:`BRANCH_CHANGES` notes (edits, adds, deletes). ``main`` is indexed
once and the index folder saved; every run starts from ``main`` and that saved index.

- **during-sync**: ``git checkout b2`` with no watcher (the index is behind the folder), start
  the target, and ``sync_delay`` after it opened the index, ``git checkout main`` plus one note
  created and one deleted (``landed_in_sync``: the saved state had not caught up with b2 then).
- **folder-replaces-note**: once the target is idle: ``Case.md`` -> ``CASE.md``; ``-dash.md``
  deleted and made a folder holding ``child.md`` at once; ``Replaced.md`` the same, with 2 s
  between the deletion and the folder; one note renamed.
- **branch-switch**: once idle, ``git checkout b2``; once the target embeds b2's changes,
  ``git checkout main`` again.
- **read-only**: server 1 holds the index; server 2 starts on the same folders. A card is
  created and a unique word appended to another; server 2 must find both through
  ``workspace/symbol`` and ``zettel.search`` within ``found_timeout`` seconds. Then server 1
  exits and server 2 must take the index over (status no longer read-only).

After the last operation: wait until the saved state equals the folder (``quick_check``) and
the target is idle (the CLI is watching; the server is ready with every card embedded) for
:data:`SETTLE_SECONDS` (the *time to consistency*), or ``settle_timeout``; stop the target
(SIGINT; shutdown + exit) and run the verifier on the index as it was left.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import string
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from zettel_lsp.index.folder_lock import FolderLock
from zettel_lsp.index.sparse_copy import copy_tree
from zettel_lsp.index.sync import IndexSettings
from zettel_lsp.index.verify import HashMemo, VerifyReport, quick_check, verify_folder
from zettel_lsp.notes.scan import iter_note_paths

SCENARIOS = ("during-sync", "folder-replaces-note", "branch-switch", "read-only")
TARGETS = ("index-watch", "server")
SERVER_ONLY = frozenset({"read-only"})
BRANCH_CHANGES = 50  # notes b2 differs in: half edited, a quarter added, a quarter deleted
FIXTURES = {
    "Case.md": "# Case\n\nA note whose name changes case.\n",
    "-dash.md": "# Dash\n\nA note a folder of the same name replaces.\n",
    "Replaced.md": "# Replaced\n\nAnother note a folder of the same name replaces.\n",
}
SETTLE_SECONDS = 2.0  # consistency must hold this long (the watcher debounces 500 ms)
POLL_SECONDS = 0.1
START_TIMEOUT = 300.0
GIT = ["git", "-c", "user.name=chaos", "-c", "user.email=chaos@localhost",
       "-c", "commit.gpgsign=false", "-c", "core.quotepath=false"]  # fmt: skip


@dataclass
class Options:
    cache: Path
    seed: int = 0
    sample: int | None = 50  # the verifier's random sample (None: every card)
    settle_timeout: float = 60.0  # seconds after the last operation to reach consistency
    found_timeout: float = 20.0  # read-only: seconds server 2 gets to find the changes
    sync_delay: float = 1.0  # during-sync: seconds after the target took the index folder


@dataclass
class Bench:
    vault: Path
    index_dir: Path
    snapshot: Path  # the index of main, copied back before each run
    opts: Options
    rng: random.Random
    branch: dict[str, list[str]]  # b2 against main: edited, added, deleted
    touched: set[str] = field(default_factory=set)  # paths this run changed (verifier focus)


def git(vault: Path, *args: str) -> None:
    subprocess.run([*GIT, "-C", str(vault), *args], check=True, capture_output=True)


def index_command(b: Bench, *extra: str) -> list[str]:
    return [sys.executable, "-m", "zettel_lsp", "index", str(b.vault),
            "--index-dir", str(b.index_dir), "--cache-dir", str(b.opts.cache), *extra]  # fmt: skip


def word(rng: random.Random, n: int = 10) -> str:
    """A word no vault holds (letters only: one token for every tokenizer)."""
    return "zq" + "".join(rng.choice(string.ascii_lowercase) for _ in range(n))


# ---------------------------------------------------------------------- the git copy


def setup(source: Path, work: Path, opts: Options) -> Bench:
    """Copy ``source`` to ``work/vault``, make branches main and b2, index main once."""
    work.mkdir(parents=True, exist_ok=True)
    vault = work / "vault"
    shutil.copytree(source, vault, symlinks=True)
    for name, text in FIXTURES.items():
        (vault / name).write_text(text, encoding="utf-8")
    rng = random.Random(opts.seed)
    git(vault, "init", "-q", "-b", "main")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "main")
    git(vault, "checkout", "-q", "-b", "b2")
    notes = sorted(set(iter_note_paths(vault)) - set(FIXTURES))
    picked = rng.sample(notes, min(len(notes), BRANCH_CHANGES * 3 // 4))
    n_edit = BRANCH_CHANGES // 2
    branch: dict[str, list[str]] = {"edited": picked[:n_edit], "deleted": picked[n_edit:]}
    for rel in branch["edited"]:
        with (vault / rel).open("a", encoding="utf-8") as fh:
            fh.write(f"\n\nOn branch b2 this note says {word(rng)} and {word(rng)}.\n")
    for rel in branch["deleted"]:
        (vault / rel).unlink()
    branch["added"] = []
    for i in range(BRANCH_CHANGES - len(picked)):
        rel = f"b2/Branch note {i} {word(rng, 4)}.md"
        (vault / rel).parent.mkdir(exist_ok=True)
        (vault / rel).write_text(f"# Branch note {i}\n\nOnly on b2: {word(rng)}.\n", "utf-8")
        branch["added"].append(rel)
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "b2")
    git(vault, "checkout", "-q", "main")
    b = Bench(vault, work / "index", work / "index-main", opts, rng, branch)
    subprocess.run(index_command(b), check=True, stdout=subprocess.DEVNULL)
    lock = FolderLock(b.index_dir)  # waits out (stops) the compactor the index run left
    try:
        copy_tree(b.index_dir, b.snapshot, ignore=shutil.ignore_patterns("lock"))
    finally:
        lock.release()
    return b


def reset(b: Bench) -> None:
    """The vault back on main (untracked files removed), the index folder back to main's."""
    git(b.vault, "checkout", "-q", "-f", "main")
    git(b.vault, "clean", "-q", "-f", "-d")
    FolderLock(b.index_dir).release()  # stops a compactor a previous run left
    shutil.rmtree(b.index_dir)
    copy_tree(b.snapshot, b.index_dir)
    b.touched = set()


def switch(b: Bench, branch: str) -> None:
    git(b.vault, "checkout", "-q", branch)
    b.touched.update(p for paths in b.branch.values() for p in paths)


# ---------------------------------------------------------------------- the targets


class CliWatch:
    """``zettel-lsp index VAULT --watch`` in a subprocess, stopped with SIGINT."""

    name = "index-watch"

    def __init__(self, b: Bench, log: Path) -> None:
        self.b = b
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(
                index_command(self.b, "--watch"),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                # a background shell makes its children ignore SIGINT: Ctrl-C must stop it
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
            )

    async def phase(self) -> str:
        """starting (before it holds the index folder), syncing (its initial sync, embedding
        and self-tuning), watching, or exited."""
        assert self.proc is not None
        if self.proc.poll() is not None:
            return "exited"
        if b"watching" in self.log.read_bytes():
            return "watching"
        try:
            holder = (self.b.index_dir / "lock").read_text(encoding="utf-8").split()
        except OSError:
            holder = []
        return "syncing" if holder[:1] == [str(self.proc.pid)] else "starting"

    async def settled(self, quick: VerifyReport) -> bool:
        return await self.phase() == "watching"

    async def embedding(self, quick: VerifyReport) -> bool:
        return "vector" in quick.counts()

    async def stop(self) -> dict[str, Any]:
        proc, t0 = self.proc, time.monotonic()
        if proc is None:
            return {}
        how = "SIGINT"
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            while proc.poll() is None and time.monotonic() - t0 < 60:
                await asyncio.sleep(POLL_SECONDS)
            if proc.poll() is None:
                how = "SIGKILL after 60 s"
                proc.kill()
        rc = proc.wait()
        tail = self.log.read_text(encoding="utf-8", errors="replace")[-600:]
        return {
            "how": how,
            "returncode": rc,
            "seconds": round(time.monotonic() - t0, 2),
            "stderr_tail": tail if rc != 0 else "",
        }


class ServerTarget:
    """The language server over stdio (pytest-lsp's client), stopped with shutdown + exit."""

    name = "server"
    SYNCING = ("syncing", "graph", "embedding")

    def __init__(self, b: Bench) -> None:
        self.b = b
        self.client: LanguageClient | None = None

    async def start(self) -> None:
        client = self.client = make_test_lsp_client()
        await client.start_io(sys.executable, "-m", "zettel_lsp")
        caps = client_capabilities("visual_studio_code")
        client.capabilities = caps  # pytest-lsp checks requests against them
        vault = self.b.vault
        params = types.InitializeParams(
            process_id=os.getpid(),
            capabilities=caps,
            root_uri=vault.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=vault.as_uri(), name=vault.name)],
            initialization_options={
                "indexDir": str(self.b.index_dir),
                "cacheDir": str(self.b.opts.cache),
            },
        )
        await asyncio.wait_for(client.initialize_async(params), 120)
        client.initialized(types.InitializedParams())

    async def status(self) -> dict[str, Any]:
        assert self.client is not None
        result = await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="zettel.status", arguments=[])
        )
        vaults = result.get("vaults") if isinstance(result, dict) else None
        return dict(vaults[0]) if vaults else {}

    async def phase(self) -> str:
        return str((await self.status()).get("phase"))

    async def settled(self, quick: VerifyReport) -> bool:
        st = await self.status()
        return (
            st.get("phase") == "ready"
            and st.get("cards") == quick.cards_on_disk
            and st.get("chunks_waiting_for_vectors") == 0
            and st.get("cards") == st.get("cards_embedded")
        )

    async def embedding(self, quick: VerifyReport) -> bool:
        st = await self.status()
        return st.get("phase") == "embedding" or bool(st.get("chunks_waiting_for_vectors"))

    async def finds(self, query: str, rel: str) -> dict[str, bool]:
        """Whether ``workspace/symbol`` and ``zettel.search`` (no LLM) find ``rel``."""
        assert self.client is not None
        symbols = await self.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
        found = await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="zettel.search", arguments=[{"query": query, "llm": False}]
            )
        )
        target = (self.b.vault / rel).resolve()
        uris = [s.location.uri for s in symbols or [] if isinstance(s.location, types.Location)]
        rows = found.get("results", []) if isinstance(found, dict) else []
        return {
            "symbol": any(Path(unquote(urlparse(u).path)) == target for u in uris),
            "search": any(r.get("path") == rel for r in rows),
        }

    async def stop(self) -> dict[str, Any]:
        client, t0 = self.client, time.monotonic()
        if client is None:
            return {}
        server = client._server
        how = "shutdown+exit"
        try:
            await asyncio.wait_for(client.shutdown_session(), 60)
            if server is not None:
                await asyncio.wait_for(server.wait(), 30)
        except (TimeoutError, RuntimeError, OSError) as exc:
            how = f"failed: {exc!r}"
        if server is not None and server.returncode is None:  # never leave a server behind
            how += "; killed"
            server.kill()
            await server.wait()
        self.client = None
        rc = None if server is None else server.returncode
        return {"how": how, "returncode": rc, "seconds": round(time.monotonic() - t0, 2)}


Target = CliWatch | ServerTarget


async def wait_until(check: Callable[[], Awaitable[bool]], timeout: float) -> float | None:
    """Seconds until ``check()`` held, or None after ``timeout``."""
    t0 = time.monotonic()
    while not await check():
        if time.monotonic() - t0 > timeout:
            return None
        await asyncio.sleep(POLL_SECONDS)
    return round(time.monotonic() - t0, 2)


async def wait_consistent(t: Target, b: Bench, timeout: float) -> dict[str, Any]:
    """Poll until the saved state equals the folder and ``t`` is idle for SETTLE_SECONDS."""
    t_end = time.monotonic()
    memo: HashMemo = {}
    since: float | None = None
    while True:
        quick = quick_check(b.vault, b.index_dir, memo=memo)
        now = time.monotonic()
        good = quick.ok and await t.settled(quick)
        since = (since or now) if good else None
        if since is not None and now - since >= SETTLE_SECONDS:
            return {"time_to_consistency_s": round(since - t_end, 2)}
        if now - t_end > timeout:
            return {"time_to_consistency_s": None, "last_quick_check": quick.counts()}
        await asyncio.sleep(POLL_SECONDS)


# ---------------------------------------------------------------------- the scenarios


async def during_sync(b: Bench, t: Target) -> dict[str, Any]:
    switch(b, "b2")  # no watcher: the index is now behind the folder
    await t.start()
    # the CLI holds the index folder, or the server has opened it (its initial sync runs)
    if await wait_until(lambda: _not_in(t, ("starting",)), START_TIMEOUT) is None:
        raise RuntimeError(f"{t.name} never opened the index")
    await asyncio.sleep(b.opts.sync_delay)
    before = await t.phase()
    behind = not quick_check(b.vault, b.index_dir).ok  # the index has not caught up with b2
    switch(b, "main")
    created = f"Made during sync {word(b.rng, 4)}.md"
    (b.vault / created).write_text(f"# Made during sync\n\n{word(b.rng)}\n", encoding="utf-8")
    gone = b.rng.choice(sorted(set(iter_note_paths(b.vault)) - set(FIXTURES) - {created}))
    (b.vault / gone).unlink()
    b.touched.update((created, gone))
    return {"phase_at_switch": before, "phase_after_ops": await t.phase(), "landed_in_sync": behind}


async def start_idle(b: Bench, t: Target) -> float:
    """Start ``t`` on main's index and wait until it is idle and consistent."""
    t0 = time.monotonic()
    await t.start()
    if (await wait_consistent(t, b, START_TIMEOUT))["time_to_consistency_s"] is None:
        raise RuntimeError(f"{t.name} did not settle after its start")
    return round(time.monotonic() - t0, 2)


async def folder_replaces_note(b: Bench, t: Target) -> dict[str, Any]:
    idle = await start_idle(b, t)
    v = b.vault
    os.rename(v / "Case.md", v / "CASE.md")
    for name in ("-dash.md", "Replaced.md"):
        (v / name).unlink()
        if name == "Replaced.md":  # the deletion synced on its own before the folder comes
            await asyncio.sleep(SETTLE_SECONDS)
        (v / name).mkdir()
        (v / name / "child.md").write_text(f"# Child\n\n{word(b.rng)}\n", encoding="utf-8")
    made = {"CASE.md", "-dash.md/child.md", "Replaced.md/child.md"}
    old = b.rng.choice(sorted(set(iter_note_paths(v)) - made))
    new = f"{old.rsplit('/', 1)[0] + '/' if '/' in old else ''}Renamed {word(b.rng, 4)}.md"
    os.rename(v / old, v / new)
    b.touched.update((*made, new))
    return {"idle_after_s": idle, "renamed": [old, new]}


async def branch_switch(b: Bench, t: Target) -> dict[str, Any]:
    idle = await start_idle(b, t)
    switch(b, "b2")  # while idle
    memo: HashMemo = {}

    async def embedding() -> bool:
        return await t.embedding(quick_check(b.vault, b.index_dir, memo=memo))

    waited = await wait_until(embedding, 60)
    switch(b, "main")  # mid-embedding (when it was caught)
    return {"idle_after_s": idle, "embedding_after_s": waited, "mid_embedding": waited is not None}


async def read_only(b: Bench, t: Target) -> dict[str, Any]:
    """``t`` is server 2; server 1 holds the index until it exits here."""
    assert isinstance(t, ServerTarget)
    s1 = ServerTarget(b)
    out: dict[str, Any] = {"found_s": {}, "takeover_s": None}
    try:
        out["server1_idle_s"] = await start_idle(b, s1)
        await t.start()
        await wait_until(lambda: _not_in(t, ("starting", "syncing")), START_TIMEOUT)
        st = await t.status()
        out["server2_phase"], out["server2_note"] = st.get("phase"), st.get("note")
        w_new, w_old = word(b.rng), word(b.rng)
        new = f"Read only probe {w_new}.md"
        (b.vault / new).write_text(f"# Probe\n\nA card made for {w_new}.\n", encoding="utf-8")
        old = b.rng.choice(sorted(set(iter_note_paths(b.vault)) - set(FIXTURES) - {new}))
        with (b.vault / old).open("a", encoding="utf-8") as fh:
            fh.write(f"\n\nAppended: {w_old}.\n")
        b.touched.update((new, old))
        probes = ((w_new, new), (w_old, old))
        out["found_s"] = await found_by((t, s1), probes, b.opts.found_timeout)
        for name, s in (("server2", t), ("server1", s1)):
            out[f"{name}_misses"] = [
                f"{q} {leg}"
                for q, rel in probes
                for leg, ok in (await s.finds(q, rel)).items()
                if not ok
            ]
        out["server1_stop"] = await s1.stop()
        out["takeover_s"] = await wait_until(lambda: _holds_index(t), b.opts.settle_timeout)
        out["server2_phase_after"] = await t.phase()
    finally:
        await s1.stop()
    out["server1_exit"] = out.get("server1_stop", {}).get("returncode")
    out["scenario_ok"] = (
        out["found_s"].get("server2") is not None
        and out["takeover_s"] is not None
        and out["server1_exit"] == 0
    )
    return out


async def found_by(
    servers: tuple[ServerTarget, ServerTarget], probes: tuple[tuple[str, str], ...], timeout: float
) -> dict[str, float | None]:
    """Seconds until server 2 (``servers[0]``) and server 1 each found every probe through both
    legs (None: not within ``timeout``)."""
    t0 = time.monotonic()
    found: dict[str, float | None] = {"server2": None, "server1": None}
    while time.monotonic() - t0 <= timeout and None in found.values():
        for name, s in zip(found, servers, strict=True):
            if found[name] is None and await _finds_all(s, probes):
                found[name] = round(time.monotonic() - t0, 2)
        await asyncio.sleep(0.25)
    return found


async def _finds_all(s: ServerTarget, probes: tuple[tuple[str, str], ...]) -> bool:
    for query, rel in probes:
        if not all((await s.finds(query, rel)).values()):
            return False
    return True


async def _not_in(t: Target, phases: tuple[str, ...]) -> bool:
    return await t.phase() not in phases


async def _holds_index(s: ServerTarget) -> bool:
    """Whether the server's status says it holds the index (not read-only, closed or failed)."""
    st = await s.status()
    read_only = st.get("read_only") or st.get("readOnly")
    return not read_only and st.get("phase") not in ("read-only", "closed", "failed", None)


SCENARIO_FNS: dict[str, Callable[[Bench, Target], Awaitable[dict[str, Any]]]] = {
    "during-sync": during_sync,
    "folder-replaces-note": folder_replaces_note,
    "branch-switch": branch_switch,
    "read-only": read_only,
}


# ---------------------------------------------------------------------- running them


async def run_one(b: Bench, scenario: str, target: str, work: Path) -> dict[str, Any]:
    reset(b)
    t: Target = (
        CliWatch(b, work / f"{scenario}.log") if target == "index-watch" else ServerTarget(b)
    )
    out: dict[str, Any] = {"scenario": scenario, "target": target}
    t0 = time.monotonic()
    try:
        out.update(await SCENARIO_FNS[scenario](b, t))
        out.update(await wait_consistent(t, b, b.opts.settle_timeout))
    except Exception as exc:  # noqa: BLE001 - the run failed: say how, stop, verify, go on
        out["error"] = repr(exc)
    finally:
        out["stop"] = await t.stop()
    focus = {p for p in b.touched if (b.vault / p).is_file()}
    report = verify_folder(
        b.vault,
        b.index_dir,
        IndexSettings(),
        cache_dir=b.opts.cache,
        sample=b.opts.sample,
        seed=b.opts.seed,
        focus=focus,
    )
    out["verify"] = report.to_json(limit=50)
    out["mismatches"] = sum(report.counts().values())
    out["seconds"] = round(time.monotonic() - t0, 1)
    out["ok"] = (
        report.ok
        and "error" not in out
        and out.get("time_to_consistency_s") is not None
        and out["stop"].get("returncode") == 0
        and out.get("scenario_ok", True)
    )
    return out


def run(
    source: Path, work: Path, opts: Options, scenarios: list[str], targets: list[str]
) -> dict[str, Any]:
    """Every scenario against every target (read-only: the server only), one after another."""
    t0 = time.monotonic()
    b = setup(source, work, opts)
    print(
        f"scenarios: git copy in {b.vault}, b2 differs in {BRANCH_CHANGES} notes "
        f"({ {k: len(v) for k, v in b.branch.items()} }); main indexed in "
        f"{time.monotonic() - t0:.1f} s",
        file=sys.stderr,
    )
    runs: list[dict[str, Any]] = []
    for scenario in scenarios:
        for target in targets:
            if scenario in SERVER_ONLY and target != "server":
                continue
            r = asyncio.run(run_one(b, scenario, target, work))
            runs.append(r)
            print(f"  {summary_line(r)}", file=sys.stderr)
    return {"work": str(work), "branch": b.branch, "runs": runs, "ok": all(r["ok"] for r in runs)}


def summary_line(r: dict[str, Any]) -> str:
    v = r["verify"]
    extra = {
        k: r[k]
        for k in (
            "landed_in_sync",
            "mid_embedding",
            "server2_phase",
            "found_s",
            "takeover_s",
            "server1_exit",
            "server2_misses",
            "error",
        )
        if k in r
    }
    return (
        f"{r['scenario']:<20} {r['target']:<11} {'ok' if r['ok'] else 'FAILED'}: "
        f"{r['mismatches']} mismatches {v['mismatch_counts']}, consistent after "
        f"{r.get('time_to_consistency_s')} s, exit {r['stop'].get('returncode')} "
        f"({r['stop'].get('how')}) {extra}"
    )


def parse_scenarios(text: str) -> list[str]:
    if text in ("", "none"):
        return []
    names = list(SCENARIOS) if text == "all" else [n.strip() for n in text.split(",")]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown scenarios {unknown}; known: {', '.join(SCENARIOS)}")
    return names


def parse_targets(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        raise ValueError(f"unknown targets {unknown}; known: {', '.join(TARGETS)}")
    return names
