"""Self-tuned link suggestions (issue #15): a hold-out drawn from the vault's own links,
un-linked in memory, the weights chosen on it with neither variant allowed to fall, kept in the
index folder and used by the suggestions. The pure parts on hand-built cards and legs; the
whole on a real vault with the real index and model."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.search.test_suggest_legs import build as graph_of
from zettel_lsp.index.db import IndexDB
from zettel_lsp.search.calibrate import (
    CALIBRATION_FORMAT,
    CALIBRATION_KEY,
    Calibration,
    calibrate,
    is_stale,
    load_calibration,
    save_calibration,
    self_holdout,
    unlinked_text,
)
from zettel_lsp.search.fusion_tune import leg_arrays, metrics, to_arrays, tune
from zettel_lsp.search.suggest import DEFAULT_SUGGEST_FUSION, SuggestFusion, related_suggestions
from zettel_lsp.vault import Vault


def test_unlinked_text_keeps_the_visible_text_or_drops_the_sentence() -> None:
    g = graph_of(
        {
            "Src.md": "# Src\n\nBake it in a [[Dutch oven]]. Score it [[Crust|well]] first.\n"
            "Keep [[Levain]] warm.\n",
            "Dutch oven.md": "# Dutch oven\n",
            "Crust.md": "# Crust\n",
            "Levain.md": "# Levain\n",
        }
    )
    held = frozenset({"Dutch oven.md", "Crust.md"})
    text, n = unlinked_text(g, "Src.md", held, "mention")
    assert n == 2
    assert text == "# Src\n\nBake it in a Dutch oven. Score it well first.\nKeep [[Levain]] warm.\n"
    text, n = unlinked_text(g, "Src.md", held, "removed")
    assert n == 2
    assert "Dutch oven" not in text and "Score it" not in text and "[[Levain]]" in text
    assert g.cards["Src.md"].text.count("[[") == 3  # the graph's card is untouched


def star(n: int) -> dict[str, str]:
    """``n`` hub cards linking 6, 3 or 2 of the leaves."""
    cards = {f"Leaf {i}.md": f"# Leaf {i}\n" for i in range(10)}
    for h in range(n):
        k = (6, 3, 2)[h % 3]
        cards[f"Hub {h}.md"] = "\n".join(f"- [[Leaf {(h + j) % 10}]]" for j in range(k)) + "\n"
    return cards


def test_self_holdout_draws_a_fifth_of_the_links_of_cards_with_three() -> None:
    g = graph_of(star(12))
    held = self_holdout(g, sources=100, seed=3)
    # hubs with 6 or 3 links (8 of 12); hubs with 2 and the leaves are not drawn
    assert sorted(h.src for h in held) == sorted(f"Hub {h}.md" for h in range(12) if h % 3 != 2)
    for h in held:
        assert len(h.dsts) == (2 if int(h.src.split()[1].split(".")[0]) % 3 == 0 else 1)
        assert h.dsts <= {rl.target for rl in g.links_of(h.src)}
    assert [h.variant for h in held] == ["mention", "removed"] * 4
    assert self_holdout(g, sources=100, seed=3) == held  # seeded
    assert len(self_holdout(g, sources=3, seed=3)) == 3


def entry(dsts: list[str], **legs: list[str]) -> dict[str, Any]:
    mentions = legs.get("mentions", [])
    return {"dsts": dsts, "legs": legs, "confidence": dict.fromkeys(mentions, 0.1)}


def test_keeping_each_variant_refuses_a_weight_that_trades_one_for_the_other() -> None:
    """Mention sources find their link through the mentions leg (rank 10: a heavier dense leg
    pushes it out), removed sources only through dense. Mean Recall@10 over the variants gains
    from a heavier dense leg (0.5 -> 0.75); with ``keep`` 0 the mention variant may not fall."""
    ms = [f"M{i}" for i in range(1, 13)]
    ds = [f"D{i}" for i in range(1, 13)]
    mention = [entry(["T"], mentions=[*ms[:9], "T"], dense=ds) for _ in range(5)]
    mention += [entry(["T"], mentions=["T", *ms[:9]], dense=ds) for _ in range(5)]
    removed = [entry(["T"], mentions=ms, dense=["T", *ds]) for _ in range(10)]
    arrays = [
        leg_arrays(mention, name="m", vault="v", variant="mention"),
        leg_arrays(removed, name="r", vault="v", variant="removed"),
    ]
    start = SuggestFusion({"mentions": 5.0, "dense": 1.0}, k=5.0, depth=50)

    def recall(f: SuggestFusion) -> list[float]:
        return [metrics(a, f)["recall@10"] for a in arrays]

    assert recall(to_arrays(start)) == [1.0, 0.0]
    free = tune(arrays, start, weights_only=True)
    assert recall(free)[0] < 1.0 and sum(recall(free)) > 1.0  # traded the mention variant
    kept = tune(arrays, start, weights_only=True, keep=0.0)
    assert recall(kept)[0] == 1.0
    assert set(kept.weights) <= {"mentions", "dense", "confident@0.3"}  # the start's legs only


def test_a_calibration_is_kept_as_json_and_refused_when_damaged(tmp_path: Path) -> None:
    c = Calibration(DEFAULT_SUGGEST_FUSION, 0.5, 0.6, 40, 55, 100, 300, 1.5)
    again = Calibration.from_json(json.loads(json.dumps(c.to_json())))
    assert again is not None and again.fusion.weights == DEFAULT_SUGGEST_FUSION.weights
    assert again.fusion.lead == DEFAULT_SUGGEST_FUSION.lead and again.pairs == 55
    bad = c.to_json()
    bad["fusion"]["weights"] = {"no_such_leg": 1.0}
    assert Calibration.from_json(bad) is None
    assert Calibration.from_json({**c.to_json(), "format": 99}) is None
    assert Calibration.from_json({"format": 1}) is None
    db = IndexDB(tmp_path)
    try:
        assert load_calibration(db) is None
        db.put(CALIBRATION_KEY, {"format": CALIBRATION_FORMAT, "fusion": "damaged"})
        assert load_calibration(db) is None
        save_calibration(db, c)
        assert load_calibration(db) == c
    finally:
        db.close()
    assert is_stale(None, 100, 300)
    assert not is_stale(c, 109, 271)
    assert is_stale(c, 110, 300) and is_stale(c, 100, 330)


def groups_vault(root: Path, groups: int = 8, size: int = 6, seed: int = 1, links: int = 3) -> None:
    """Cards in groups by subject; each links ``links`` of its group."""
    subjects = [
        ("sourdough", "levain flour water crumb crust oven proof"),
        ("sailing", "wind sail keel tack jib harbour knot"),
        ("chess", "pawn bishop rook opening endgame gambit king"),
        ("astronomy", "star planet orbit telescope comet galaxy moon"),
        ("gardening", "soil compost seed prune bloom root mulch"),
        ("cycling", "chain gear saddle pedal wheel climb brake"),
        ("pottery", "clay kiln glaze wheel throw bisque slip"),
        ("beekeeping", "hive queen honey comb swarm nectar smoker"),
    ]
    rng = random.Random(seed)
    root.mkdir()
    for g in range(groups):
        name, words = subjects[g]
        for i in range(size):
            others = [j for j in range(size) if j != i]
            see = " ".join(f"[[{name} {j}]]" for j in rng.sample(others, links))
            body = " ".join(rng.sample(words.split(), 5))
            (root / f"{name} {i}.md").write_text(
                f"# {name} {i}\n\nNotes on {name}: {body}. See {see}.\n", encoding="utf-8"
            )


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("calibrate")
    groups_vault(base / "vault")
    with Vault(base / "vault", base / "index") as v:
        v.open()
    return base / "vault", base / "index"


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))}


def test_a_vault_chooses_its_weights_keeps_them_and_suggests_with_them(
    indexed: tuple[Path, Path],
) -> None:
    vault, index = indexed
    notes = tree(vault)
    with Vault(vault, index) as v:
        v.open()
        links = len(v.graph.linked_pairs())
        assert v.calibration is None and v.calibration_due()
        assert v.engine.suggest_fusion() is None  # the default until chosen
        card = v.graph.cards["chess 0.md"]
        made = v.calibrate()
        assert made is not None
        assert made.sources == 3 * 48 and made.pairs > 48 and made.cards == 48
        assert made.recall >= made.default_recall
        assert not v.calibration_due()
        assert v.engine.suggest_fusion() == made.fusion
        # the vault's own graph and notes are untouched: the hold-out was un-linked apart
        assert len(v.graph.linked_pairs()) == links
        got = related_suggestions(v.engine, card, 5)
        assert got == related_suggestions(v.engine, card, 5, fusion=made.fusion)
        v.self_tune = False
        assert v.engine.suggest_fusion() is None and not v.calibration_due()
    assert tree(vault) == notes
    db = IndexDB(index, readonly=True)
    saved = load_calibration(db)
    db.close()
    assert saved is not None and saved.fusion == made.fusion
    with Vault(vault, index) as again:  # a new session reads it
        assert again.calibration == saved
        assert again.status()["suggestion_weights"] == "chosen on this vault's links"


def test_a_vault_with_few_links_keeps_the_default(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(12):
        (vault / f"n{i}.md").write_text(f"# n{i}\n\n[[n{(i + 1) % 12}]] [[n{(i + 2) % 12}]]\n")
    with Vault(vault, tmp_path / "index") as v:
        v.open()
        assert calibrate(v.engine) is None  # no card has 3 links
        assert v.calibrate() is None and v.calibration is None
        assert load_calibration(v.indexer.db) is None


def test_a_stop_leaves_the_default(indexed: tuple[Path, Path], tmp_path: Path) -> None:
    vault, _ = indexed
    with Vault(vault, tmp_path / "index") as v:
        v.open()
        calls = []

        def stop() -> bool:
            calls.append(1)
            return len(calls) > 5

        assert v.calibrate(should_stop=stop) is None and v.calibration is None


def test_a_card_deleted_after_the_draw_is_left_out(indexed: tuple[Path, Path]) -> None:
    """The vault changes between the hold-out's draw and its un-linking (a branch switch during
    a server's self-tuning): the deleted card is left out, not a KeyError."""
    vault, index = indexed
    with Vault(vault, index) as v:
        v.open()
        reads: list[int] = []

        def read(fn: Any) -> Any:
            reads.append(1)
            if len(reads) == 2:  # after the draw, before the un-linking
                v.graph.remove(held[0].src)
            return fn()

        held = self_holdout(v.graph, sources=48, seed=0)
        made = calibrate(v.engine, read=read, rounds=1)
        assert made is not None and held[0].src not in v.graph.cards
