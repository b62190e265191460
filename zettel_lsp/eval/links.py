"""Link hold-out evaluation: can suggestions recover links that were removed?

For each held-out (src, dst) link, a copy of the vault un-links it (all held-out links at once):
variant ``mention`` turns the link into its visible text; variant ``removed`` deletes the sentence
that holds it. The copy is indexed once; then for each src, each ranker lists cards src does not
link to (nor is), scored by :class:`_Scores`. The rankers:

- ``ours``: what the server suggests: the legs of :func:`zettel_lsp.search.suggest.suggestion_legs`
  fused by weighted RRF (:data:`~zettel_lsp.search.suggest.DEFAULT_SUGGEST_FUSION`, or the legs
  and weights asked for); with ``ablate``, also the rows of :func:`ablations`;
- ``title``: exact title/alias match only (the unlinked mentions, in order of appearance), and
  ``title_specific``: the same cards as the server ranks them (:func:`mention_rankings`);
- ``bm25``: BM25 over src's text;
- ``adamic_adar``: Adamic-Adar on the remaining link graph (two hops).

A seed index (:func:`seed_index`, ``eval-links --seed-index DIR``) starts the copy's index from
an index of the same vault and model, so the indexer re-reads only the changed notes. The figures
equal a cold run's up to BM25's average chunk length, which an index fixes when first filled.
"""

from __future__ import annotations

import csv
import logging
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zettel_lsp.eval.metrics import mean_metrics, recall_at_k, reciprocal_rank
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.db import DB_FILE, DB_FILES, copy_db
from zettel_lsp.index.sparse_copy import copy_tree
from zettel_lsp.index.state import IndexState, read_state, write_state
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.search.calibrate import unlinked_text
from zettel_lsp.search.suggest import (
    DEFAULT_SUGGEST_FUSION,
    GRAPH_LEGS,
    LEG_DEPTH,
    SUGGEST_LEGS,
    SuggestFusion,
    by_specificity,
    fuse_suggestions,
    linked_targets,
    mention_suggestions,
    suggestion_legs,
    two_hop_neighbours,
)
from zettel_lsp.vault import Vault
from zettel_lsp.workdir import (
    WorkDirError,
    check_apart,
    claim_work_dir,
    make_temp_work_dir,
    remove_work_dir,
    write_marker,
)

log = logging.getLogger(__name__)

TOOL = "zettel-lsp eval-links"  # in the marker of the folders eval-links makes


@dataclass(frozen=True, slots=True)
class HeldOut:
    src: str
    dst: str


def load_holdout(path: Path) -> list[HeldOut]:
    with path.open(encoding="utf-8") as fh:
        return [HeldOut(r["src"], r["dst"]) for r in csv.DictReader(fh, delimiter="\t")]


def unlink_copy(vault: Path, copy: Path, held: Sequence[HeldOut], variant: str) -> int:
    """Copy ``vault`` to ``copy`` with the held-out links un-linked; returns links changed.

    ``copy`` must not exist yet and must be apart from the vault: nothing is ever replaced
    (:class:`WorkDirError` otherwise)."""
    if variant not in ("mention", "removed"):
        raise ValueError("variant is 'mention' or 'removed'")
    check_apart(copy, vault, what="vault copy")
    if copy.exists() or copy.is_symlink():
        raise WorkDirError(f"vault copy {copy} already exists; it is left untouched")
    shutil.copytree(vault, copy, symlinks=True)
    cards, _ = load_vault(vault)
    graph = LinkGraph.build(cards)
    changed = 0
    for src, dsts in _by_src(held).items():
        if src not in graph.cards:
            continue
        text, n = unlinked_text(graph, src, dsts, variant)
        changed += n
        (copy / src).write_text(text, encoding="utf-8")
    return changed


@dataclass(frozen=True, slots=True)
class HoldoutCopy:
    vault: Path  # the un-linked copy
    index_dir: Path  # where its index goes
    changed: int  # links un-linked


@dataclass(frozen=True, slots=True)
class SeedIndex:
    """An index of the vault to start the copy's index from, and the state fields it must
    have (``model``, ``chunker``: the index the copy would get anyway)."""

    folder: Path
    expect: Mapping[str, str]


def check_seed(seed: SeedIndex, vault: Path) -> IndexState:
    """The seed's state; :class:`WorkDirError` unless it is a local index of ``vault`` made
    with the expected model and chunker."""
    state = read_state(seed.folder)
    if state is None or not (seed.folder / "shard").is_dir():
        raise WorkDirError(f"seed index {seed.folder} holds no zettel-lsp index ({DB_FILE})")
    if state.vault != str(vault.resolve()):
        raise WorkDirError(
            f"seed index {seed.folder} is the index of {state.vault}, not of {vault.resolve()}"
        )
    if state.backend != "edge":
        raise WorkDirError(f"seed index {seed.folder} is on a Qdrant server ({state.backend})")
    for key, want in seed.expect.items():
        got = getattr(state, key)
        if got != want:
            raise WorkDirError(f"seed index {seed.folder} has {key} {got!r}, this run {want!r}")
    return state


@contextmanager
def _shared_lock(folder: Path) -> Iterator[None]:
    """A shared lock on an index folder's lock file, held while it is copied: refused while a
    zettel-lsp process holds the folder (it may be writing). Opened read-only: the folder is
    never written."""
    import fcntl

    lock = folder / "lock"
    if not lock.is_file():
        yield
        return
    with lock.open("rb") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            raise WorkDirError(
                f"seed index {folder} is in use by another zettel-lsp process; try again when it "
                "has finished"
            ) from exc
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


_INDEX_FILES = (*DB_FILES, "shard")


def seed_index(seed: SeedIndex, vault: Path, index_dir: Path, copy: Path) -> None:
    """Copy the index of ``vault`` in ``seed`` into ``index_dir`` (a folder eval-links made)
    as the index of ``copy``: its shard and parsed cards are copied, its state says ``copy``.
    The seed is only read."""
    check_apart(index_dir, seed.folder, what="index folder", vault_what="seed index")
    with _shared_lock(seed.folder):
        state = check_seed(seed, vault)
        for name in _INDEX_FILES:  # a previous run's index in this (marked) folder
            old = index_dir / name
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            else:
                old.unlink(missing_ok=True)
        copy_tree(seed.folder / "shard", index_dir / "shard")
        copy_db(seed.folder, index_dir)
    state.vault = str(copy.resolve())
    write_state(index_dir, state)


@contextmanager
def holdout_copy(
    vault: Path,
    held: Sequence[HeldOut],
    variant: str,
    index_dir: Path | None = None,
    *,
    seed: SeedIndex | None = None,
) -> Iterator[HoldoutCopy]:
    """The un-linked copy of ``vault`` (:func:`unlink_copy`) in a new temporary folder, which is
    removed on exit (its marker checked first). The index goes to ``index_dir``, which must be
    new, empty or marked by eval-links, and apart from the vault (it is marked and kept), or by
    default into the temporary folder; with ``seed`` it starts as a copy of that index of the
    vault (:func:`seed_index`). Raises :class:`WorkDirError` before anything is written when a
    folder or the seed is refused."""
    vault = vault.resolve()
    if index_dir is not None:
        claim_work_dir(index_dir, vault=vault, tool=TOOL, what="index folder")
        index_dir = index_dir.resolve()
    if seed is not None:
        seed = SeedIndex(seed.folder.resolve(), seed.expect)
        check_seed(seed, vault)
        if index_dir is not None:
            check_apart(index_dir, seed.folder, what="index folder", vault_what="seed index")
    work = make_temp_work_dir(vault=vault, tool=TOOL, prefix="zettel-lsp-eval-links-")
    try:
        if index_dir is not None:
            write_marker(index_dir, tool=TOOL, vault=str(vault))
        copy = work / "vault"
        changed = unlink_copy(vault, copy, held, variant)
        index = index_dir or work / "index"
        if seed is not None:
            index.mkdir(exist_ok=True)
            seed_index(seed, vault, index, copy)
        yield HoldoutCopy(copy, index, changed)
    finally:
        try:
            remove_work_dir(work, tool=TOOL, vault=vault)
        except (WorkDirError, OSError) as exc:
            log.error("the temporary vault copy %s was not removed: %s", work, exc)


@dataclass(slots=True)
class LinkEvalReport:
    pairs: int
    sources: int
    rankers: dict[str, dict[str, float]]
    legs_ms: dict[str, float] | None = None  # time to compute one source's legs: p50, p95


@dataclass(slots=True)
class _Scores:
    """Recall@5, Recall@10 and MRR per held-out pair; precision@5 per source (the share of its
    first five suggestions that are held-out links, over sources with at least one suggestion;
    ``suggested`` is their share)."""

    pairs: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    precision: dict[str, list[float]] = field(default_factory=dict)
    sources: Counter[str] = field(default_factory=Counter)

    def add(self, name: str, ranking: Sequence[str], dsts: set[str]) -> None:
        self.pairs.setdefault(name, []).extend(
            {
                "recall@5": recall_at_k(ranking, {dst}, 5),
                "recall@10": recall_at_k(ranking, {dst}, 10),
                "mrr": reciprocal_rank(ranking, {dst}),
            }
            for dst in sorted(dsts)
        )
        self.sources[name] += 1
        if top := ranking[:5]:
            self.precision.setdefault(name, []).append(len(dsts & set(top)) / len(top))

    def report(self, sources: int) -> LinkEvalReport:
        rankers: dict[str, dict[str, float]] = {}
        for name, rows in self.pairs.items():
            p5 = self.precision.get(name, [])
            rankers[name] = mean_metrics(rows) | {
                "precision@5": sum(p5) / len(p5) if p5 else 0.0,
                "suggested": len(p5) / self.sources[name],
            }
        first = next(iter(self.pairs.values()), [])
        return LinkEvalReport(len(first), sources, rankers)


def mention_rankings(graph: LinkGraph, card: Card, exclude: set[str]) -> dict[str, list[str]]:
    """The cards ``card`` names without linking (none of ``exclude``): in order of appearance
    (``title``) and as the server ranks them (``title_specific``, :func:`by_specificity`)."""
    mentions = [m for m in mention_suggestions(graph, card) if m.target not in exclude]
    return {
        "title": list(dict.fromkeys(m.target for m in mentions)),
        "title_specific": by_specificity(graph, mentions),
    }


def _by_src(held: Sequence[HeldOut]) -> dict[str, set[str]]:
    by_src: dict[str, set[str]] = {}
    for h in held:
        by_src.setdefault(h.src, set()).add(h.dst)
    return by_src


def ablations(fusion: SuggestFusion) -> dict[str, SuggestFusion]:
    """The ablation rows: ours without the graph legs (``-graph``), without each leg
    (``-leg``), and each leg alone (``=leg``)."""
    return {
        "ours-graph": fusion.without(GRAPH_LEGS),
        **{f"ours-{leg}": fusion.without([leg]) for leg in fusion.legs},
        **{f"={leg}": fusion.only([leg]) for leg in fusion.legs},
    }


def evaluate_links(
    vault: Vault,
    held: Sequence[HeldOut],
    *,
    fusion: SuggestFusion = DEFAULT_SUGGEST_FUSION,
    ablate: bool = False,
    dump: list[dict[str, Any]] | None = None,
    progress: Callable[[int, int], None] | None = None,
    extra: Mapping[str, SuggestFusion] | None = None,
) -> LinkEvalReport:
    """Score ``ours`` (``fusion`` of the suggestion legs) and the baselines. ``ablate`` adds the
    rows of :func:`ablations`, ``extra`` rows of other fusions by name; ``dump``, when given,
    receives per source its held-out targets and every leg and baseline ranking
    (:data:`LEG_DEPTH` deep), for offline tuning."""
    by_src = _by_src(held)
    graph = vault.graph
    engine = vault.engine
    scores = _Scores()
    rows = dict(extra or {})  # name -> fusion, scored beside ours
    if ablate:
        rows.update(ablations(fusion))
    wanted = (
        SUGGEST_LEGS
        if dump is not None or ablate
        else tuple(sorted({leg for f in (fusion, *rows.values()) for leg in f.legs}))
    )
    seconds: list[float] = []  # per source: computing the legs (what a code action waits for)
    for i, (src, dsts) in enumerate(sorted(by_src.items())):
        card = graph.cards.get(src)
        if card is None:
            continue
        exclude = linked_targets(graph, card) | {src}
        by_mention = mention_rankings(graph, card, exclude)
        t0 = time.perf_counter()
        found = suggestion_legs(engine, card, wanted, depth=LEG_DEPTH)
        legs = found.rankings
        seconds.append(time.perf_counter() - t0)
        ours = fuse_suggestions(legs, fusion)
        bm25_hits = engine.store.bm25_search(card.text[:4000], 60)
        bm25 = [p for p in dict.fromkeys(h.path for h in bm25_hits) if p not in exclude]
        aa = [p for p, _ in two_hop_neighbours(graph, src, exclude)]
        lists = [("ours", ours), *by_mention.items(), ("bm25", bm25), ("adamic_adar", aa)]
        lists += [(name, fuse_suggestions(legs, f)) for name, f in rows.items()]
        for name, ranking in lists:
            scores.add(name, ranking, dsts)
        if dump is not None:
            dump.append(
                {
                    "src": src,
                    "dsts": sorted(dsts),
                    "legs": legs,
                    "confidence": {p: round(c, 4) for p, c in found.confidence.items()},
                    "baselines": {name: r[:LEG_DEPTH] for name, r in lists[1:5]},
                }
            )
        if progress is not None:
            progress(i + 1, len(by_src))
    report = scores.report(len(by_src))
    if seconds:
        ms = sorted(1000 * x for x in seconds)
        report.legs_ms = {"p50": ms[len(ms) // 2], "p95": ms[min(len(ms) - 1, len(ms) * 95 // 100)]}
    return report


def evaluate_mentions(graph: LinkGraph, held: Sequence[HeldOut]) -> LinkEvalReport:
    """The mention rankers only (``title``, ``title_specific``): no index and no model, so a
    ranking change can be measured in seconds (``python -m zettel_lsp.eval.links``)."""
    by_src = _by_src(held)
    scores = _Scores()
    for src, dsts in sorted(by_src.items()):
        card = graph.cards.get(src)
        if card is None:
            continue
        exclude = linked_targets(graph, card) | {src}
        for name, ranking in mention_rankings(graph, card, exclude).items():
            scores.add(name, ranking, dsts)
    return scores.report(len(by_src))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m zettel_lsp.eval.links VAULT HOLDOUT [--variant mention|removed]``: the
    mention rankers on an un-linked copy, as JSON (the full evaluation is ``eval-links``)."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m zettel_lsp.eval.links")
    parser.add_argument("vault", type=Path)
    parser.add_argument("holdout", type=Path)
    parser.add_argument("--variant", default="mention", choices=("mention", "removed"))
    args = parser.parse_args(argv)
    held = load_holdout(args.holdout)
    with holdout_copy(args.vault, held, args.variant) as hc:
        cards, _ = load_vault(hc.vault)
        report = evaluate_mentions(LinkGraph.build(cards), held)
    out = {"pairs": report.pairs, "sources": report.sources, "rankers": report.rankers}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
