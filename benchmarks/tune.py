"""Choose the ranking parameters by leave-one-collection-out, and print the quality table.

    python benchmarks/tune.py [--collections obsidian-help,cacm,cisi,hotpotqa100,musique100]
                              [--work DIR] [--json OUT.json] [--grid none|small|full]
                              [--extra NAME=VAULT,JUDGED[,INDEX] ...] [--known-item 0,0.5,1]

Every judged collection is opened once (obsidian-help's vault with its 52 English judged
queries; the BEIR collections of ``../shared/data/ir`` materialised as vaults, see
``zettel-lsp eval-beir``). Each leg runs once per query at ``PREPARED`` chunks; a configuration
(leg weights, RRF k, leg depth, graph-rerank strength) is then scored by the engine's own tiered
ranking (``SearchEngine.rank_tiers``: the same fusion, graph rerank and tiers the server runs),
each tier cutting those hit lists to its depth, so every figure comes from one index in one run.
That ranking does not depend on the limit, so one ranking of 100 cards gives both the top-10
metrics and Recall@100.

Leave-one-collection-out: for each collection in turn, the configuration with the best mean
nDCG@10 over the *other* collections is scored on the held-out one. That held-out figure is the
honest estimate of quality on a collection nobody tuned on; the final defaults are the best
configuration over all collections.

``--extra`` adds a judged collection of your own: a vault and its judged queries (the format of
``zettel-lsp eval``), e.g. the planted set ``benchmarks/make_vault.py`` writes beside a
generated vault; its index goes to ``INDEX`` (default ``WORK/NAME/index``). ``--known-item``
lists the known-item boosts to try (``SearchOptions.known_item``; default: the default boost).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from zettel_lsp.eval.evaluate import GoldenQuery, load_golden
from zettel_lsp.eval.metrics import mean_metrics, query_metrics
from zettel_lsp.search.engine import (
    ALL_LEGS,
    ANCHOR,
    DEFAULT_FUSION,
    DEFAULT_KNOWN_ITEM,
    DEFAULT_WEIGHTS,
    SearchEngine,
    SearchOptions,
    uses_anchors,
)
from zettel_lsp.search.fusion import LegHit
from zettel_lsp.search.query import Query, parse_query
from zettel_lsp.search.rerank import RerankParams
from zettel_lsp.search.titles import TitleMatch
from zettel_lsp.vault import Vault

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
VAULTS = SHARED / "data" / "vaults"
IR = SHARED / "data" / "ir"
EVAL = SHARED / "eval"
DEEPEST = 100  # cards ranked per query; R@100 needs 100
# chunks each leg fetches once per query: the tiers of depth 20 or 30 (x2, x4, ...) cut from it
# reach 100 cards within it; a tier deeper than this sees the lists end (and stops there)
PREPARED = 240
K = 10


@dataclass(slots=True)
class Prepared:
    """One query's title matches and leg hits at the deepest depth."""

    golden: GoldenQuery
    query: Query
    matches: list[TitleMatch]
    legs: dict[str, list[LegHit]]


@dataclass(slots=True)
class Collection:
    name: str
    vault: Path
    index_dir: Path
    queries: list[GoldenQuery]
    prepared: list[Prepared] = field(default_factory=list)
    engine: SearchEngine | None = None
    vault_service: Vault | None = None  # kept open for rank()


@dataclass(frozen=True, slots=True)
class Config:
    weights: tuple[tuple[str, float], ...]
    depth: int = 30
    rrf_k: int = 60
    strength: float = 1.0
    legs: tuple[str, ...] = ALL_LEGS
    fusion: str = "rrf"
    exact_first: bool = True
    hub_lines: bool = True  # the graph rerank's hub-line rule (issue #15)
    known_item: float = 0.0  # SearchOptions.known_item

    def options(self, limit: int = DEEPEST) -> SearchOptions:
        return SearchOptions(
            limit=limit,
            legs=self.legs,
            graph=self.strength > 0,
            rerank=RerankParams(strength=self.strength)
            if self.hub_lines
            else RerankParams(strength=self.strength, line_credit=0.0),
            depth=self.depth,
            rrf_k=self.rrf_k,
            weights=dict(self.weights),
            fusion=self.fusion,
            exact_title_first=self.exact_first,
            known_item=self.known_item,
        )

    def label(self) -> str:
        w = " ".join(f"{leg}={v:g}" for leg, v in self.weights if leg in (*self.legs, ANCHOR))
        k = f" k={self.rrf_k}" if self.fusion == "rrf" else ""
        ki = f" known-item={self.known_item:g}" if self.known_item else ""
        return f"{self.fusion}: {w} depth={self.depth}{k} graph={self.strength:g}{ki}"


def obsidian_help(work: Path) -> Collection | None:
    vault = VAULTS / "obsidian-help-en"
    golden = EVAL / "obsidian-help.golden.json"
    if not (vault.is_dir() and golden.is_file()):
        return None
    queries = [g for g in load_golden(golden) if g.category != "multilingual"]
    return Collection("obsidian-help", vault, work / "obsidian-help" / "index", queries)


def beir(name: str, work: Path) -> Collection | None:
    from zettel_lsp.eval.beir import judged_queries, load_beir, materialise

    folder = IR / name
    if not folder.is_dir():
        return None
    coll = load_beir(folder)
    vault = work / name / "vault"
    paths = materialise(coll, vault)
    return Collection(name, vault, work / name / "index", judged_queries(coll, paths))


def extra(spec: str, work: Path) -> Collection | None:
    """``NAME=VAULT,JUDGED[,INDEX]``: a vault with judged queries of your own."""
    name, _, rest = spec.partition("=")
    parts = [x.strip() for x in rest.split(",")]
    if not name or len(parts) not in (2, 3):
        raise SystemExit(f"--extra expects NAME=VAULT,JUDGED[,INDEX], got {spec!r}")
    vault, judged = Path(parts[0]), Path(parts[1])
    if not (vault.is_dir() and judged.is_file()):
        return None
    index = Path(parts[2]) if len(parts) == 3 else work / name / "index"
    return Collection(name, vault, index, load_golden(judged))


def prepare(coll: Collection, deepest: int) -> None:
    """Open the index (building it if needed) and run every leg once per query."""
    vault = Vault(coll.vault, coll.index_dir)
    vault.open()
    engine = vault.engine
    engine.search("warm up the model")
    opts = SearchOptions(limit=deepest, depth=deepest)
    for g in coll.queries:
        q = parse_query(g.query)
        matches = engine.titles.search(q, deepest)
        coll.prepared.append(Prepared(g, q, matches, engine.run_legs(q, opts, matches)))
    coll.engine = engine
    coll.vault_service = vault


def ranking(coll: Collection, p: Prepared, cfg: Config, limit: int = DEEPEST) -> list[str]:
    assert coll.engine is not None
    opts = cfg.options(limit)
    keep = (*cfg.legs, ANCHOR) if uses_anchors(opts) else cfg.legs

    def fetch(d: int) -> tuple[dict[str, list[LegHit]], list[TitleMatch]]:
        # the anchor leg is the graph's: it runs when the graph is on and it has a weight
        legs = {leg: hits[:d] for leg, hits in p.legs.items() if leg in keep}
        return legs, p.matches[:d]

    return [r.path for r in coll.engine.rank_tiers(p.query, fetch, opts)]


def score(coll: Collection, cfg: Config) -> dict[str, float]:
    rows = []
    for p in coll.prepared:
        # one ranking: its first 10 are what a user asking for 10 sees (engine.py's tiers)
        ranked = ranking(coll, p, cfg, DEEPEST)
        m = query_metrics(ranked, set(p.golden.relevant), set(p.golden.partial), K)
        m["recall@100"] = _recall(ranked, p.golden.relevant, 100)
        rows.append(m)
    return mean_metrics(rows)


def _recall(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    rel = set(relevant)
    return len(rel & set(ranked[:k])) / len(rel) if rel else 0.0


def grid(
    kind: str,
    depths: tuple[int, ...] = (20, 30, 50, 100),
    known_items: tuple[float, ...] = (DEFAULT_KNOWN_ITEM,),
) -> list[Config]:
    """Every fusion function with its own weight ranges (BM25's weight is fixed at 1)."""
    small = kind == "small"
    spaces = {
        "rrf": {
            "dense": (1.0, 2.0) if small else (1.0, 1.5, 2.0, 3.0),
            "keyword": (0.0, 0.5) if small else (0.0, 0.25, 0.5, 1.0),
            "title": (0.0, 0.5) if small else (0.0, 0.25, 0.5, 1.0),
            "k": (60,) if small else (20, 60),
        },
        "convex": {
            "dense": (1.0, 2.0) if small else (0.5, 1.0, 1.5, 2.0, 3.0),
            "keyword": (0.0, 0.25) if small else (0.0, 0.1, 0.25, 0.5),
            "title": (0.0, 0.25) if small else (0.0, 0.1, 0.25, 0.5),
            "k": (60,),
        },
        "dbsf": {
            "dense": (1.0, 2.0) if small else (1.0, 1.25, 1.5, 1.75, 2.0),
            "keyword": (0.1, 1.0) if small else (0.0, 0.1, 0.5, 0.75, 1.0, 1.5),
            "title": (0.0, 0.5) if small else (0.0, 0.25, 0.5, 0.75),
            "k": (60,),
        },
    }
    depths = (30,) if small else depths
    strengths = (0.0, 1.0) if small else (0.0, 0.5, 1.0)
    anchor = (0.0, 1.0)  # the anchor-text leg's weight (benchmarks/anchor_text.py tunes it)
    out = []
    for fusion, sp in spaces.items():
        for dw, kw, tw, aw, rk, d, st, ki in itertools.product(
            sp["dense"], sp["keyword"], sp["title"], anchor, sp["k"], depths, strengths, known_items
        ):
            w = (("dense", dw), ("bm25", 1.0), ("keyword", kw), ("title", tw), (ANCHOR, aw))
            out.append(Config(w, d, rk, st, fusion=fusion, known_item=ki))
    return out


def single_legs() -> dict[str, Config]:
    return {
        f"{leg} only": Config(((leg, 1.0),), depth=DEEPEST, strength=0.0, legs=(leg,))
        for leg in ALL_LEGS
    }


NAIVE = Config((("dense", 1.0), ("bm25", 1.0)), depth=30, strength=0.0, legs=("dense", "bm25"))
TODAY = Config(
    tuple(DEFAULT_WEIGHTS.items()),
    depth=30,
    strength=1.0,
    fusion=DEFAULT_FUSION,
    known_item=DEFAULT_KNOWN_ITEM,
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--collections", default="obsidian-help,cacm,cisi,hotpotqa100,musique100")
    ap.add_argument("--work", type=Path, default=Path.home() / ".cache" / "zettel-lsp" / "tune")
    ap.add_argument(
        "--grid",
        choices=["none", "small", "full"],
        default="full",
        help="'none': only today's defaults and the fixed rows (ablations), no tuning",
    )
    ap.add_argument("--json", type=Path, help="write every figure here")
    ap.add_argument(
        "--depths",
        default="20,30",
        help="leg depths to try (default 20,30: depth 100 chose slightly better rankings but "
        "doubled search latency, over the 1.2x budget; docs/evaluation.md)",
    )
    ap.add_argument(
        "--extra",
        action="append",
        default=[],
        metavar="NAME=VAULT,JUDGED[,INDEX]",
        help="one more judged collection (repeatable), e.g. a generated vault's planted set",
    )
    ap.add_argument(
        "--known-item",
        default=f"{DEFAULT_KNOWN_ITEM:g}",
        help="known-item boosts to try, comma-separated (default: the default boost; 0 is off)",
    )
    args = ap.parse_args()

    found: list[tuple[str, Collection | None]] = []
    for name in args.collections.split(","):
        c = obsidian_help(args.work) if name == "obsidian-help" else beir(name, args.work)
        found.append((name, c))
    found += [(spec.partition("=")[0], extra(spec, args.work)) for spec in args.extra]
    colls: list[Collection] = []
    for name, c in found:
        if c is None:
            print(f"skipped {name}: its data is missing", file=sys.stderr)
            continue
        t = time.perf_counter()
        prepare(c, PREPARED)
        print(
            f"{c.name}: {len(c.queries)} queries, legs fetched in {time.perf_counter() - t:.1f} s",
            file=sys.stderr,
        )
        colls.append(c)
    if not colls:
        print("no collection found", file=sys.stderr)
        return 1

    if args.grid == "none":
        configs = [TODAY]
    else:
        configs = grid(
            args.grid,
            tuple(int(d) for d in args.depths.split(",")),
            tuple(float(x) for x in args.known_item.split(",")),
        )
    memoise_evidence()
    t = time.perf_counter()
    table: dict[Config, dict[str, dict[str, float]]] = {}
    for i, cfg in enumerate(configs):
        table[cfg] = {c.name: score(c, cfg) for c in colls}
        if i % 100 == 99:
            print(f"  {i + 1}/{len(configs)} configurations", file=sys.stderr)
    print(f"grid of {len(configs)} scored in {time.perf_counter() - t:.0f} s", file=sys.stderr)

    def best(names: Sequence[str]) -> Config:
        return max(
            configs,
            key=lambda cfg: (
                statistics.fmean(table[cfg][n]["ndcg@10"] for n in names),
                _prior(cfg),
            ),
        )

    names = [c.name for c in colls]
    final = best(names)
    loco: dict[str, dict[str, Any]] = {}
    for held in names if len(names) > 1 else []:
        chosen = best([n for n in names if n != held])
        loco[held] = {"config": chosen.label(), "metrics": table[chosen][held]}

    fixed = {
        "naive RRF(bm25, dense)": NAIVE,
        "today's defaults": TODAY,
        "today's defaults, no hub lines": replace(TODAY, hub_lines=False),
        "today's defaults, no known-item boost": replace(TODAY, known_item=0.0),
        "today's defaults, no anchor text": replace(
            TODAY, weights=tuple((leg, 0.0 if leg == ANCHOR else w) for leg, w in TODAY.weights)
        ),
    } | single_legs()
    fixed |= {
        "final": final,
        "final, no graph": replace(final, strength=0.0),
        "final, no exact-title-first": replace(final, exact_first=False),
    }
    report: dict[str, Any] = {
        "collections": {c.name: len(c.queries) for c in colls},
        "final": final.label(),
        "loco": loco,
        "rows": {label: {c.name: score(c, cfg) for c in colls} for label, cfg in fixed.items()},
        "cores": os.cpu_count(),
    }
    print_report(report, names)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


def _prior(cfg: Config) -> tuple[float, ...]:
    """Tie-break between equally good configurations: prefer today's defaults' neighbourhood."""
    w = dict(cfg.weights)
    return (
        cfg.fusion == DEFAULT_FUSION,
        -abs(cfg.depth - 30),
        -abs(cfg.rrf_k - 60),
        -abs(cfg.strength - 1.0),
        -sum(abs(w.get(leg, 0.0) - v) for leg, v in DEFAULT_WEIGHTS.items()),
        -abs(cfg.known_item - DEFAULT_KNOWN_ITEM),
    )


def memoise_evidence() -> None:
    """Score every configuration from one reading of each candidate card: the graph rerank's
    :func:`~zettel_lsp.search.rerank.evidence` depends only on the card, its chunk and the
    query's terms, and the configurations share the prepared chunks, so each (card, chunk,
    terms) is read once per run instead of once per configuration (the grid's main cost). The
    graphs stay open for the run, so their ids stay theirs."""
    from zettel_lsp.search import rerank

    read = rerank.evidence
    memo: dict[tuple[object, ...], object] = {}

    def evidence(graph, result, terms, *, hub_lines_only=False):  # type: ignore[no-untyped-def]
        chunk = result.chunk  # evidence reads its line range only
        span = (chunk.get("line_start"), chunk.get("line_end"))
        key = (id(graph), result.path, span, frozenset(terms), hub_lines_only)
        if key not in memo:
            memo[key] = read(graph, result, terms, hub_lines_only=hub_lines_only)
        return memo[key]

    rerank.evidence = evidence  # type: ignore[assignment]


def print_report(report: dict[str, Any], names: list[str]) -> None:
    print("\nnDCG@10 / MRR / R@100 per collection (one index per collection, one run)")
    print("| configuration | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for label, per in report["rows"].items():
        cells = [
            f"{per[n]['ndcg@10']:.3f} / {per[n]['mrr']:.3f} / {per[n]['recall@100']:.3f}"
            for n in names
        ]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print(f"\nfinal: {report['final']}")
    print("\nleave-one-collection-out (chosen on the others, scored on the held-out one)")
    print("| held out | chosen on the others | nDCG@10 | nDCG@5 | MRR |")
    print("|---|---|---|---|---|")
    for n, row in report["loco"].items():
        m = row["metrics"]
        cells = f"{m['ndcg@10']:.3f} | {m['ndcg@5']:.3f} | {m['mrr']:.3f}"
        print(f"| {n} | {row['config']} | {cells} |")


if __name__ == "__main__":
    raise SystemExit(main())
