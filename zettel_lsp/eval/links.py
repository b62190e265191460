"""Link hold-out evaluation: can suggestions recover links that were removed?

For each held-out (src, dst) link, a copy of the vault un-links it (all held-out links at once):
variant ``mention`` turns the link into its visible text; variant ``removed`` deletes the sentence
that holds it. The copy is indexed once; then for each src, each ranker lists cards src does not
link to (nor is), and Recall@5, Recall@10 and MRR of dst are reported, and precision@5 per src
(the share of its first five suggestions that are held-out links, over the srcs with at least
one suggestion), for:

- ``ours``: reciprocal rank fusion of the cards src names without linking (unlinked mentions,
  most specific first, weight 2) and the related-card ranking (dense + BM25 over src's chunks +
  graph proximity);
- ``title``: exact title/alias match only (the unlinked mentions, in order of appearance), and
  ``title_specific``: the same cards as the server ranks them, most confident first, noise left
  out (:func:`zettel_lsp.search.suggest.rank_mentions`);
- ``bm25``: BM25 over src's text;
- ``adamic_adar``: Adamic-Adar on the remaining link graph (two hops).

:func:`holdout_copy` writes the copy into a new temporary folder (marked, removed afterwards),
never beside or inside the vault; an index folder the caller names must be new, empty or marked
by eval-links, and apart from the vault (zettel_lsp/workdir.py).
"""

from __future__ import annotations

import csv
import logging
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from zettel_lsp.eval.metrics import recall_at_k, reciprocal_rank
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.model import Card
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.search.fusion import rrf_scores
from zettel_lsp.search.suggest import (
    by_specificity,
    linked_targets,
    mention_suggestions,
    related_suggestions,
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

_SENTENCE = re.compile(r"[^.!?\n]*[.!?]?")


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
    by_src: dict[str, set[str]] = {}
    for h in held:
        by_src.setdefault(h.src, set()).add(h.dst)
    changed = 0
    for src, dsts in by_src.items():
        card = graph.cards.get(src)
        if card is None:
            continue
        edits: list[tuple[int, int, str]] = []
        for rl in graph.links_of(src):
            if rl.target in dsts:
                s, e = rl.link.span.start, rl.link.span.end
                if variant == "mention":
                    edits.append((s, e, _visible(rl.link.label, rl.link.target)))
                else:
                    edits.append(_sentence_around(card.text, s, e))
        text = card.text
        last = len(text) + 1
        for s, e, new in sorted(set(edits), reverse=True):
            if e > last:  # overlapping sentence edits: the later one already removed it
                continue
            text = text[:s] + new + text[e:]
            last = s
            changed += 1
        (copy / src).write_text(text, encoding="utf-8")
    return changed


@dataclass(frozen=True, slots=True)
class HoldoutCopy:
    vault: Path  # the un-linked copy
    index_dir: Path  # where its index goes
    changed: int  # links un-linked


@contextmanager
def holdout_copy(
    vault: Path, held: Sequence[HeldOut], variant: str, index_dir: Path | None = None
) -> Iterator[HoldoutCopy]:
    """The un-linked copy of ``vault`` (:func:`unlink_copy`) in a new temporary folder, which is
    removed on exit (its marker checked first). The index goes to ``index_dir``, which must be
    new, empty or marked by eval-links, and apart from the vault (it is marked and kept), or by
    default into the temporary folder. Raises :class:`WorkDirError` before anything is written
    when a folder is refused."""
    vault = vault.resolve()
    if index_dir is not None:
        claim_work_dir(index_dir, vault=vault, tool=TOOL, what="index folder")
        index_dir = index_dir.resolve()
    work = make_temp_work_dir(vault=vault, tool=TOOL, prefix="zettel-lsp-eval-links-")
    try:
        if index_dir is not None:
            write_marker(index_dir, tool=TOOL, vault=str(vault))
        copy = work / "vault"
        changed = unlink_copy(vault, copy, held, variant)
        yield HoldoutCopy(copy, index_dir or work / "index", changed)
    finally:
        try:
            remove_work_dir(work, tool=TOOL, vault=vault)
        except (WorkDirError, OSError) as exc:
            log.error("the temporary vault copy %s was not removed: %s", work, exc)


def _visible(label: str | None, target: str) -> str:
    if label:
        return label
    return target.rsplit("/", 1)[-1].removesuffix(".md")


def _sentence_around(text: str, start: int, end: int) -> tuple[int, int, str]:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end
    for m in _SENTENCE.finditer(text, line_start, line_end):
        if m.start() <= start and m.end() >= end:
            return m.start(), m.end(), ""
    return line_start, line_end, ""


@dataclass(slots=True)
class LinkEvalReport:
    pairs: int
    sources: int
    rankers: dict[str, dict[str, float]]


def precision_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float | None:
    """Of the first ``k`` suggestions (fewer when fewer are made), the share that are held-out
    links; None when nothing is suggested."""
    top = ranked[:k]
    if not top:
        return None
    return len(relevant & set(top)) / len(top)


class _Scores:
    """Recall@5, Recall@10 and MRR per held-out pair; precision@5 per source (over sources with
    at least one suggestion; ``suggested`` is their share)."""

    def __init__(self) -> None:
        self.pairs: dict[str, list[tuple[float, float, float]]] = {}
        self.precision: dict[str, list[float]] = {}
        self.sources: dict[str, int] = {}

    def add(self, name: str, ranking: Sequence[str], dsts: set[str]) -> None:
        rows = self.pairs.setdefault(name, [])
        for dst in sorted(dsts):
            rows.append(
                (
                    recall_at_k(ranking, {dst}, 5),
                    recall_at_k(ranking, {dst}, 10),
                    reciprocal_rank(ranking, {dst}),
                )
            )
        self.sources[name] = self.sources.get(name, 0) + 1
        p5 = precision_at_k(ranking, dsts, 5)
        if p5 is not None:
            self.precision.setdefault(name, []).append(p5)

    def report(self, sources: int) -> LinkEvalReport:
        rankers: dict[str, dict[str, float]] = {}
        for name, rows in self.pairs.items():
            if not rows:
                continue
            p5 = self.precision.get(name, [])
            rankers[name] = {
                "recall@5": sum(r[0] for r in rows) / len(rows),
                "recall@10": sum(r[1] for r in rows) / len(rows),
                "mrr": sum(r[2] for r in rows) / len(rows),
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


def evaluate_links(
    vault: Vault, held: Sequence[HeldOut], *, progress: Callable[[int, int], None] | None = None
) -> LinkEvalReport:
    by_src = _by_src(held)
    graph = vault.graph
    engine = vault.engine
    scores = _Scores()
    for i, (src, dsts) in enumerate(sorted(by_src.items())):
        card = graph.cards.get(src)
        if card is None:
            continue
        exclude = linked_targets(graph, card) | {src}
        by_mention = mention_rankings(graph, card, exclude)
        specific = by_mention["title_specific"]
        related = [r.path for r in related_suggestions(engine, card, 30)]
        fused = rrf_scores({"mentions": specific, "related": related}, weights={"mentions": 2.0})
        ours = sorted(fused, key=lambda p: (-fused[p], p))
        bm25_hits = engine.store.bm25_search(card.text[:4000], 60)
        bm25 = [p for p in dict.fromkeys(h.path for h in bm25_hits) if p not in exclude]
        aa = [p for p, _ in two_hop_neighbours(graph, src, exclude)]
        lists = (
            ("ours", ours),
            ("title", by_mention["title"]),
            ("title_specific", specific),
            ("bm25", bm25),
            ("adamic_adar", aa),
        )
        for name, ranking in lists:
            scores.add(name, ranking, dsts)
        if progress is not None:
            progress(i + 1, len(by_src))
    return scores.report(len(by_src))


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
