"""A copy of a vault in which one card has N more backlinks, for timing a big rename.

    python benchmarks/plant_backlinks.py VAULT OUT [--n 500] [--seed 0] [--target REL]
        [--index-dir DIR]

Copies VAULT to ``OUT/vault`` and appends one line to ``--n`` seeded random cards that do not
link to the target yet, each in one of the forms a vault mixes: ``[[Target]]``,
``[[Target|some words]]``, ``[[Target#Heading]]`` (when the target has a heading) and
``![[Target]]``. The target is ``--target`` or the card with the most wikilinks to it by file
name. With ``--index-dir`` the index is copied to ``OUT/index`` too (made the copy's index), so
the server re-embeds only the edited cards when it starts. The original vault and index are
only read. Then:

    python benchmarks/lsp_latency.py OUT/vault --index-dir OUT/index --renames 1 \\
        --runs 0 --hover-samples 0 --action-samples 0 --editing-samples 0

times the rename of the most linked card (the target) over the protocol.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
from collections import Counter
from pathlib import Path

from zettel_lsp.index.sparse_copy import copy_tree
from zettel_lsp.index.state import read_state, write_state
from zettel_lsp.notes.model import LinkKind
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.scan import is_note_path

FORMS = ("plain", "alias", "heading", "embed")


def note_paths(vault: Path) -> list[str]:
    return sorted(
        p.relative_to(vault).as_posix()
        for p in vault.rglob("*.md")
        if p.is_file() and is_note_path(p.relative_to(vault).as_posix())
    )


def most_linked(vault: Path, rels: list[str]) -> str:
    stems = {Path(r).stem.lower(): r for r in rels}
    counts: Counter[str] = Counter()
    for rel in rels:
        text = (vault / rel).read_text(encoding="utf-8", errors="replace")
        for link in parse_card(rel, text).links:
            if link.kind in (LinkKind.WIKI, LinkKind.EMBED):
                target = stems.get(Path(link.target).name.lower())
                if target is not None and target != rel:
                    counts[target] += 1
    return counts.most_common(1)[0][0]


def plant(vault: Path, target: str, n: int, seed: int) -> dict[str, object]:
    rels = note_paths(vault)
    name = Path(target).stem
    card = parse_card(target, (vault / target).read_text(encoding="utf-8", errors="replace"))
    heading = next(
        (h.text for h in card.headings if h.text.strip() and not set(h.text) & set("[]|#^")),
        None,
    )
    pattern = re.compile(r"\[\[" + re.escape(name) + r"[\]|#]", re.IGNORECASE)
    pool = [
        r
        for r in rels
        if r != target
        and not pattern.search((vault / r).read_text(encoding="utf-8", errors="replace"))
    ]
    rng = random.Random(seed)
    chosen = rng.sample(pool, min(n, len(pool)))
    forms: Counter[str] = Counter()
    for i, rel in enumerate(sorted(chosen)):
        form = FORMS[i % len(FORMS)]
        if form == "heading" and heading is None:
            form = "plain"
        link = {
            "plain": f"[[{name}]]",
            "alias": f"[[{name}|see this card]]",
            "heading": f"[[{name}#{heading}]]",
            "embed": f"![[{name}]]",
        }[form]
        path = vault / rel
        text = path.read_text(encoding="utf-8", errors="replace")
        path.write_text(text.rstrip("\n") + f"\n\nSee also {link}.\n", encoding="utf-8")
        forms[form] += 1
    return {"target": target, "planted": len(chosen), "forms": dict(forms)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", help="the card to link to (default: the most linked)")
    ap.add_argument("--index-dir", type=Path, help="an index of VAULT to copy to OUT/index")
    args = ap.parse_args()
    if args.out.exists():
        print(f"{args.out} exists: choose a new folder", file=sys.stderr)
        return 2
    copy = args.out / "vault"
    shutil.copytree(args.vault, copy, symlinks=True)
    if args.index_dir is not None:
        copy_tree(args.index_dir, args.out / "index")
        state = read_state(args.out / "index")
        if state is not None:  # the copy's index, or the server starts it again from nothing
            state.vault = str(copy.resolve())
            write_state(args.out / "index", state)
    target = args.target or most_linked(copy, note_paths(copy))
    print(json.dumps(plant(copy, target, args.n, args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
