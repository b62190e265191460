"""benchmarks/make_vault.py at 300 cards: the same seed writes the same bytes, another seed other
ones; titles are unique and are the file names; links resolve (the project's own parser and
graph); the judged set sits beside the vault and its planted queries find their card; one note
is over 1 MB. The sources are ../shared (read, never copied): skipped when it is missing."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from benchmarks import make_vault as mv
from tests.conftest import SHARED
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.scan import load_vault

N = 300
GOLDEN_KEYS = {"id", "query", "relevant_paths", "partial_paths", "category", "notes"}


@pytest.fixture(scope="module")
def sources() -> mv.Sources:
    try:
        return mv.load_sources(SHARED)
    except mv.MissingData as e:
        pytest.skip(f"{e} (../shared is beside the project in CI)")


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, sources: mv.Sources
) -> dict[str, tuple[Path, mv.Summary]]:
    """Seed 0 twice and seed 1 once, each vault alone in its own folder, one big note each."""
    out: dict[str, tuple[Path, mv.Summary]] = {}
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        vault = tmp_path_factory.mktemp(name) / "vault"
        out[name] = (vault, mv.generate(N, vault, seed, sources, big_notes=1))
    return out


def digest(vault: Path) -> dict[str, str]:
    """sha256 of every file of the vault and of its judged set, by relative path."""
    files = {p.relative_to(vault).as_posix(): p for p in vault.rglob("*") if p.is_file()}
    files["<judged>"] = mv.judged_path(vault)
    return {k: hashlib.sha256(p.read_bytes()).hexdigest() for k, p in sorted(files.items())}


def words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]+", text)}


def test_same_seed_same_bytes_other_seed_other_vault(
    runs: dict[str, tuple[Path, mv.Summary]],
) -> None:
    a, b, c = (digest(runs[k][0]) for k in "abc")
    assert len(a) == N + 1
    assert a == b
    assert a.keys() != c.keys()


def test_only_notes_inside_and_the_judged_set_beside(
    runs: dict[str, tuple[Path, mv.Summary]],
) -> None:
    vault, _ = runs["a"]
    assert sorted(p.name for p in vault.parent.iterdir()) == ["vault", "vault.judged.json"]
    files = [p for p in vault.rglob("*") if p.is_file()]
    assert len(files) == N
    assert all(p.suffix == ".md" for p in files)


def test_titles_unique_links_resolve_and_hub_count_matches(
    runs: dict[str, tuple[Path, mv.Summary]],
) -> None:
    vault, summary = runs["a"]
    cards, problems = load_vault(vault)
    assert problems == []
    assert len(cards) == N
    assert all(c.title == c.stem for c in cards)
    assert len({c.title.casefold() for c in cards}) == N
    graph = LinkGraph.build(cards)
    total = sum(len(graph.links_of(c.path)) for c in cards)
    unresolved = sum(1 for _ in graph.unresolved_links())
    assert total == summary.links > N
    assert unresolved <= 0.02 * total
    hub, backlinks = graph.most_linked(1)[0]
    assert backlinks == summary.max_backlinks >= 10
    assert Path(hub).stem == summary.hub
    assert any(link.label for c in cards for link in c.links)  # [[Title|label]]
    assert any(link.subpath for c in cards for link in c.links)  # [[Title#Heading]]
    assert any(c.headings for c in cards)
    assert any(c.aliases for c in cards)
    assert any(c.tags for c in cards)
    assert sum(len(graph.mentions_of(c.path)) for c in cards) > 0


def test_the_judged_set_finds_its_cards(runs: dict[str, tuple[Path, mv.Summary]]) -> None:
    vault, summary = runs["a"]
    entries = json.loads(mv.judged_path(vault).read_text())
    assert len(entries) == summary.judged == mv.PLANTED + mv.TITLE_QUERIES
    assert len({e["id"] for e in entries}) == len(entries)
    texts = {p.relative_to(vault).as_posix(): p.read_text() for p in vault.rglob("*.md")}
    # a ~1 MB note holds most common words: only the ordinary cards must miss the query
    card_words = {path: words(text) for path, text in texts.items() if len(text) < 1_000_000}
    for e in entries:
        assert set(e) == GOLDEN_KEYS
        assert e["partial_paths"] == []
        [path] = e["relevant_paths"]
        assert path in texts
        if e["category"] == "title":
            assert e["query"] == Path(path).stem
            continue
        assert e["category"] == "planted"
        query = e["query"].split()
        assert 3 <= len(query) <= 6
        holders = [p for p, ws in card_words.items() if set(query) <= ws]
        assert holders == [path], e  # the planted card, and no other, holds every query word
    assert sum(e["category"] == "planted" for e in entries) == mv.PLANTED


def test_a_big_note(runs: dict[str, tuple[Path, mv.Summary]]) -> None:
    vault, _ = runs["a"]
    big = [p for p in vault.rglob("*.md") if p.stat().st_size >= 1_048_576]
    assert len(big) == 1
    assert big[0].read_text().count("\n## ") >= 10


def test_the_plan_does_not_depend_on_n(sources: mv.Sources) -> None:
    small = mv.plan_cards(100, 3, sources)
    large = mv.plan_cards(200, 3, sources)
    assert [p.path for p in small] == [p.path for p in large[:100]]


def test_refuses_a_full_folder_and_missing_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "note.md").write_text("x")
    assert mv.main(["10", str(full)]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert mv.main(["10", str(tmp_path / "new"), "--shared", str(tmp_path / "nowhere")]) == 2
    assert "shared data not found" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
