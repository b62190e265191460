"""Quick hub-vs-leaf probe (issue #15 groundwork, not the issue's generator): list/table lines linking one card with a >= 5-word gloss not naming it become queries; MRR of the leaf with the rerank off/on. Usage: python benchmarks/hub_leaf_probe.py VAULT INDEX_DIR."""

import random, re, sys
from dataclasses import replace
from pathlib import Path
from zettel_lsp.cli import build_parser, _open_vault, _search_options
from zettel_lsp.search.rerank import RerankParams, is_list_line
from zettel_lsp.notes.positions import LineIndex

vault_path, index_dir = sys.argv[1:3]
args = build_parser().parse_args(["eval", vault_path, "x", "--index-dir", index_dir])
vault = _open_vault(args)
W = re.compile(r"[A-Za-z][A-Za-z'-]+")
with vault:
    g = vault.graph
    qs = []
    for path, card in g.cards.items():
        li = LineIndex(card.text)
        by_line = {}
        for rl in g.links_of(path):
            t = rl.target
            if t and t != path and t in g.cards and not rl.link.is_embed:
                by_line.setdefault(rl.link.span.start_pos.line, []).append(rl)
        for line, rls in by_line.items():
            if len({r.target for r in rls}) != 1:
                continue
            text = li.line_text(line)
            if not is_list_line(text):
                continue
            s0, e0 = rls[0].link.span.start, rls[0].link.span.end
            ls = li.line_start(line)
            gloss = text[: s0 - ls] + " " + text[e0 - ls :]
            words = W.findall(gloss)
            leaf = rls[0].target
            tw = {w.lower() for w in W.findall(g.cards[leaf].title)}
            if len(words) < 5 or not tw.isdisjoint(w.lower() for w in words):
                continue
            qs.append((" ".join(words), leaf, path))
    rng = random.Random(0)
    rng.shuffle(qs)
    per = {}
    keep = []
    for q in qs:
        if per.get(q[2], 0) < 3:
            per[q[2]] = per.get(q[2], 0) + 1
            keep.append(q)
        if len(keep) >= 100:
            break
    base = _search_options(args, 10)
    for name, opts in (
        ("nograph", replace(base, graph=False)),
        ("off", replace(base, rerank=RerankParams(line_credit=0.0))),
        ("on", base),
    ):
        rr = 0.0
        hub5 = 0
        for q, leaf, hub in keep:
            ps = [r.path for r in vault.engine.search(q, opts)]
            rr += 1 / (ps.index(leaf) + 1) if leaf in ps else 0
            hub5 += hub in ps[:5]
        print(
            Path(vault_path).name,
            name,
            len(keep),
            "MRR leaf %.3f" % (rr / len(keep)),
            "hub@5 %.2f" % (hub5 / len(keep)),
            flush=True,
        )
