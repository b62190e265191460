"""benchmarks/self_tune.py and suggest_tune.py --self (issue #15): one pass writes the legs of
a link hold-out and of the copy's own links, and --self compares the tuners on them. Real vault
copy, index and model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import self_tune, suggest_tune
from benchmarks.make_holdout import hold_out
from tests.search.test_calibrate import groups_vault
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.vault import Vault


def test_held_out_and_own_legs_then_the_tuners(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    groups_vault(vault, links=5)  # 4 left after the hold-out: every card is drawn again
    with Vault(vault, tmp_path / "index") as v:
        v.open()
    cards, _ = load_vault(vault)
    held = hold_out(LinkGraph.build(cards).linked_pairs(), seed=0)
    holdout = tmp_path / "held.tsv"
    holdout.write_text("src\tdst\n" + "".join(f"{s}\t{d}\n" for s, d in held))
    out = tmp_path / "legs"
    args = [str(vault), str(holdout), "--variant", "mention", "--seed-index"]
    args += [str(tmp_path / "index"), "--out", str(out), "--rounds", "2"]
    assert self_tune.main(args) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "vault.held.mention.legs.json",
        "vault.self.mention.mention.legs.json",
        "vault.self.mention.removed.legs.json",
    ]
    dump = json.loads((out / names[0]).read_text())
    assert len(dump["sources"]) == len({s for s, _ in held})
    own = json.loads((out / names[1]).read_text())["sources"]
    # two rounds over the 48 cards, half of them un-linked as mentions each time
    assert len(own) == 48 and all(set(e["dsts"]) for e in own)
    capsys.readouterr()
    assert suggest_tune.main(["--self", *(str(out / n) for n in names)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("vault.held.mention") and "weights+m.005" in line
