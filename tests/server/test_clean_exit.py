"""A clean exit (issue #44, finding 2): whatever the server is doing when ``shutdown`` and
``exit`` arrive (embedding a branch switch, choosing the suggestions' weights, loading the
multilingual model for a query not in English), its process ends with 0, and no thread of its
own is still running when the interpreter tears down: one inside onnxruntime or Qdrant Edge
then aborts it (rc -6, ``terminate called without an active exception``).

A small git vault of two branches that differ in most notes; its index is of branch ``b2``
while the folder is on ``main``, so the server re-embeds them at start; the test switches to
``b2`` while it embeds. The real server, model and store. What runs at exit is seen from inside
the server's process: an ``atexit`` hook (a ``sitecustomize`` on its ``PYTHONPATH``, run after
Python joined its non-daemon threads and before the teardown) names every thread still alive.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.server.test_protocol_robustness import ROOT, RawServer
from zettel_lsp.index.sparse_copy import copy_tree
from zettel_lsp.vault import Vault

SMALL = 30  # notes of one section and 3 links: enough for the server to self-tune
BIG = 2  # notes of many sections, each with a link: self-tuning embeds each again, a while
SECTIONS = 32  # the passages it embeds of a card at most (suggest.legs.MAX_QUERY_CHUNKS)
WORDS = 80  # per section (~250 tokens: one passage)
RUNS = 10
# seconds from ready to the search in German and shutdown, in the runs that wait for ready:
# at once (the multilingual model is loading at exit), or while self-tuning embeds cards
SELF_TUNING = (0.0, 1.0, 0.0, 2.0, 0.0)
FOREIGN = "Wie backe ich ein Brot mit Sauerteig und Roggenmehl?"  # German: not English
ALIVE = "zettel-test: alive at exit: "
HOOK = f"""
import atexit, sys, threading

def _alive_at_exit():
    for t in threading.enumerate():
        if t is not threading.main_thread() and t.name != "zettel-stdin":
            sys.stderr.write("{ALIVE}" + t.name + "\\n")
    sys.stderr.flush()

atexit.register(_alive_at_exit)
"""


@dataclass(frozen=True)
class Branches:
    vault: Path
    index: Path  # the index of branch b2 (a template: each run takes a copy)
    cache: Path
    hook: Path


def _git(vault: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(vault), *args], check=True, capture_output=True)


def _words(rng: random.Random) -> str:
    syllables = "ka lo mi ren tu sa vor bel qui dan ex or pla ne ti".split()
    return " ".join(
        "".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(WORDS)
    )


def _write_small(vault: Path, rng: random.Random) -> None:
    for i in range(SMALL):
        links = " ".join(f"[[small-{(i + d) % SMALL:02d}]]" for d in (1, 2, 5))
        text = f"# Small {i}\n\n{_words(rng)} {links}\n"
        (vault / f"small-{i:02d}.md").write_text(text, encoding="utf-8")


def _write_big(vault: Path, rng: random.Random) -> None:
    """Notes of many sections, each with its own link: self-tuning un-links them all, so it
    embeds every passage of such a card again (a model call of a second or so)."""
    for i in range(BIG):
        parts = [f"# Big {i}"]
        for k in range(SECTIONS):
            parts.append(f"## Part {k}\n\n{_words(rng)} [[small-{(7 * i + k) % SMALL:02d}]]")
        (vault / f"big-{i}.md").write_text("\n\n".join(parts) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def branches(tmp_path_factory: pytest.TempPathFactory) -> Branches:
    root = tmp_path_factory.mktemp("branches")
    vault = root / "vault"
    vault.mkdir()
    rng = random.Random(44)
    _git(vault, "init", "-q", "-b", "main")
    _write_small(vault, rng)
    _write_big(vault, rng)
    _git(vault, "add", "-A")
    _git(vault, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "main")
    _git(vault, "checkout", "-q", "-b", "b2")
    _write_small(vault, rng)
    _git(vault, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "b2")
    v = Vault(vault, root / "index", cache_dir=root / "cache")
    try:
        v.open()
    finally:
        v.close()
    _git(vault, "checkout", "-q", "main")
    hook = root / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK, encoding="utf-8")
    return Branches(vault, root / "index", root / "cache", hook)


def _phase(srv: RawServer) -> str:
    answer = srv.call("workspace/executeCommand", {"command": "zettel.status", "arguments": []})
    vaults = answer["result"]["vaults"]
    return str(vaults[0]["phase"]) if vaults else "starting"


def _run(
    b: Branches, index: Path, *, checkout_after: float, until_ready: bool, self_tuning: float
) -> dict[str, Any]:
    """Start on ``main`` with the index of ``b2``, switch to ``b2`` ``checkout_after`` seconds
    after ``initialized``, then ``shutdown`` and ``exit``: at once (while the switch is being
    embedded), or ``self_tuning`` seconds after ready (while the suggestions' weights are being
    chosen) and a search in German (which starts loading the multilingual model)."""
    _git(b.vault, "checkout", "-q", "-f", "main")
    shutil.rmtree(index, ignore_errors=True)
    copy_tree(b.index, index, ignore=shutil.ignore_patterns("lock"))
    srv = RawServer({"PYTHONPATH": f"{b.hook}:{ROOT}"})
    try:
        srv.initialize(b.vault, {"cacheDir": str(b.cache), "indexDir": str(index)})
        time.sleep(checkout_after)
        at_checkout = _phase(srv)
        _git(b.vault, "checkout", "-q", "b2")
        at_exit, deadline = _phase(srv), time.monotonic() + 60
        while until_ready and at_exit != "ready" and time.monotonic() < deadline:
            time.sleep(0.5)
            at_exit = _phase(srv)
        if until_ready:
            time.sleep(self_tuning)  # no request meanwhile: self-tuning yields to them
            search = {"command": "zettel.search", "arguments": [{"query": FOREIGN}]}
            assert "result" in srv.call("workspace/executeCommand", search)
        code = srv.shutdown_and_exit()
    finally:
        srv.kill()
    err = srv.stderr_text()
    alive = [line.removeprefix(ALIVE) for line in err.splitlines() if line.startswith(ALIVE)]
    return {
        "code": code,
        "at_checkout": at_checkout,
        "at_exit": at_exit,
        "alive": alive,
        "err": err,
    }


def test_every_exit_is_clean_whatever_runs(branches: Branches, tmp_path: Path) -> None:
    runs = []
    for i in range(RUNS):
        until_ready = i % 2 == 1
        checkout_after = 1.0 + (i % 3) / 2
        self_tuning = SELF_TUNING[i // 2] if until_ready else 0.0
        runs.append(
            _run(
                branches,
                tmp_path / "index",
                checkout_after=checkout_after,
                until_ready=until_ready,
                self_tuning=self_tuning,
            )
        )
    summary = [{k: v for k, v in r.items() if k != "err"} for r in runs]
    for r in runs:
        assert r["code"] == 0, (summary, r["err"][-2000:])
        assert "terminate called" not in r["err"], (summary, r["err"][-2000:])
        assert r["alive"] == [], (summary, r["err"][-2000:])
        assert "still running" not in r["err"], (summary, r["err"][-2000:])
