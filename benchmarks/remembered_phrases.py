"""Remembered-phrase queries on a real vault: a few words of a sentence the user wrote, and the
card that holds it.

    python benchmarks/remembered_phrases.py VAULT OUT.json [--n 100] [--seed 0]

The planted set of ``make_vault.py`` asks for sentences planted in generated cards; this asks for
sentences of the vault's own cards, among their real neighbours. For ``--n`` cards drawn at
random (seeded), one of their prose sentences (``make_vault.sentences_of`` over
``make_vault.clean_prose``: no code, tables, headings or link targets) with at least six content
words becomes a query by ``make_vault``'s rule: 3-6 of its content words, the two rarest in the
vault first, then random ones, in the sentence's order. The card is the only relevant answer; a
query whose words all stand in one sentence of another card too (a copied passage) is dropped, as
its answer would be ambiguous. The output is in the golden-set format, so ``zettel-lsp eval VAULT
OUT.json [--fusion ...]`` scores it. The queries are generated, not judged by a person: a check of
known-item search on real notes, not a collection to tune on.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

try:  # run as a script (benchmarks/ on sys.path) or imported from the project root (tests)
    import make_vault as mv  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - the tests' import path
    from benchmarks import make_vault as mv

from zettel_lsp.notes.frontmatter import split_frontmatter
from zettel_lsp.notes.scan import load_vault

MIN_WORDS = 6


def card_sentences(text: str) -> list[str]:
    """The prose sentences of a card's text (frontmatter left out)."""
    body = text[split_frontmatter(text).end :]
    return list(mv.sentences_of(mv.clean_prose(body)))


def build(vault: Path, n: int, seed: int) -> list[dict[str, object]]:
    cards, _ = load_vault(vault)
    # per card, each prose sentence with its content words (in order)
    sentences = {c.path: [(s, mv.content_words(s)) for s in card_sentences(c.text)] for c in cards}
    word_sets = {path: [set(ws) for _, ws in ss] for path, ss in sentences.items() if ss}
    df = mv.word_frequencies(
        (s for ss in sentences.values() for s, _ in ss),
        {w for sets in word_sets.values() for ws in sets for w in ws},
    )
    rng = random.Random(f"{seed}:remembered")
    order = sorted(word_sets)
    rng.shuffle(order)
    out: list[dict[str, object]] = []
    for path in order:
        if len(out) >= n:
            break
        fit = [(s, ws) for s, ws in sentences[path] if len(ws) >= MIN_WORDS]
        if not fit:
            continue
        sentence, words = rng.choice(fit)
        query = mv.make_query(rng, words, df)
        wanted = set(query.split())
        if any(wanted <= ws for other, sets in word_sets.items() if other != path for ws in sets):
            continue  # the same words in one sentence of another card: ambiguous
        out.append(
            {
                "id": f"r{len(out) + 1:03d}",
                "query": query,
                "relevant_paths": [path],
                "partial_paths": [],
                "category": "remembered",
                "notes": f"words of a sentence of the card: {sentence}",
            }
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=100, help="queries to write (100)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = build(args.vault, args.n, args.seed)
    args.out.write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(rows)} queries -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
