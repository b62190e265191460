"""Anchor text as a search leg, measured held out (issue #46, item 1).

    python benchmarks/anchor_text.py [--collections obsidian-help,cacm,cisi,hotpotqa100,musique100]
                                     [--work DIR] [--json OUT.json]
                                     [--extra NAME=VAULT,JUDGED[,INDEX] ...]

A card's *anchor text* is what other cards say about it: the engine's anchor-text leg
(``zettel_lsp/search/anchors.py``: the sentence around every link to the card in another card,
links as their visible text; a bare list of links such as a materialised collection's
``## Cites`` entries left out, so those titles are not counted twice). Two variants are
measured beside it: ``+mentions`` adds the sentence around every confident unlinked mention
(the ones "Link N confident mentions" would link), ``+cited-by`` keeps each bare list entry as
the linking card's title (the classic citation-context signal); ``--dense`` also embeds each
card's anchor text with the dense model (one vector per card) as a leg of its own.

The engine's leg comes with :mod:`tune`'s prepared legs; a variant's texts get the same BM25
(``anchors.terms``, k1 1.2, b 0.75) in memory. Each leg joins the engine's fusion (DBSF)
beside today's legs at each weight in ``WEIGHTS``; every figure comes from :mod:`tune`'s
prepared hit lists and the engine's own ranking (``SearchEngine.rank_tiers``).
Leave-one-collection-out: for each collection, the (leg, weight) with the best mean nDCG@10
over the others is scored on it.

Also printed: anchor coverage (the share of judged relevant cards with any anchor text), the
graph's whole effect (anchor leg and graph rerank against neither) and, for collections whose
queries carry categories, nDCG@10 per category.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

try:  # run as a script (benchmarks/ on sys.path) or imported from the project root (tests)
    import tune  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - the tests' import path
    from benchmarks import tune

from zettel_lsp.eval.metrics import query_metrics
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.search import anchors
from zettel_lsp.search.anchors import AnchorIndex
from zettel_lsp.search.engine import ANCHOR
from zettel_lsp.search.fusion import LegHit
from zettel_lsp.search.suggest.mentions import ranked_mentions

WEIGHTS = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5)
VARIANTS = ("links+mentions", "links+cited-by")  # the engine's leg ("anchor") is "links"
DENSE_VARIANTS = ("links", "links+cited-by")


def anchor_texts(graph: LinkGraph, variant: str) -> dict[str, str]:
    """Target card -> its anchor text in ``variant`` (see the module); cards that have some."""
    index = AnchorIndex.of(graph)
    found = {t: [index.text(t)] for t in index.cards()}
    for path, card in sorted(graph.cards.items()):
        if variant == "links+cited-by":
            for rl in graph.links_of(path):
                t, x = rl.target, rl.link
                if t is None or t == path or x.is_embed:
                    continue
                if anchors.sentence_around(card, x.span.start, x.span.end) is None:
                    found.setdefault(t, []).append(card.title)
        if variant == "links+mentions":
            for m in ranked_mentions(graph, card):
                said = anchors.sentence_around(card, m.mentions[0].start, m.mentions[0].end)
                if m.confident and m.target != path and said:
                    found.setdefault(m.target, []).append(said)
    return {t: " ".join(" ".join(v).split()[: anchors.CAP]) for t, v in found.items()}


@dataclass(slots=True)
class BM25:
    """Okapi BM25 over a few thousand short documents, in memory."""

    docs: dict[str, Counter[str]]
    lengths: dict[str, int]
    idf: dict[str, float]
    avg: float
    k1: float = 1.2
    b: float = 0.75

    @classmethod
    def of(cls, texts: dict[str, str]) -> BM25:
        docs = {k: Counter(anchors.terms(v)) for k, v in texts.items()}
        lengths = {k: sum(c.values()) for k, c in docs.items()}
        df: Counter[str] = Counter()
        for c in docs.values():
            df.update(c.keys())
        n = len(docs)
        idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        avg = statistics.fmean(lengths.values()) if lengths else 1.0
        return cls(docs, lengths, idf, avg)

    def search(self, query: str, n: int) -> list[tuple[str, float]]:
        q = [t for t in dict.fromkeys(anchors.terms(query)) if t in self.idf]
        scores: dict[str, float] = {}
        for path, c in self.docs.items():
            norm = self.k1 * (1 - self.b + self.b * self.lengths[path] / self.avg)
            s = sum(self.idf[t] * c[t] * (self.k1 + 1) / (c[t] + norm) for t in q if t in c)
            if s > 0:
                scores[path] = s
        return sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:n]


def add_anchor_leg(coll: tune.Collection, variant: str) -> dict[str, str]:
    """Run the variant's anchor leg for every prepared query (as ``anchor/VARIANT``)."""
    engine = coll.engine
    assert engine is not None
    texts = anchor_texts(engine.graph, variant)
    if variant == "links":  # the engine's own leg, prepared with the others
        return texts
    index = BM25.of(texts)
    chunks = engine.first_chunks(sorted(texts))
    for p in coll.prepared:
        hits = index.search(p.golden.query, tune.PREPARED)
        p.legs[f"anchor/{variant}"] = [
            LegHit(path, chunks[path], s) for path, s in hits if path in chunks
        ]
    return texts


def add_dense_leg(coll: tune.Collection, variant: str, texts: dict[str, str]) -> None:
    """The same anchor texts embedded by the dense model (one vector per card, the model's
    own truncation), as ``anchor-dense/VARIANT``: cosine against the query's embedding."""
    import numpy as np

    engine = coll.engine
    assert engine is not None
    paths = sorted(texts)
    if not paths:
        for p in coll.prepared:
            p.legs[f"anchor-dense/{variant}"] = []
        return
    vecs = np.asarray(engine.embedder.embed([texts[x] for x in paths]), dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-9
    chunks = engine.first_chunks(paths)
    for p in coll.prepared:
        q = np.asarray(engine.query_vector(p.query.text), dtype=np.float32)
        sims = vecs @ (q / (np.linalg.norm(q) + 1e-9))
        order = np.argsort(-sims)[: tune.PREPARED]
        p.legs[f"anchor-dense/{variant}"] = [
            LegHit(paths[i], chunks[paths[i]], float(sims[i])) for i in order if paths[i] in chunks
        ]


def coverage(coll: tune.Collection, texts: dict[str, str]) -> float:
    relevant = {r for p in coll.prepared for r in p.golden.relevant}
    return len(relevant & texts.keys()) / len(relevant) if relevant else 0.0


def weighted(leg: str, w: float) -> tune.Config:
    """Today's defaults with ``leg`` at weight ``w`` in place of the engine's anchor leg."""
    weights = tuple((x, v) for x, v in tune.TODAY.weights if x != ANCHOR)
    if leg == ANCHOR:
        return replace(tune.TODAY, weights=(*weights, (ANCHOR, w)))
    return replace(tune.TODAY, weights=(*weights, (leg, w)), legs=(*tune.TODAY.legs, leg))


NO_ANCHOR = weighted(ANCHOR, 0.0)


def configs(dense: bool = False) -> dict[str, tune.Config]:
    out = {"no anchor": NO_ANCHOR}
    legs = [ANCHOR] + [f"anchor/{v}" for v in VARIANTS]
    legs += [f"anchor-dense/{v}" for v in DENSE_VARIANTS] if dense else []
    for leg in legs:
        for w in WEIGHTS[1:]:
            out[f"{leg} w={w:g}"] = weighted(leg, w)
    return out


def per_category(coll: tune.Collection, cfg: tune.Config) -> dict[str, float]:
    by: dict[str, list[float]] = {}
    for p in coll.prepared:
        ranked = tune.ranking(coll, p, cfg, tune.DEEPEST)
        m = query_metrics(ranked, set(p.golden.relevant), set(p.golden.partial), tune.K)
        by.setdefault(p.golden.category or "-", []).append(m["ndcg@10"])
    return {c: statistics.fmean(v) for c, v in sorted(by.items())}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--collections", default="obsidian-help,cacm,cisi,hotpotqa100,musique100")
    ap.add_argument("--work", type=Path, default=Path.home() / ".cache" / "zettel-lsp" / "tune")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--extra", action="append", default=[], metavar="NAME=VAULT,JUDGED[,INDEX]")
    ap.add_argument("--dense", action="store_true", help="also the anchor texts' dense leg")
    args = ap.parse_args(argv)
    names = [n for n in args.collections.split(",") if n]
    colls = open_collections(names, args.extra, args.work)
    report: dict[str, Any] = {"coverage": {}, "anchor_cards": {}, "index_s": {}}
    for c in colls:
        for variant in ("links", *VARIANTS):
            t = time.perf_counter()
            texts = add_anchor_leg(c, variant)
            report["index_s"][f"{c.name} {variant}"] = round(time.perf_counter() - t, 2)
            report["coverage"][f"{c.name} {variant}"] = round(coverage(c, texts), 3)
            report["anchor_cards"][f"{c.name} {variant}"] = len(texts)
            if args.dense and variant in DENSE_VARIANTS:
                t = time.perf_counter()
                add_dense_leg(c, variant, texts)
                report["index_s"][f"{c.name} {variant} dense"] = round(time.perf_counter() - t, 2)
    tune.memoise_evidence()
    cfgs = configs(args.dense)
    table = {label: {c.name: tune.score(c, cfg) for c in colls} for label, cfg in cfgs.items()}
    names = [c.name for c in colls]
    report["rows"] = table
    report["loco"] = loco(table, names)
    # the engine's leg alone: its weight chosen held out (the variants left out of the choice)
    engine_rows = {
        lb: r for lb, r in table.items() if lb == "no anchor" or lb.startswith("anchor w=")
    }
    report["loco, the engine's leg"] = loco(engine_rows, names)
    no_graph = replace(tune.TODAY, strength=0.0)
    report["no graph"] = {c.name: tune.score(c, no_graph) for c in colls}
    best = max(table, key=lambda lb: statistics.fmean(table[lb][n]["ndcg@10"] for n in names))
    report["best over all"] = best
    report["categories"] = {
        c.name: {lb: per_category(c, cfgs[lb]) for lb in ("no anchor", best)}
        for c in colls
        if len({p.golden.category for p in c.prepared}) > 1
    }
    print_report(report, names)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


def open_collections(names: list[str], extras: list[str], work: Path) -> list[tune.Collection]:
    found = [
        (n, tune.obsidian_help(work) if n == "obsidian-help" else tune.beir(n, work)) for n in names
    ]
    found += [(s.partition("=")[0], tune.extra(s, work)) for s in extras]
    out = []
    for name, c in found:
        if c is None:
            print(f"skipped {name}: its data is missing", file=sys.stderr)
            continue
        t = time.perf_counter()
        tune.prepare(c, tune.PREPARED)
        print(f"{c.name}: legs fetched in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        out.append(c)
    return out


def loco(table: dict[str, dict[str, dict[str, float]]], names: list[str]) -> dict[str, Any]:
    """Per held-out collection: the row best on the others, and its figure there (ties: the
    row listed first, today's defaults)."""
    out = {}
    for held in names:
        others = [n for n in names if n != held] or [held]
        chosen = max(
            table, key=lambda lb: statistics.fmean(table[lb][n]["ndcg@10"] for n in others)
        )
        out[held] = {
            "chosen": chosen,
            "ndcg@10": table[chosen][held]["ndcg@10"],
            "today": table["no anchor"][held]["ndcg@10"],
        }
    return out


def print_report(report: dict[str, Any], names: list[str]) -> None:
    print("\nanchor coverage (judged relevant cards with anchor text) / cards with anchor text")
    for key, v in report["coverage"].items():
        print(f"  {key}: {v:.3f} / {report['anchor_cards'][key]} ({report['index_s'][key]} s)")
    for key, v in report["index_s"].items():
        if key.endswith(" dense"):
            print(f"  {key}: embedded in {v} s")
    print("\nnDCG@10 per collection")
    print("| configuration | " + " | ".join(names) + " | mean |")
    print("|---|" + "---|" * (len(names) + 1))
    rows = {**report["rows"], "no graph (no anchor, no rerank)": report["no graph"]}
    for label, per in rows.items():
        cells = [per[n]["ndcg@10"] for n in names]
        print(
            f"| {label} | "
            + " | ".join(f"{x:.3f}" for x in cells)
            + f" | {statistics.fmean(cells):.4f} |"
        )
    print(f"\nbest over all: {report['best over all']}")
    for key in ("loco", "loco, the engine's leg"):
        print(
            f"\nleave-one-collection-out ({key}: every row above a candidate)"
            if key == "loco"
            else f"\nleave-one-collection-out ({key}: its weight only)"
        )
        print("| held out | chosen on the others | held-out nDCG@10 | no anchor |")
        print("|---|---|---|---|")
        for n, row in report[key].items():
            print(f"| {n} | {row['chosen']} | {row['ndcg@10']:.3f} | {row['today']:.3f} |")
        held = [r["ndcg@10"] for r in report[key].values()]
        today = [r["today"] for r in report[key].values()]
        print(f"| mean | | {statistics.fmean(held):.4f} | {statistics.fmean(today):.4f} |")
    for name, rows_ in report["categories"].items():
        print(f"\n{name}: nDCG@10 per category")
        for label, cats in rows_.items():
            print(f"  {label}: " + ", ".join(f"{c} {v:.3f}" for c, v in cats.items()))


if __name__ == "__main__":
    raise SystemExit(main())
