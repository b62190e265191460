"""What the title rule does on real vaults: titles, identifier file names and opening H1s.

    python benchmarks/title_rule.py [VAULT ...] [--examples 12] [--json]

With no VAULT, runs over the four shared vaults (../shared/data/vaults/{obsidian-help-en,
dendron-site,vaultofknowledge,zettelkasten-13k}). For each vault it prints: cards, frontmatter
titles, file names read as identifiers, cards that open with an H1, those whose H1 is the file
name (up to case), and those whose H1 differs from it, split by what the ``auto`` rule makes of
them: the title (an identifier file name), the frontmatter title again, an alias, or dropped (a
section heading, not a name, part of the name, unrelated), with examples of each. It also counts
the titles that differ from the rule before ``titleSource`` (frontmatter title > opening H1 >
file name; the ``h1`` rule now puts the H1 first).
docs/notes-and-links.md ("Titles") quotes its output.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from zettel_lsp.notes.parser import title_candidates
from zettel_lsp.notes.reader import read_note
from zettel_lsp.notes.scan import iter_note_paths
from zettel_lsp.notes.title_rule import (
    REASONS,
    card_title,
    identifier_kind,
    judge_opening_h1,
    same_name,
)

ROOT = Path(__file__).resolve().parents[1]
SHARED_VAULTS = ROOT.parent / "shared" / "data" / "vaults"
DEFAULT_VAULTS = ("obsidian-help-en", "dendron-site", "vaultofknowledge", "zettelkasten-13k")
DROPPED = ("section heading", "not a name", "part of the name", "unrelated")


@dataclass
class VaultFigures:
    vault: str
    cards: int = 0
    frontmatter_titles: int = 0
    identifier_names: int = 0
    opening_h1: int = 0
    h1_is_file_name: int = 0
    h1_differs: int = 0
    h1_is_title: int = 0  # the file name is an identifier
    h1_is_frontmatter_title: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    changed_vs_old_rule: int = 0
    examples: dict[str, Counter[str]] = field(default_factory=dict)

    def example(self, kind: str, text: str) -> None:
        self.examples.setdefault(kind, Counter())[text] += 1


def stem_of(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return name[: name.rfind(".")] if "." in name else name


def measure(root: Path) -> VaultFigures:
    f = VaultFigures(root.name)
    for rel in iter_note_paths(root):
        res = read_note(root / rel)
        if not res.ok:
            continue
        f.cards += 1
        stem = stem_of(rel)
        fm_title, h1 = title_candidates(res.text)
        title, aliases = card_title(stem, fm_title, h1)
        f.changed_vs_old_rule += title != (fm_title or h1 or stem)
        f.frontmatter_titles += fm_title is not None
        kind = identifier_kind(stem)
        if kind is not None:
            f.identifier_names += 1
            f.example(f"identifier file names: {kind}", stem)
        if h1 is None:
            continue
        f.opening_h1 += 1
        if same_name(h1, stem):
            f.h1_is_file_name += 1
            continue
        f.h1_differs += 1
        if title == h1:
            f.h1_is_title += 1
            f.example("titles from the H1 of an identifier file name", f"{h1}  <- {stem}")
            continue
        verdict = judge_opening_h1(h1, title, stem)
        if verdict.alias:
            assert aliases == [h1]
            f.kept += 1
            f.example("kept as aliases", f"{h1}  <- {title}")
        elif verdict.reason == "same name":
            f.h1_is_frontmatter_title += 1
        else:
            f.dropped[verdict.reason] += 1
            shown = h1 if verdict.reason == "section heading" else f"{h1}  <- {title}"
            f.example(verdict.reason, shown)
    return f


def report(f: VaultFigures, n: int) -> str:
    lines = [
        f"== {f.vault}",
        f"cards                              {f.cards:>7,}",
        f"frontmatter titles                 {f.frontmatter_titles:>7,}",
        f"identifier file names              {f.identifier_names:>7,}",
        f"opening H1s                        {f.opening_h1:>7,}",
        f"  the file name (up to case)       {f.h1_is_file_name:>7,}",
        f"  differing from the file name     {f.h1_differs:>7,}",
        f"    the title (identifier name)    {f.h1_is_title:>7,}",
        f"    the frontmatter title          {f.h1_is_frontmatter_title:>7,}",
        f"    kept as aliases                {f.kept:>7,}",
    ]
    lines += [f"    dropped: {r:<22}{f.dropped[r]:>7,}" for r in DROPPED]
    lines.append(f"titles changed from the old rule   {f.changed_vs_old_rule:>7,}")
    for kind, counts in f.examples.items():
        if kind == "section heading":
            shown = ", ".join(f"{t} {c}" for t, c in counts.most_common(n))
        else:
            shown = "; ".join(t for t, _ in sorted(counts.items())[:n])
        lines.append(f"  {kind} ({sum(counts.values())}): {shown}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vaults", nargs="*", type=Path, help="vault folders (default: shared vaults)")
    ap.add_argument("--examples", type=int, default=12, help="examples per kind")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    vaults = args.vaults or [SHARED_VAULTS / v for v in DEFAULT_VAULTS]
    figures = [measure(v) for v in vaults if v.is_dir()]
    if args.json:
        out = {
            f.vault: {k: v for k, v in vars(f).items() if k not in ("vault", "examples", "dropped")}
            | {
                "dropped": dict(f.dropped),
                "examples": {k: c.most_common(args.examples) for k, c in f.examples.items()},
            }
            for f in figures
        }
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return 0
    print("Reasons: " + "; ".join(f"{k}: {v}" for k, v in REASONS.items()) + "\n")
    print("\n\n".join(report(f, args.examples) for f in figures))
    missing = [str(v) for v in vaults if not v.is_dir()]
    if missing:
        print(f"\nnot found: {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
