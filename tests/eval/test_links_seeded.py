"""eval-links for issue #15: a seed index (copied, never written, refused for another vault or
model, or while in use), the leg dump and ablation rows, the ``--legs``/``--no-graph``/
``--weights`` options, and the hold-out generator. Real files, real index, real model."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from benchmarks.make_holdout import hold_out
from tests.test_workdir import tree
from zettel_lsp.cli import build_parser, main
from zettel_lsp.cli.common import CliError
from zettel_lsp.cli.evals import eval_links_fusion, seed_index_of
from zettel_lsp.eval.links import HeldOut, SeedIndex, evaluate_links, holdout_copy
from zettel_lsp.index.state import read_state
from zettel_lsp.search.suggest import DEFAULT_SUGGEST_FUSION, GRAPH_LEGS, SUGGEST_LEGS
from zettel_lsp.vault import Vault
from zettel_lsp.workdir import WorkDirError

CARDS = {
    "Src.md": "# Src\n\nA sourdough loaf rises with a levain. Bake it in a [[Dutch oven]].\n"
    "Score the dough before baking; see [[Crust]].\n",
    "Dutch oven.md": "# Dutch oven\n\nA heavy pot with a lid traps steam around the loaf.\n",
    "Crust.md": "# Crust\n\nSteam and heat make a dark crisp crust.\n",
    "Levain.md": "# Levain\n\nThe levain is the starter built for one bake.\n",
    "Hub.md": "# Hub\n\n- [[Src]]\n- [[Dutch oven]]\n- [[Levain]]\n",
}
HELD = [HeldOut("Src.md", "Dutch oven.md")]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, str]:
    """A vault and its full index (closed): (vault, index folder, model id, chunker id)."""
    base = tmp_path_factory.mktemp("seeded")
    vault = base / "vault"
    vault.mkdir()
    for rel, text in CARDS.items():
        (vault / rel).write_text(text, encoding="utf-8")
    with Vault(vault, base / "index") as v:
        v.open()
    state = read_state(base / "index")
    assert state is not None
    return vault, base / "index", state.model, state.chunker


def run(
    vault: Path, index_dir: Path | None, seed: SeedIndex | None, variant: str = "removed"
) -> tuple[dict[str, dict[str, float]], int, list[dict[str, object]]]:
    dump: list[dict[str, object]] = []
    with (
        holdout_copy(vault, HELD, variant, index_dir, seed=seed) as hc,
        Vault(hc.vault, hc.index_dir) as v,
    ):
        report = v.open()
        got = evaluate_links(v, HELD, ablate=True, dump=dump)
    return got.rankers, report.sync.embedded + report.embedded, dump


def test_a_seeded_run_gives_the_cold_figures_and_never_writes_the_seed(
    indexed: tuple[Path, Path, str, str], tmp_path: Path
) -> None:
    vault, index, model, chunker = indexed
    seed_before = tree(index)
    cold, cold_embedded, _ = run(vault, None, None)
    seed = SeedIndex(index, {"model": model, "chunker": chunker})
    warm, warm_embedded, dump = run(vault, tmp_path / "idx", seed)
    assert warm == cold
    # only the chunk that lost its sentence is embedded again; the rest come from the seed
    assert 0 < warm_embedded < cold_embedded
    assert tree(index) == seed_before
    state = read_state(tmp_path / "idx")
    assert state is not None and state.vault != str(vault.resolve())
    # the dump holds every leg and baseline per source, the report the ablation rows
    assert dump[0]["src"] == "Src.md" and dump[0]["dsts"] == ["Dutch oven.md"]
    legs = dump[0]["legs"]
    assert isinstance(legs, dict) and set(legs) == set(SUGGEST_LEGS)
    assert "Dutch oven.md" in legs["hub_lines"]  # the adjacent list item in Hub
    assert {"ours", "ours-graph", "ours-hub_lines", "=hub_lines", "bm25"} <= set(warm)
    assert warm["=hub_lines"]["recall@5"] == 1.0


def test_a_seed_of_another_vault_or_model_or_in_use_is_refused(
    indexed: tuple[Path, Path, str, str], tmp_path: Path
) -> None:
    vault, index, model, chunker = indexed
    seed_before = tree(index)
    other = tmp_path / "other"
    other.mkdir()
    (other / "A.md").write_text("# A\n")
    (other / "Src.md").write_text(CARDS["Src.md"])
    seed = SeedIndex(index, {"model": model, "chunker": chunker})
    with (
        pytest.raises(WorkDirError, match="is the index of"),
        holdout_copy(other, HELD, "removed", seed=seed),
    ):
        pass
    wrong = SeedIndex(index, {"model": "another-model", "chunker": chunker})
    with (
        pytest.raises(WorkDirError, match="has model"),
        holdout_copy(vault, HELD, "removed", seed=wrong),
    ):
        pass
    with (
        pytest.raises(WorkDirError, match="holds no zettel-lsp index"),
        holdout_copy(vault, HELD, "removed", seed=SeedIndex(tmp_path, {})),
    ):
        pass
    with (
        pytest.raises(WorkDirError, match="seed index"),
        holdout_copy(vault, HELD, "removed", index / "inner", seed=seed),
    ):
        pass
    assert tree(index) == seed_before
    # while a zettel-lsp process holds the seed (it may be writing), it is not copied
    with (
        Vault(vault, index),
        pytest.raises(WorkDirError, match="in use"),
        holdout_copy(vault, HELD, "removed", seed=seed),
    ):
        pass


def args(**kw: object) -> argparse.Namespace:
    base: dict[str, object] = {
        "legs": None,
        "no_graph": False,
        "weights": None,
        "rrf_k": None,
        "depth": None,
    }
    return argparse.Namespace(**(base | kw))


def test_legs_no_graph_and_weights_select_the_fusion() -> None:
    assert eval_links_fusion(args()) == DEFAULT_SUGGEST_FUSION
    assert eval_links_fusion(args(legs="bm25,cocitation")).legs == ("bm25", "cocitation")
    no_graph = eval_links_fusion(args(no_graph=True))
    assert no_graph.legs and not set(no_graph.legs) & set(GRAPH_LEGS)
    f = eval_links_fusion(args(weights="bm25=3,dense=0", rrf_k=10.0, depth=20))
    assert f.weights["bm25"] == 3.0 and "dense" not in f.legs and (f.k, f.depth) == (10.0, 20)
    for bad in (
        args(legs="bm25,nope"),
        args(weights="bm25=-1"),
        args(weights="title=1"),
        args(legs="adamic_adar", no_graph=True),
    ):
        with pytest.raises(CliError):
            eval_links_fusion(bad)


def test_hold_out_takes_a_fifth_rounded_up_of_notes_with_three_links() -> None:
    pairs = [(f"S{n}", f"T{i}") for n in (2, 3, 5, 6, 15) for i in range(n)]
    held = hold_out(pairs, seed=1)
    per: dict[str, int] = {}
    for s, _ in held:
        per[s] = per.get(s, 0) + 1
    assert per == {"S3": 1, "S5": 1, "S6": 2, "S15": 3}
    assert set(held) <= set(pairs)
    assert hold_out(pairs, seed=1) == held
    assert hold_out(pairs, seed=0) != held
    assert json.dumps(held)  # plain pairs


def test_the_cli_expects_what_an_index_records(indexed: tuple[Path, Path, str, str]) -> None:
    """``eval-links --seed-index`` accepts an index made with the same settings (it refused
    every index once the chunker id gained the language version)."""
    vault, index, model, chunker = indexed
    args = build_parser().parse_args(
        ["eval-links", str(vault), "held.tsv", "--seed-index", str(index)]
    )
    seed = seed_index_of(args)
    assert seed.expect == {"model": model, "chunker": chunker}
    with holdout_copy(vault, HELD, "mention", seed=seed) as hc:
        assert read_state(hc.index_dir) is not None


def test_the_cli_dumps_the_legs_for_the_tuner(
    indexed: tuple[Path, Path, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``eval-links --dump-legs``: the layout ``benchmarks/suggest_tune.py`` reads; too few
    links to self-tune on, so ``ours`` is the default fusion and no ``ours-fixed`` row."""
    vault, index, _, _ = indexed
    held = tmp_path / "held.tsv"
    held.write_text("src\tdst\n" + "".join(f"{h.src}\t{h.dst}\n" for h in HELD))
    out = tmp_path / "legs.json"
    argv = ["eval-links", str(vault), str(held), "--variant", "mention", "--json"]
    assert main([*argv, "--seed-index", str(index), "--dump-legs", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["self_tuned"] is None and "ours-fixed" not in report["rankers"]
    doc = json.loads(out.read_text())
    assert doc["holdout"] == str(held) and doc["variant"] == "mention" and doc["depth"] == 50
    (source,) = doc["sources"]
    assert source["src"] == "Src.md" and set(source["legs"]) == set(SUGGEST_LEGS)
