"""Build "mention trap" queries: ask about a card that many other cards link to or mention.

    python benchmarks/mention_traps.py VAULT MENTIONS.tsv OUT.json [--min-refs 5] [--max 100]

For each card with at least ``--min-refs`` linking or mention-only cards (from
``../shared/eval/links/<vault>.mentions.tsv``), the query is the card's title and the only
relevant answer is the card itself. The output is in the golden-set format, so
``zettel-lsp eval VAULT OUT.json [--no-graph]`` scores it. Cards whose title is shared with
another card are left out (the question would be ambiguous).
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter
from pathlib import Path

from zettel_lsp.notes.scan import load_vault


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("mentions", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--min-refs", type=int, default=5)
    ap.add_argument("--max", type=int, default=100)
    args = ap.parse_args()
    cards, _ = load_vault(args.vault)
    titles = {c.path: c.title for c in cards}
    title_count = Counter(t.lower() for t in titles.values())
    rows = []
    with args.mentions.open(encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            refs = int(r["n_linking_notes"]) + int(r["n_mention_only_notes"])
            path = r["note"]
            if refs >= args.min_refs and path in titles and title_count[titles[path].lower()] == 1:
                rows.append((refs, path))
    rows.sort(key=lambda x: (-x[0], x[1]))
    queries = [
        {
            "id": f"t{i + 1:03d}",
            "query": titles[path],
            "relevant_paths": [path],
            "partial_paths": [],
            "category": "mention-trap",
            "notes": f"{refs} cards link to or mention it",
        }
        for i, (refs, path) in enumerate(rows[: args.max])
    ]
    args.out.write_text(json.dumps(queries, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"{len(queries)} queries written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
