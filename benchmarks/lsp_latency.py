"""LSP latency: the real server over stdio, driven the way an editor drives it.

    python benchmarks/lsp_latency.py VAULT [--json] [--client vscode|neovim] [--runs 3]
        [--queries GOLDEN.json] [--hover-samples 200] [--action-samples 200] [--seed 0]
        [--index-dir DIR] [--cache-dir DIR] [--server CMD] [--startup-only] [--ready-timeout S]

Starts ``python -m zettel_lsp`` as a subprocess, sends ``initialize`` with a real editor's client
capabilities (pytest-lsp's VS Code or Neovim set) and VAULT as the one workspace folder, then
``initialized``. From just after ``initialized`` (t0) it measures, concurrently:

- first answer: ``workspace/symbol`` with the first golden query, re-sent as soon as the previous
  answer arrives (20 ms apart), until one is non-empty; also the first answer of any kind;
- index ready: ``zettel.status`` polled every 50 ms until every vault's phase is ``ready``.

(``--startup-only`` stops here, also when the index is not ready within ``--ready-timeout``:
the start-up of a server that resumes an interrupted index, for ``benchmarks/scale.py``.)

Once ready, every request is sent alone and timed from send to parsed response:

- ``workspace/symbol`` for every golden query, ``--runs`` times;
- ``textDocument/hover`` on random cards (opened with ``didOpen``): half inside a ``[[wikilink]]``,
  half on a random word of a prose line;
- ``textDocument/codeAction`` on random cards, with a range covering one random line (3 in 4) or
  the whole document (1 in 4), and no diagnostics;
- ``codeAction/resolve`` of the "Add related links" action whenever codeAction offers it unresolved
  (the lazy path taken by clients that can resolve edits).

The server's memory (``server_memory``: peak RSS by ``VmHWM``, and RSS split into heap and file
pages, from ``/proc/PID/status``) is read once the index is ready and again just before
``shutdown``; the second peak covers the whole run.

Positions are in the encoding the server chose (UTF-16 unless the client offers UTF-8/32).
Prints n, median, p95 (nearest rank) and max per method in milliseconds, with the targets of the
issue (zettelkasten-13k, warm index, 2 cores): workspace/symbol p95 <= 30 ms, hover and codeAction
p95 <= 50 ms, first answer within 1 s of ``initialized``. Ends with ``shutdown`` + ``exit`` so the
index lock is released. The vault is never modified.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import random
import re
import shlex
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from zettel_lsp.notes.language import is_english
from zettel_lsp.notes.scan import iter_note_paths

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_QUERIES = ROOT.parent / "shared" / "eval" / "obsidian-help.golden.json"
CLIENTS = {"vscode": "visual_studio_code", "neovim": "neovim"}

SYMBOL = "workspace/symbol"
HOVER = "textDocument/hover"
HOVER_LINK = "hover on [[link]]"
HOVER_PROSE = "hover on prose"
ACTION = "textDocument/codeAction"
ACTION_LINE = "codeAction one line"
ACTION_DOC = "codeAction whole doc"
RESOLVE = "codeAction/resolve"
COMPLETION = "textDocument/completion"
COMPLETE_EMPTY = "completion [[ nothing typed"
COMPLETE_TYPED = "completion [[ + 3 letters"
COMPLETE_KEYS = "completion [[ key by key"
DOC_SYMBOL = "textDocument/documentSymbol"
CODE_LENS = "textDocument/codeLens"
LENS_RESOLVE = "codeLens/resolve"
DIAGNOSTICS = "diagnostics, card >= 50 links"
PREPARE_RENAME = "textDocument/prepareRename"
RENAME = "textDocument/rename"
METHODS = (
    SYMBOL,
    HOVER,
    HOVER_LINK,
    HOVER_PROSE,
    ACTION,
    ACTION_LINE,
    ACTION_DOC,
    RESOLVE,
    COMPLETION,
    COMPLETE_EMPTY,
    COMPLETE_TYPED,
    COMPLETE_KEYS,
    DOC_SYMBOL,
    CODE_LENS,
    LENS_RESOLVE,
    DIAGNOSTICS,
    PREPARE_RENAME,
    RENAME,
)
DIAGNOSTIC_LINKS = 50  # the "card with 50 links"
KEYSTROKE_MS = 100.0  # between the two "[" of "[[" typed key by key
INDEX_KEYS = (
    "cards",
    "cards_in_graph",
    "chunks",
    "cards_embedded",
    "model",
    "index_dir",
    "backend",
)
TARGETS_MS = {
    SYMBOL: 30.0,
    HOVER: 50.0,
    ACTION: 50.0,
    COMPLETION: 50.0,
    DOC_SYMBOL: 30.0,
    CODE_LENS: 30.0,
    DIAGNOSTICS: 30.0,
    PREPARE_RENAME: 30.0,
    RENAME: 1000.0,
    "first_answer": 1000.0,
}

REQUEST_TIMEOUT = 120.0
READY_TIMEOUT = 1800.0
FIRST_ANSWER_GAP = 0.02
STATUS_POLL = 0.05

T = TypeVar("T")

# ---------------------------------------------------------------------- statistics


def nearest_rank(values: list[float], q: float) -> float:
    """The smallest value with at least ``q`` of the values at or below it (p95: q=0.95)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def summary(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "median_ms": round(statistics.median(values), 2),
        "p95_ms": round(nearest_rank(values, 0.95), 2),
        "max_ms": round(max(values), 2),
        "mean_ms": round(statistics.fmean(values), 2),
    }


def cpu_seconds(pid: int | str) -> float | None:
    """CPU seconds used by process ``pid`` ("self" for this one), or the whole machine's busy
    seconds for ``pid="all"`` (from /proc; None where that does not exist)."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        if pid == "all":
            with open("/proc/stat", encoding="ascii") as f:
                cpu = [int(x) for x in f.readline().split()[1:]]
            return (sum(cpu[:3]) + sum(cpu[5:8])) / tick  # user nice system, irq softirq steal
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime stime
    except (OSError, ValueError, IndexError):
        return None


def server_memory(pid: int | None) -> dict[str, float] | None:
    """The server process's memory now, in MB, from ``/proc/PID/status`` (Linux): ``peak_mb``
    is its high-water mark (``VmHWM``: the largest RSS since it started), ``rss_mb`` the RSS now,
    split into ``anon_mb`` (its heap) and ``file_mb`` (mapped file pages the kernel can drop).
    None where there is no such file (not Linux, or the process is gone). With ``--server`` the
    pid is the command's own process: a wrapper that starts the server as a child is measured
    as the wrapper."""
    if pid is None:
        return None
    keys = {"VmHWM": "peak_mb", "VmRSS": "rss_mb", "RssAnon": "anon_mb", "RssFile": "file_mb"}
    out: dict[str, float] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name in keys:
                    out[keys[name]] = round(int(rest.split()[0]) / 1024, 1)  # kB
    except (OSError, ValueError, IndexError):
        return None
    return out or None


class CpuWatch:
    """Cores kept busy by the benchmark, the server and everything else over a stretch."""

    def __init__(self, server_pid: int | None) -> None:
        self.who: dict[str, int | str] = {"all": "all", "benchmark": "self"}
        if server_pid is not None:
            self.who["server"] = server_pid
        self._t0 = 0.0
        self._start: dict[str, float | None] = {}

    def start(self) -> None:
        self._t0 = time.perf_counter()
        self._start = {k: cpu_seconds(pid) for k, pid in self.who.items()}

    def stop(self) -> dict[str, float] | None:
        end = {k: cpu_seconds(pid) for k, pid in self.who.items()}
        wall = time.perf_counter() - self._t0
        used: dict[str, float] = {}
        for k, v in end.items():
            v0 = self._start.get(k)
            if v is None or v0 is None or wall <= 0:
                return None
            used[k] = (v - v0) / wall
        others = used.pop("all") - sum(used.values())
        out = {"seconds": round(wall, 1)}
        out |= {f"{k}_cores": round(v, 2) for k, v in used.items()}
        out["other_processes_cores"] = round(max(0.0, others), 2)
        return out


# ---------------------------------------------------------------------- text and positions

_LSP_LINES = re.compile(r"\r\n|\r|\n")
_OTHER_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_WIKILINK = re.compile(r"!?\[\[[^\[\]\n]+?\]\]")
_ANY_LINK = re.compile(r"!?\[\[[^\[\]\n]*\]\]|!?\[[^\]\n]*\]\([^)\n]*\)|<[^>\n]+>|`[^`\n]*`")
_WORD = re.compile(r"[^\W\d_]{3,}")
_HEADING_OR_RULE = re.compile(r"^\s*(#{1,6}\s|---|\*\*\*|___|\||>|<!--|%%)")


def units(text: str, encoding: str) -> int:
    """Length of ``text`` in the client's position units."""
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Card:
    rel: str
    uri: str
    text: str
    lines: list[str]  # split as LSP does (\n, \r\n, \r)
    body_lines: list[int]  # outside frontmatter and code fences
    links: list[tuple[int, int, int]] = field(default_factory=list)  # (line, start, end) cp
    prose: list[tuple[int, list[tuple[int, int]]]] = field(default_factory=list)  # line, words

    @property
    def usable(self) -> bool:
        # pygls splits lines with str.splitlines(), which also breaks at these: skip such texts
        return not any(ch in self.text for ch in _OTHER_BREAKS)


def read_card(vault: Path, rel: str) -> Card | None:
    path = vault / rel
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = _LSP_LINES.split(text)
    body: list[int] = []
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                start = i + 1
                break
    in_fence = False
    for i in range(start, len(lines)):
        if lines[i].lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if not in_fence:
            body.append(i)
    card = Card(rel, path.resolve().as_uri(), text, lines, body)
    for i in body:
        line = lines[i]
        card.links += [(i, m.start(), m.end()) for m in _WIKILINK.finditer(line)]
        if not line.strip() or _HEADING_OR_RULE.match(line):
            continue
        blocked = [(m.start(), m.end()) for m in _ANY_LINK.finditer(line)]
        words = [
            (m.start(), m.end())
            for m in _WORD.finditer(line)
            if not any(s <= m.start() < e for s, e in blocked)
        ]
        if len(words) >= 3:
            card.prose.append((i, words))
    return card


def position(card: Card, line: int, column: int, encoding: str) -> types.Position:
    return types.Position(line=line, character=units(card.lines[line][:column], encoding))


def line_range(card: Card, line: int, encoding: str) -> types.Range:
    return types.Range(
        start=types.Position(line=line, character=0),
        end=position(card, line, len(card.lines[line]), encoding),
    )


def document_range(card: Card, encoding: str) -> types.Range:
    last = len(card.lines) - 1
    return types.Range(
        start=types.Position(line=0, character=0),
        end=position(card, last, len(card.lines[last]), encoding),
    )


# ---------------------------------------------------------------------- the session


@dataclass
class Bench:
    client: LanguageClient
    vault: Path
    encoding: str = types.PositionEncodingKind.Utf16
    times: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in METHODS})
    empty: dict[str, int] = field(default_factory=lambda: dict.fromkeys(METHODS, 0))
    opened: set[str] = field(default_factory=set)
    server_caps: types.ServerCapabilities = field(default_factory=types.ServerCapabilities)
    version: int = 1

    async def timed(self, method: str, request: Awaitable[T], *extra: str) -> T:
        t0 = time.perf_counter()
        result = await asyncio.wait_for(request, REQUEST_TIMEOUT)
        ms = (time.perf_counter() - t0) * 1000
        for name in (method, *extra):
            self.times[name].append(ms)
            if not result:
                self.empty[name] += 1
        return result

    async def status(self) -> dict[str, Any]:
        result = await asyncio.wait_for(
            self.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="zettel.status", arguments=[])
            ),
            REQUEST_TIMEOUT,
        )
        return result if isinstance(result, dict) else {}

    def open(self, card: Card) -> None:
        if card.uri in self.opened:
            return
        self.opened.add(card.uri)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=card.uri, language_id="markdown", version=1, text=card.text
                )
            )
        )

    def close_all(self) -> None:
        for uri in sorted(self.opened):
            self.client.text_document_did_close(
                types.DidCloseTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=uri)
                )
            )
        self.opened.clear()

    async def symbol(self, query: str, *, record: bool = True) -> list[Any]:
        request = self.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
        if record:
            result = await self.timed(SYMBOL, request)
        else:
            result = await asyncio.wait_for(request, REQUEST_TIMEOUT)
        return list(result or [])


async def start_up(
    bench: Bench, query: str, ready_timeout: float = READY_TIMEOUT, strict: bool = True
) -> dict[str, Any]:
    """Right after ``initialized``: time to the first (non-empty) answer and to index ready.
    Not ready after ``ready_timeout`` s: an error if ``strict``, else ``index_ready_ms`` is None
    (the phases seen so far stay) once the first answer has come."""
    t0 = time.perf_counter()
    out: dict[str, Any] = {"phases_ms": {}}

    def since() -> float:
        return round((time.perf_counter() - t0) * 1000, 1)

    async def first_answer() -> None:
        attempts = after_ready = 0
        while True:
            got = await bench.symbol(query, record=False)
            attempts += 1
            out.setdefault("first_response_ms", since())
            if got:
                out["first_answer_ms"] = since()
                out["first_answer_attempts"] = attempts
                return
            if out.get("index_ready_ms") is not None:
                after_ready += 1
                if after_ready > 3:  # the query finds nothing even with the index ready
                    out["first_answer_ms"] = None
                    return
            await asyncio.sleep(FIRST_ANSWER_GAP)

    async def ready() -> None:
        while True:
            st = await bench.status()
            vaults = st.get("vaults", [])
            for v in vaults:
                out["phases_ms"].setdefault(str(v.get("phase")), since())
            if vaults and all(v.get("phase") == "ready" for v in vaults):
                out["index_ready_ms"] = since()
                out["status"] = st
                return
            if vaults and all(v.get("phase") in ("read-only", "failed") for v in vaults):
                raise RuntimeError(f"the server cannot use the index: {vaults}")
            if time.perf_counter() - t0 > ready_timeout:
                if strict:
                    raise RuntimeError(f"not ready after {ready_timeout} s: {st}")
                out["index_ready_ms"] = None
                out["status"] = st
                return
            await asyncio.sleep(STATUS_POLL)

    await asyncio.wait_for(
        asyncio.gather(first_answer(), ready()), max(ready_timeout, READY_TIMEOUT) + 60
    )
    return out


async def bench_symbols(bench: Bench, queries: list[str], runs: int, warmup: int) -> None:
    for q in queries[:warmup]:
        await bench.symbol(q, record=False)
    for _ in range(runs):
        for q in queries:
            await bench.symbol(q)


def sample_cards(
    cards: list[str], vault: Path, rng: random.Random, want: Callable[[Card], bool]
) -> Callable[[], Card | None]:
    """A sampler of random readable cards passing ``want``: each card once while there are
    untried ones, then random repeats (None if no card qualifies)."""
    order = list(cards)
    rng.shuffle(order)
    good: list[Card] = []
    state = {"next": 0}

    def draw() -> Card | None:
        while state["next"] < len(order):
            rel = order[state["next"]]
            state["next"] += 1
            card = read_card(vault, rel)
            if card is not None and card.usable and want(card):
                good.append(card)
                return card
        return rng.choice(good) if good else None

    return draw


async def bench_hover(
    bench: Bench, cards: list[str], samples: int, rng: random.Random, warmup: int
) -> dict[str, int]:
    links = sample_cards(cards, bench.vault, rng, lambda c: bool(c.links))
    prose = sample_cards(cards, bench.vault, rng, lambda c: bool(c.prose))
    plan: list[tuple[str, Card, types.Position]] = []
    for i in range(samples + warmup):
        kind = HOVER_LINK if i % 2 == 0 else HOVER_PROSE
        card = links() if kind == HOVER_LINK else prose()
        if card is None:
            kind, card = HOVER_PROSE, prose()
        if card is None:
            break
        if kind == HOVER_LINK:
            line, start, end = rng.choice(card.links)
            inner = (start + 3, end - 2) if card.lines[line][start] == "!" else (start + 2, end - 2)
            column = rng.randrange(inner[0], max(inner[0] + 1, inner[1]))
        else:
            line, words = rng.choice(card.prose)
            w_start, w_end = rng.choice(words)
            column = rng.randrange(w_start, w_end)
        plan.append((kind, card, position(card, line, column, bench.encoding)))
    for _, card, _ in plan:
        bench.open(card)
    await bench.status()  # every didOpen is processed before the first timed request
    answered = {"link_hovers_answered_as_link": 0, "prose_hovers_answered_as_link": 0}
    for i, (kind, card, pos) in enumerate(plan):
        params = types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=card.uri), position=pos
        )
        request = bench.client.text_document_hover_async(params)
        if i < warmup:
            await asyncio.wait_for(request, REQUEST_TIMEOUT)
            continue
        result = await bench.timed(HOVER, request, kind)
        as_link = result is not None and not _hover_text(result).startswith("**Related notes**")
        if as_link:
            key = "link" if kind == HOVER_LINK else "prose"
            answered[f"{key}_hovers_answered_as_link"] += 1
    bench.close_all()
    return answered


def _hover_text(hover: types.Hover) -> str:
    contents = hover.contents
    return contents.value if isinstance(contents, types.MarkupContent) else str(contents)


async def bench_actions(
    bench: Bench, cards: list[str], samples: int, rng: random.Random, warmup: int, resolves: int
) -> dict[str, int]:
    draw = sample_cards(cards, bench.vault, rng, lambda c: bool(c.body_lines))
    plan: list[tuple[str, Card, types.Range]] = []
    for i in range(samples + warmup):
        card = draw()
        if card is None:
            break
        if i % 4 == 3:
            plan.append((ACTION_DOC, card, document_range(card, bench.encoding)))
        else:
            lines = [n for n in card.body_lines if card.lines[n].strip()] or card.body_lines
            plan.append((ACTION_LINE, card, line_range(card, rng.choice(lines), bench.encoding)))
    for _, card, _ in plan:
        bench.open(card)
    await bench.status()
    counts = {"actions_offered": 0, "related_offered_unresolved": 0, "related_offered_resolved": 0}
    for i, (kind, card, rng_) in enumerate(plan):
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=card.uri),
            range=rng_,
            context=types.CodeActionContext(diagnostics=[]),
        )
        request = bench.client.text_document_code_action_async(params)
        if i < warmup:
            await asyncio.wait_for(request, REQUEST_TIMEOUT)
            continue
        result = await bench.timed(ACTION, request, kind)
        actions = [a for a in result or [] if isinstance(a, types.CodeAction)]
        counts["actions_offered"] += len(actions)
        for action in actions:
            if not action.title.startswith("Add related links"):
                continue
            if action.edit is not None:
                counts["related_offered_resolved"] += 1
                continue
            counts["related_offered_unresolved"] += 1
            if len(bench.times[RESOLVE]) < resolves:
                await bench.timed(RESOLVE, bench.client.code_action_resolve_async(action))
    bench.close_all()
    return counts


async def edit_and_complete(
    bench: Bench,
    card: Card,
    line: int,
    suffix: str,
    trigger: str | None,
    timer: Callable[[Awaitable[Any]], Awaitable[Any]] | None,
) -> list[types.CompletionItem]:
    """Send ``card`` with ``suffix`` appended to ``line`` (an unsaved edit), then ask for
    completion at the end of that line (``trigger``: the trigger character, else invoked);
    ``timer`` times the request (None: not timed). The items answered."""
    text_lines = list(card.lines)
    text_lines[line] = card.lines[line] + suffix
    bench.version += 1
    bench.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=card.uri, version=bench.version
            ),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(text="\n".join(text_lines))
            ],
        )
    )
    at = types.Position(line=line, character=units(text_lines[line], bench.encoding))
    request = bench.client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=card.uri),
            position=at,
            context=types.CompletionContext(
                trigger_kind=types.CompletionTriggerKind.TriggerCharacter,
                trigger_character=trigger,
            )
            if trigger
            else types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked),
        )
    )
    got = await (timer(request) if timer else asyncio.wait_for(request, REQUEST_TIMEOUT))
    items = got.items if isinstance(got, types.CompletionList) else got
    return list(items or [])


async def bench_editing(
    bench: Bench,
    cards: list[str],
    samples: int,
    rng: random.Random,
    warmup: int,
    renames: int,
    diagnostics: str = "auto",
    diagnostic_links: int = DIAGNOSTIC_LINKS,
    keystroke_ms: float = KEYSTROKE_MS,
) -> dict[str, Any]:
    """The note-editing methods (issue #16) on random cards: documentSymbol, codeLens (and the
    resolve of lenses sent without a command), prepareRename on the card's first link (else its
    first line), completion after `` [[`` appended to a prose line in one unsaved edit and then
    with three letters of another card's title, and `` [[`` typed key by key on another prose
    line (`` [`` and its completion request, ``keystroke_ms``, then `` [[``); diagnostics of the
    cards with at least ``diagnostic_links`` links (``auto``: pulled when the client declares
    pull and the server offers it, else timed from didOpen to the pushed notification;
    ``push``/``pull`` force one); rename of the cards with the most backlinks (the edit is not
    applied)."""
    caps = bench.server_caps
    draw = sample_cards(cards, bench.vault, rng, lambda c: bool(c.prose))
    plan = [c for c in (draw() for _ in range(samples + warmup)) if c is not None]
    titles = [Path(rel).stem for rel in cards]
    counts: dict[str, Any] = {"completion_items": 0, "lenses": 0, "symbols": 0}
    for i, card in enumerate(plan):
        record = i >= warmup
        bench.open(card)
        doc = types.TextDocumentIdentifier(uri=card.uri)

        async def timed(
            method: str, request: Awaitable[T], *extra: str, record: bool = record
        ) -> T:
            if record:
                return await bench.timed(method, request, *extra)
            return await asyncio.wait_for(request, REQUEST_TIMEOUT)

        if caps.document_symbol_provider:
            got = await timed(
                DOC_SYMBOL,
                bench.client.text_document_document_symbol_async(
                    types.DocumentSymbolParams(text_document=doc)
                ),
            )
            counts["symbols"] += len(got or [])
        if caps.code_lens_provider:
            lenses = await timed(
                CODE_LENS,
                bench.client.text_document_code_lens_async(types.CodeLensParams(text_document=doc)),
            )
            counts["lenses"] += len(lenses or [])
            for lens in lenses or []:
                if lens.command is None:
                    await timed(LENS_RESOLVE, bench.client.code_lens_resolve_async(lens))
        if caps.rename_provider and card.links:
            line, col = card.links[0][0], card.links[0][1] + 3  # inside the first link's name
            t0 = time.perf_counter()
            try:
                await asyncio.wait_for(
                    bench.client.text_document_prepare_rename_async(
                        types.PrepareRenameParams(
                            text_document=doc, position=position(card, line, col, bench.encoding)
                        )
                    ),
                    REQUEST_TIMEOUT,
                )
            except JsonRpcException:  # refused (an answer too): counted, timed
                counts["prepare_rename_refused"] = counts.get("prepare_rename_refused", 0) + 1
            if record:
                bench.times[PREPARE_RENAME].append((time.perf_counter() - t0) * 1000)
        if caps.completion_provider:
            line, _ = rng.choice(card.prose)
            typed = rng.choice(titles)[:3]
            # in one change each (as a paste or a fast client sends it): the meaning search
            # starts when the request arrives
            for method, suffix in ((COMPLETE_EMPTY, " [["), (COMPLETE_TYPED, " [[" + typed)):
                got_c = await edit_and_complete(
                    bench,
                    card,
                    line,
                    suffix,
                    "[" if method == COMPLETE_EMPTY else None,
                    lambda r, m=method: timed(COMPLETION, r, m),  # type: ignore[misc]
                )
                counts["completion_items"] += len(got_c)
            # key by key on another line, as an editor sends typing: " [" (a trigger
            # character: the client asks, the server searches ahead), a keystroke later " [["
            others = [ln for ln, _ in card.prose if ln != line]
            if others and keystroke_ms >= 0:
                key_line = rng.choice(others)
                await edit_and_complete(bench, card, key_line, " [", "[", None)
                await asyncio.sleep(keystroke_ms / 1000)
                got_c = await edit_and_complete(
                    bench,
                    card,
                    key_line,
                    " [[",
                    "[",
                    lambda r: timed(COMPLETE_KEYS, r),
                )
                counts["completion_items_keys"] = counts.get("completion_items_keys", 0) + len(
                    got_c
                )
    bench.close_all()
    counts["diagnostics"] = await bench_diagnostics(
        bench, cards, rng, warmup, diagnostics, diagnostic_links
    )
    counts["renames"] = await bench_renames(bench, cards, renames)
    return counts


async def bench_diagnostics(
    bench: Bench,
    cards: list[str],
    rng: random.Random,
    warmup: int,
    mode: str = "auto",
    min_links: int = DIAGNOSTIC_LINKS,
) -> dict[str, Any]:
    caps = bench.server_caps
    if not caps.diagnostic_provider and not caps.text_document_sync:
        return {"cards": 0}
    many = [c for c in (read_card(bench.vault, rel) for rel in cards) if c and c.usable]
    many = [c for c in many if len(c.links) >= min_links]
    rng.shuffle(many)
    # as the server decides: it pushes unless the client declares pull (Neovim 0.7.2 and
    # pytest-lsp's VS Code set do not); a pull request is answered either way
    text_caps = bench.client.capabilities.text_document if bench.client.capabilities else None
    client_pulls = bool(text_caps and text_caps.diagnostic)
    pull = bool(caps.diagnostic_provider) and (mode == "pull" or (mode == "auto" and client_pulls))
    if mode == "push" and client_pulls:
        raise SystemExit("--diagnostics push: this client profile pulls (the server never pushes)")
    for i, card in enumerate(many[:100]):
        record = i >= min(warmup, len(many) - 1)
        if pull:
            bench.open(card)
            request: Awaitable[Any] = bench.client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(
                    text_document=types.TextDocumentIdentifier(uri=card.uri)
                )
            )
            if record:
                await bench.timed(DIAGNOSTICS, request)
            else:
                await asyncio.wait_for(request, REQUEST_TIMEOUT)
        else:
            # pytest-lsp keeps the last publishDiagnostics per URI: forget it, open, poll
            bench.client.diagnostics.pop(card.uri, None)
            t0 = time.perf_counter()
            bench.open(card)
            while card.uri not in bench.client.diagnostics:
                if time.perf_counter() - t0 > REQUEST_TIMEOUT:
                    raise TimeoutError(f"no diagnostics pushed for {card.rel}")
                await asyncio.sleep(0.0005)
            if record:
                bench.times[DIAGNOSTICS].append((time.perf_counter() - t0) * 1000)
    bench.close_all()
    return {"cards": len(many), "mode": "pull" if pull else "push"}


async def bench_renames(bench: Bench, cards: list[str], renames: int) -> dict[str, Any]:
    """Rename (the WorkspaceEdit only, not applied) of the cards with the most wikilinks to them
    by file name, asked on one of those links (as a user renames from a link)."""
    if not bench.server_caps.rename_provider or renames <= 0:
        return {"cards": []}
    stems: dict[str, str] = {Path(rel).stem.lower(): rel for rel in cards}
    inbound: dict[str, int] = {}
    first: dict[str, tuple[Card, int, int]] = {}
    for rel in cards:
        card = read_card(bench.vault, rel)
        if card is None or not card.usable:
            continue
        for line, a, b in card.links:
            name = card.lines[line][a:b].lstrip("!").strip("[]").split("|")[0].split("#")[0]
            target = stems.get(Path(name).name.lower())
            if target is not None and target != rel:
                inbound[target] = inbound.get(target, 0) + 1
                first.setdefault(target, (card, line, a + 3))
    top = sorted(inbound, key=lambda r: (-inbound[r], r))[:renames]
    edited: list[dict[str, Any]] = []
    for rel in top:
        source, line, col = first[rel]
        bench.open(source)
        params = types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=source.uri),
            position=position(source, line, col, bench.encoding),
            new_name=Path(rel).stem + " renamed",
        )
        t0 = time.perf_counter()
        try:
            edit = await bench.timed(RENAME, bench.client.text_document_rename_async(params))
        except JsonRpcException as exc:  # an error answer: recorded, the benchmark goes on
            edited.append({"card": rel, "links_by_name": inbound[rel], "error": str(exc)})
            continue
        ms = round((time.perf_counter() - t0) * 1000, 1)
        changes = (edit.document_changes or []) if edit is not None else []
        edits = sum(len(c.edits) for c in changes if isinstance(c, types.TextDocumentEdit))
        edited.append(
            {
                "card": rel,
                "links_by_name": inbound[rel],
                "document_changes": len(changes),
                "text_edits": edits,
                "ms": ms,
            }
        )
    bench.close_all()
    return {"cards": edited}


# ---------------------------------------------------------------------- driver


def load_queries(path: Path, english_only: bool = False) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    items = data.get("queries", data) if isinstance(data, dict) else data
    queries = [str(item["query"]) for item in items if isinstance(item, dict) and item.get("query")]
    return [q for q in queries if is_english(q)] if english_only else queries


async def run(args: argparse.Namespace) -> dict[str, Any]:
    vault: Path = args.vault.resolve()
    queries = load_queries(args.queries, args.english_only)
    if not queries:
        raise SystemExit(f"no queries in {args.queries}")
    rng = random.Random(args.seed)
    cards = list(iter_note_paths(vault))
    init_options: dict[str, Any] = {}
    if args.index_dir:
        init_options["indexDir"] = str(args.index_dir.resolve())
    if args.cache_dir:
        init_options["cacheDir"] = str(args.cache_dir.resolve())
    command = shlex.split(args.server) if args.server else [sys.executable, "-m", "zettel_lsp"]

    out: dict[str, Any] = {
        "vault": str(vault),
        "notes_on_disk": len(cards),
        "client": args.client,
        "server": command,
        "queries": {
            "file": str(args.queries),
            "count": len(queries),
            "english_only": args.english_only,
            "runs": args.runs,
        },
        "seed": args.seed,
        "warmup_requests_per_method": args.warmup,
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_before": [round(x, 2) for x in os.getloadavg()],
        },
    }
    client = make_test_lsp_client()
    t_spawn = time.perf_counter()
    if args.log_file:
        client.log_messages = TimedLog(t_spawn)  # type: ignore[assignment]
    await client.start_io(*command)
    server = client._server
    if server is not None:
        print(f"server pid {server.pid}: {' '.join(command)}", file=sys.stderr)
    try:
        capabilities = client_capabilities(CLIENTS[args.client])
        client.capabilities = capabilities
        result = await asyncio.wait_for(
            client.initialize_async(
                types.InitializeParams(
                    process_id=os.getpid(),
                    capabilities=capabilities,
                    root_uri=vault.as_uri(),
                    workspace_folders=[types.WorkspaceFolder(uri=vault.as_uri(), name=vault.name)],
                    initialization_options=init_options or None,
                )
            ),
            REQUEST_TIMEOUT,
        )
        spawn_to_init = (time.perf_counter() - t_spawn) * 1000
        bench = Bench(client, vault)
        bench.encoding = str(result.capabilities.position_encoding or bench.encoding)
        bench.server_caps = result.capabilities
        client.initialized(types.InitializedParams())
        started = await start_up(
            bench, queries[0], args.ready_timeout, strict=not args.startup_only
        )
        started["spawn_to_initialize_result_ms"] = round(spawn_to_init, 1)
        status = started.pop("status")
        out["startup"] = started
        out["position_encoding"] = bench.encoding
        first_vault = (status.get("vaults") or [{}])[0]
        out["index"] = {k: first_vault.get(k) for k in INDEX_KEYS}
        # the server's own account of its start-up steps (seconds, in order), when ready
        out["startup"]["steps_s"] = first_vault.get("startup_seconds")
        server_pid = server.pid if server is not None else None
        out["server_memory"] = {"at_ready": server_memory(server_pid)}

        if args.startup_only:
            out["methods"] = {}
            out["targets"] = targets(out)
            out["server_messages"] = [m.message for m in client.messages]
            return out
        watch = CpuWatch(server.pid if server is not None else None)
        watch.start()
        await bench_symbols(bench, queries, args.runs, args.warmup)
        out["hover_answers"] = await bench_hover(bench, cards, args.hover_samples, rng, args.warmup)
        out["code_actions"] = await bench_actions(
            bench, cards, args.action_samples, rng, args.warmup, args.resolve_samples
        )
        out["editing"] = await bench_editing(
            bench,
            cards,
            args.editing_samples,
            rng,
            args.warmup,
            args.renames,
            args.diagnostics,
            args.diagnostic_links,
            args.keystroke_ms,
        )
        out["machine"]["cpu_during_measurement"] = watch.stop()
        out["methods"] = {
            m: summary(bench.times[m]) | {"empty": bench.empty[m]}
            for m in METHODS
            if bench.times[m]
        }
        out["targets"] = targets(out)
        out["server_messages"] = [m.message for m in client.messages]
    finally:
        if "server_memory" in out:  # the high-water mark over the whole run, before it ends
            out["server_memory"]["before_shutdown"] = server_memory(
                server.pid if server is not None else None
            )
        out["shutdown"] = await shut_down(client)
        out["machine"]["load_after"] = [round(x, 2) for x in os.getloadavg()]
        if args.log_file and isinstance(client.log_messages, TimedLog):
            client.log_messages.write(args.log_file)
    return out


class TimedLog(list[Any]):
    """The server's ``window/logMessage`` notifications with the second each arrived (from
    the server's spawn), for ``--log-file``: a timeline of what the server did."""

    def __init__(self, t0: float) -> None:
        super().__init__()
        self.t0 = t0
        self.seconds: list[float] = []

    def append(self, item: Any) -> None:
        self.seconds.append(time.perf_counter() - self.t0)
        super().append(item)

    def write(self, path: Path) -> None:
        lines = [f"{t:8.3f} {m.message}" for t, m in zip(self.seconds, self, strict=True)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def targets(out: dict[str, Any]) -> dict[str, Any]:
    checks: dict[str, Any] = {}
    for method in (
        SYMBOL,
        HOVER,
        ACTION,
        COMPLETION,
        DOC_SYMBOL,
        CODE_LENS,
        DIAGNOSTICS,
        PREPARE_RENAME,
        RENAME,
    ):
        if method not in out["methods"]:
            continue
        got = out["methods"].get(method, {}).get("p95_ms")
        limit = TARGETS_MS[method]
        checks[f"{method} p95"] = {
            "limit_ms": limit,
            "value_ms": got,
            "pass": got is not None and got <= limit,
        }
    first = out["startup"].get("first_answer_ms")
    checks["first answer"] = {
        "limit_ms": TARGETS_MS["first_answer"],
        "value_ms": first,
        "pass": first is not None and first <= TARGETS_MS["first_answer"],
    }
    return checks


async def shut_down(client: LanguageClient) -> dict[str, Any]:
    server = client._server
    t0 = time.perf_counter()
    clean = True
    try:
        await asyncio.wait_for(client.shutdown_session(), 60)
    except (TimeoutError, RuntimeError, OSError) as exc:
        clean = False
        print(f"shutdown failed ({exc!r}); terminating the server", file=sys.stderr)
        if server is not None and server.returncode is None:
            server.terminate()
            await asyncio.wait_for(server.wait(), 10)
    await client.stop()  # type: ignore[no-untyped-call]
    return {
        "clean": clean,
        "exit_code": server.returncode if server is not None else None,
        "ms": round((time.perf_counter() - t0) * 1000, 1),
    }


# ---------------------------------------------------------------------- output


def print_table(out: dict[str, Any]) -> None:
    m, s, ix = out["machine"], out["startup"], out["index"]
    print(
        f"{Path(out['vault']).name}: {ix.get('cards')} cards, {ix.get('chunks')} chunks "
        f"({ix.get('cards_embedded')} embedded), index {ix.get('index_dir')}"
    )
    print(
        f"client {out['client']} ({out['position_encoding']}); {m['cores']} cores, "
        f"Python {m['python']}, {m['platform']}; load {m['load_before']} -> {m['load_after']}"
    )
    print(
        f"start-up: spawn -> initialize result {s['spawn_to_initialize_result_ms']:.0f} ms; "
        f"after initialized: first response {s.get('first_response_ms', 0):.0f} ms, "
        f"first answer {s.get('first_answer_ms', 0):.0f} ms, "
        f"index ready {s.get('index_ready_ms') or 0:.0f} ms"
    )
    phases = ", ".join(f"{k} {v:.0f}" for k, v in s["phases_ms"].items())
    print(f"phases first seen (ms): {phases}")
    mem = out.get("server_memory") or {}
    for when in ("at_ready", "before_shutdown"):
        if got := mem.get(when):
            print(
                f"server memory {when.replace('_', ' ')}: peak RSS {got.get('peak_mb', 0):.0f} MB, "
                f"RSS {got.get('rss_mb', 0):.0f} MB (anon {got.get('anon_mb', 0):.0f}, "
                f"file {got.get('file_mb', 0):.0f})"
            )
    busy = m.get("cpu_during_measurement")
    if busy:
        print(
            f"CPU while measuring ({busy['seconds']:.0f} s), in cores: server "
            f"{busy.get('server_cores', '?')}, benchmark {busy['benchmark_cores']}, "
            f"other processes {busy['other_processes_cores']}"
        )
    print()
    print(f"{'method':<24} {'n':>5} {'median':>8} {'p95':>8} {'max':>8} {'empty':>6}  target")
    for name, r in out["methods"].items():
        check = out["targets"].get(f"{name} p95")
        verdict = ""
        if check:
            verdict = f"<= {check['limit_ms']:.0f}  {'pass' if check['pass'] else 'FAIL'}"
        indent = "" if "/" in name else "  "
        row = (
            f"{indent + name:<24} {r['n']:>5} {r['median_ms']:>8.1f} {r['p95_ms']:>8.1f} "
            f"{r['max_ms']:>8.1f} {r['empty']:>6}  {verdict}"
        )
        print(row.rstrip())
    first = out["targets"]["first answer"]
    print(
        f"{'first answer':<24} {'':>5} {'':>8} {'':>8} {first['value_ms'] or 0:>8.0f} {'':>6}  "
        f"<= {first['limit_ms']:.0f}  {'pass' if first['pass'] else 'FAIL'}"
    )
    print()
    if "hover_answers" in out:
        print(f"hover: {out['hover_answers']}; codeAction: {out['code_actions']}")
    print(f"editing: {out.get('editing')}")
    if out.get("server_messages"):
        print("server messages: " + " | ".join(out["server_messages"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--client", choices=sorted(CLIENTS), default="vscode")
    ap.add_argument("--index-dir", type=Path, help="default: the server's own index folder")
    ap.add_argument("--cache-dir", type=Path, help="default: the server's own cache folder")
    ap.add_argument("--queries", type=Path, default=DEFAULT_QUERIES, help="golden JSON")
    ap.add_argument(
        "--english-only",
        action="store_true",
        help="leave out the queries not in English (in an English vault such a query starts "
        "the multilingual phase for every card: hours of background work at 100k cards)",
    )
    ap.add_argument("--runs", type=int, default=3, help="rounds of the query list")
    ap.add_argument(
        "--log-file",
        type=Path,
        help="write the server's log messages here, each with its second since the spawn",
    )
    ap.add_argument("--hover-samples", type=int, default=200)
    ap.add_argument("--action-samples", type=int, default=200)
    ap.add_argument("--resolve-samples", type=int, default=100, help="at most this many resolves")
    ap.add_argument(
        "--editing-samples",
        type=int,
        default=200,
        help="cards for completion, documentSymbol, codeLens, prepareRename (0: skip)",
    )
    ap.add_argument("--renames", type=int, default=5, help="renames of the most linked cards")
    ap.add_argument(
        "--keystroke-ms",
        type=float,
        default=KEYSTROKE_MS,
        help="pause between the two brackets of the key-by-key completion (-1: skip it)",
    )
    ap.add_argument(
        "--diagnostics",
        choices=["auto", "push", "pull"],
        default="auto",
        help="auto: as the server decides (push unless the client declares pull)",
    )
    ap.add_argument(
        "--diagnostic-links",
        type=int,
        default=DIAGNOSTIC_LINKS,
        help="diagnostics are timed on cards with at least this many links",
    )
    ap.add_argument("--warmup", type=int, default=3, help="untimed requests per method first")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--server", help="server command (default: this Python -m zettel_lsp)")
    ap.add_argument(
        "--startup-only",
        action="store_true",
        help="measure start-up only (first answer, index ready), then shut down; not ready "
        "within --ready-timeout: index_ready_ms is null instead of an error",
    )
    ap.add_argument(
        "--ready-timeout",
        type=float,
        default=READY_TIMEOUT,
        help="seconds to wait for index ready (default %(default)s)",
    )
    args = ap.parse_args()
    if not args.vault.is_dir():
        ap.error(f"{args.vault} is not a folder")
    out = asyncio.run(run(args))
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print_table(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
