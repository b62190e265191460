"""BEIR collections: the loader and its errors, materialised vaults (names, collisions, links,
idempotence), the work folder's safety rules, and judged queries. Tiny collections written here;
one test reads ../shared/data/ir when it is there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SHARED
from zettel_lsp.eval.beir import (
    MAX_STEM_CHARS,
    VAULT_MARKER,
    WORK_MARKER,
    BeirCollection,
    BeirDoc,
    BeirError,
    WorkDirError,
    card_stems,
    default_work_dir,
    judged_queries,
    load_beir,
    materialise,
    prepare_work_dir,
    safe_stem,
)
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.notes.scan import load_vault
from zettel_lsp.workdir import MARKER

LONG = "A very long title " * 12  # 216 characters

DOCS: list[dict[str, Any]] = [
    {"_id": "1", "title": "Sourdough starter", "text": "Flour and water ferment.", "year": 1},
    {"_id": "2", "title": "Multiprogramming: A Survey", "text": ""},  # unsafe ':'; no text
    {"_id": "3", "title": "Twin", "text": "The first twin."},
    {"_id": "4", "title": "twin", "text": "The second twin (same name up to case)."},
    {"_id": "Paris#a1b2", "title": "Paris", "text": "Capital of France."},
    {"_id": "Paris#c3d4", "title": "Paris", "text": "A city in Texas."},
    {"_id": "7", "title": "...And Justice for All", "text": "An album."},
    {"_id": "8", "title": LONG, "text": "Long."},
    {"_id": "9", "title": "", "text": "No title at all."},
    {"_id": "10", "title": "AC/DC [band] #1 ^x", "text": "Rock."},
]


def write_collection(
    root: Path,
    docs: list[dict[str, Any]] | None = None,
    links: str | None = "src\tdst\ttype\n1\t2\tcitation\n1\t3\tco-citation\n1\t2\tcitation\n",
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps(d) + "\n" for d in (DOCS if docs is None else docs)), encoding="utf-8"
    )
    queries = [
        {"_id": "q1", "text": "how does a sourdough starter ferment", "type": "bridge"},
        {"_id": "q2", "text": "a survey of multiprogramming"},
        {"_id": "q3", "text": "an unjudged query"},
        {"_id": "q4", "text": "judged but nothing relevant"},
    ]
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (root / "qrels").mkdir(exist_ok=True)
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\t1\t1\nq2\t2\t2\nq2\t99\t1\nq2\t3\t0\nq4\t1\t0\n"
    )
    if links is not None:
        (root / "links.tsv").write_text(links)
    return root


# ---------------------------------------------------------------------------------- loader


def test_load_reads_every_file(tmp_path: Path) -> None:
    c = load_beir(write_collection(tmp_path / "coll"))
    assert c.name == "coll" and c.root == (tmp_path / "coll").resolve()
    assert [d.id for d in c.docs] == [d["_id"] for d in DOCS]  # corpus order
    assert c.docs[1] == BeirDoc("2", "Multiprogramming: A Survey", "")
    assert [(q.id, q.category) for q in c.queries] == [
        ("q1", "bridge"),
        ("q2", None),
        ("q3", None),
        ("q4", None),
    ]
    assert c.qrels == {"q1": {"1": 1}, "q2": {"2": 2, "99": 1, "3": 0}, "q4": {"1": 0}}
    assert c.links == [("1", "2"), ("1", "3"), ("1", "2")]
    assert c.link_types == {"citation", "co-citation"} and c.links_heading == "Cites"


def test_load_without_links_and_with_mention_links(tmp_path: Path) -> None:
    c = load_beir(write_collection(tmp_path / "a", links=None))
    assert c.links == [] and c.links_heading == "Links"
    c = load_beir(write_collection(tmp_path / "b", links="src\tdst\ttype\n1\t3\ttitle-mention\n"))
    assert c.links == [("1", "3")] and c.links_heading == "Links"


@pytest.mark.parametrize(
    ("file", "content", "line", "problem"),
    [
        ("corpus.jsonl", '{"_id": "1", "title": "a", "text": ""}\n{"_id": "2", "ti', 2, "JSON"),
        ("corpus.jsonl", '{"_id": "1", "text": "x"}\n\n{"title": "no id"}\n', 3, "no _id"),
        ("corpus.jsonl", '{"_id": "1", "text": "x"}\n{"_id": "1", "text": "y"}\n', 2, "duplicate"),
        ("corpus.jsonl", '["not", "an", "object"]\n', 1, "not a JSON object"),
        ("corpus.jsonl", '{"_id": "1", "text": 3}\n', 1, "'text' is not a string"),
        ("queries.jsonl", '{"_id": "q1"}\n{"_id": "q2", "text": 5}\n', 2, "not a string"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\t1\n", 2, "3 tab-separated"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\t1\thigh\n", 2, "not a number"),
        ("links.tsv", "src\tdst\ttype\n1\n", 2, "src dst"),
    ],
)
def test_garbled_files_name_the_file_and_line(
    tmp_path: Path, file: str, content: str, line: int, problem: str
) -> None:
    root = write_collection(tmp_path / "coll")
    (root / file).write_text(content)
    with pytest.raises(BeirError) as err:
        load_beir(root)
    assert err.value.path == root.resolve() / file and err.value.line == line
    assert problem in str(err.value) and f"{file}:{line}" in str(err.value)


def test_missing_files_and_bad_bytes(tmp_path: Path) -> None:
    root = write_collection(tmp_path / "coll")
    (root / "qrels" / "test.tsv").unlink()
    with pytest.raises(BeirError, match=r"qrels/test.tsv: missing"):
        load_beir(root)
    (root / "queries.jsonl").unlink()
    with pytest.raises(BeirError, match=r"queries.jsonl: missing"):
        load_beir(root)
    (root / "corpus.jsonl").write_bytes(b'{"_id": "1"}\n{"_id": "caf\xe9"}\n')
    with pytest.raises(BeirError, match=r"corpus.jsonl:2: not UTF-8"):
        load_beir(root)
    with pytest.raises(BeirError, match="not a folder"):
        load_beir(tmp_path / "nope")


# ---------------------------------------------------------------------------------- names


def test_safe_stem() -> None:
    assert safe_stem("Sourdough starter") == "Sourdough starter"
    assert safe_stem("Multiprogramming: A Survey") == "Multiprogramming A Survey"
    assert safe_stem("AC/DC [band] #1 ^x") == "AC DC band 1 x"
    assert safe_stem("...And Justice for All") == "And Justice for All"
    assert safe_stem("  a\tb\nc  ") == "a b c"
    assert safe_stem("NUL") == "" and safe_stem("???") == ""
    assert safe_stem("notes.md") == "notes md"
    long = safe_stem(LONG)
    assert len(long) <= MAX_STEM_CHARS and LONG.startswith(long) and not long.endswith(" ")
    wide = safe_stem("語" * 150)  # 3 bytes a character: cut by bytes, not characters
    assert 0 < len(wide.encode()) <= 180


def test_card_names_and_titles(tmp_path: Path) -> None:
    c = load_beir(write_collection(tmp_path / "coll"))
    stems = card_stems(c.docs)
    assert stems["1"] == "Sourdough starter"
    assert stems["2"] == "Multiprogramming A Survey"
    assert (stems["3"], stems["4"]) == ("Twin (3)", "twin (4)")  # equal up to case: both tagged
    assert (stems["Paris#a1b2"], stems["Paris#c3d4"]) == ("Paris (a1b2)", "Paris (c3d4)")
    assert stems["7"] == "And Justice for All"
    assert stems["9"] == "doc 9"
    assert stems["10"] == "AC DC band 1 x"
    assert len({s.casefold() for s in stems.values()}) == len(stems)
    paths = materialise(c, tmp_path / "vault")
    assert paths == {i: f"{s}.md" for i, s in stems.items()}
    cards, problems = load_vault(tmp_path / "vault")
    assert problems == [] and len(cards) == len(DOCS)  # no dot-file: '...And' lost its dots
    by_path = {card.path: card for card in cards}
    for d in DOCS:
        card = by_path[paths[d["_id"]]]
        assert card.card_id == d["_id"]
        assert card.title == (d["title"].strip() or "doc 9")
    # the file name is the title where it can be: no frontmatter title then
    assert "title" not in by_path["Sourdough starter.md"].frontmatter
    assert by_path["Multiprogramming A Survey.md"].frontmatter["title"] == d_title("2")
    text = (tmp_path / "vault" / "Multiprogramming A Survey.md").read_text()
    assert text == "---\nid: '2'\ntitle: 'Multiprogramming: A Survey'\n---\n"  # no text


def d_title(doc_id: str) -> str:
    return next(d["title"] for d in DOCS if d["_id"] == doc_id)


def test_a_name_that_is_taken_gets_a_counter() -> None:
    docs = [BeirDoc("1", "Foo (2)", ""), BeirDoc("2", "Foo", ""), BeirDoc("x", "Foo", "")]
    stems = card_stems(docs)
    assert stems == {"1": "Foo (2)", "2": "Foo (2) 2", "x": "Foo (x)"}
    assert card_stems(list(docs)) == stems  # deterministic


def test_links_become_a_section_that_resolves(tmp_path: Path) -> None:
    c = load_beir(write_collection(tmp_path / "coll"))
    paths = materialise(c, tmp_path / "vault")
    text = (tmp_path / "vault" / paths["1"]).read_text()
    assert text == (
        "---\nid: '1'\n---\n\nFlour and water ferment.\n\n## Cites\n\n"
        "- [[Multiprogramming A Survey|Multiprogramming: A Survey]]\n"  # once, with its title
        "- [[Twin (3)|Twin]]\n"
    )
    cards, _ = load_vault(tmp_path / "vault")
    graph = LinkGraph.build(cards)
    assert graph.linked_pairs() == {(paths["1"], paths["2"]), (paths["1"], paths["3"])}
    assert list(graph.unresolved_links()) == []
    # title-mention links: a "Links" section; unknown ids and self-links are left out
    c = load_beir(
        write_collection(
            tmp_path / "mentions",
            links="src\tdst\ttype\n1\t3\ttitle-mention\n1\tnope\ttitle-mention\n1\t1\tx\n",
        )
    )
    materialise(c, tmp_path / "vault2")
    assert (
        (tmp_path / "vault2" / "Sourdough starter.md")
        .read_text()
        .endswith("## Links\n\n- [[Twin (3)|Twin]]\n")
    )


# ---------------------------------------------------------------------------------- idempotence


def test_materialise_is_idempotent_and_updates_what_changed(tmp_path: Path) -> None:
    root = write_collection(tmp_path / "coll")
    vault = tmp_path / "vault"
    materialise(load_beir(root), vault)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in vault.iterdir()}
    os.utime(vault / "Sourdough starter.md", ns=(1, 1))  # any rewrite would change this
    materialise(load_beir(root), vault)
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in vault.iterdir()}
    assert {k: v[0] for k, v in after.items()} == {k: v[0] for k, v in before.items()}
    assert (vault / "Sourdough starter.md").stat().st_mtime_ns == 1
    # a user's own file in the folder is not ours: kept; a dropped document's card goes
    (vault / "mine.md").write_text("my note")
    docs = [d for d in DOCS if d["_id"] != "7"]
    docs[0] = {**docs[0], "text": "Changed."}
    materialise(load_beir(write_collection(root, docs)), vault)
    assert not (vault / "And Justice for All.md").exists()
    assert (vault / "mine.md").read_text() == "my note"
    assert "Changed." in (vault / "Sourdough starter.md").read_text()
    manifest = json.loads((vault / VAULT_MARKER).read_text())
    assert "mine.md" not in manifest["files"] and "Sourdough starter.md" in manifest["files"]


# ---------------------------------------------------------------------------------- safety


def test_refuses_folders_it_did_not_make(tmp_path: Path) -> None:
    c = load_beir(write_collection(tmp_path / "coll"))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "Precious.md").write_text("do not touch")
    with pytest.raises(WorkDirError, match="not empty and was not made by"):
        materialise(c, notes)
    with pytest.raises(WorkDirError, match="not empty and was not made by"):
        prepare_work_dir(c, notes)
    assert [p.name for p in notes.iterdir()] == ["Precious.md"]
    # a marker that is not ours, or garbled
    (notes / WORK_MARKER).write_text('{"tool": "something else"}')
    with pytest.raises(WorkDirError, match="not written by zettel-lsp"):
        prepare_work_dir(c, notes)
    (notes / WORK_MARKER).write_text("{garbled")
    with pytest.raises(WorkDirError, match="cannot be read"):
        prepare_work_dir(c, notes)
    # a work folder whose vault/ holds something else: the vault is not touched either
    work = tmp_path / "work"
    (work / "vault").mkdir(parents=True)
    (work / WORK_MARKER).write_text('{"tool": "zettel-lsp eval-beir"}')
    (work / "vault" / "Precious.md").write_text("do not touch")
    with pytest.raises(WorkDirError, match="vault folder"):
        prepare_work_dir(c, work)
    assert [p.name for p in (work / "vault").iterdir()] == ["Precious.md"]
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(WorkDirError, match="is a file"):
        prepare_work_dir(c, file)


def test_refuses_folders_that_overlap_the_collection(tmp_path: Path) -> None:
    root = write_collection(tmp_path / "coll")
    c = load_beir(root)
    before = sorted(str(p) for p in root.rglob("*"))
    for work, relation in [
        (root, "is the collection"),
        (root / "work", "is inside the collection"),
        (root / "qrels", "is inside the collection"),
        (tmp_path, "contains the collection"),
    ]:
        with pytest.raises(WorkDirError, match=relation):
            prepare_work_dir(c, work)
    with pytest.raises(WorkDirError, match="is inside the collection"):
        materialise(c, root / "vault")
    with pytest.raises(WorkDirError, match=r"index folder .* is inside the collection"):
        prepare_work_dir(c, tmp_path / "work", index_dir=root / "idx")
    with pytest.raises(WorkDirError, match="inside the vault copy"):
        prepare_work_dir(c, tmp_path / "work", index_dir=tmp_path / "work" / "vault" / "i")
    assert sorted(str(p) for p in root.rglob("*")) == before
    assert not (tmp_path / "work").exists()


def test_an_index_folder_apart_from_the_work_folder_is_claimed_too(tmp_path: Path) -> None:
    """The index folder of eval-beir (--index-dir) gets the same rules as the work folder: the
    index would write into it and may delete its own shard there."""
    c = load_beir(write_collection(tmp_path / "coll"))
    notes = tmp_path / "notes"
    (notes / "shard").mkdir(parents=True)
    (notes / "Keep.md").write_text("mine")
    (notes / "shard" / "Deep.md").write_text("mine too")
    with pytest.raises(WorkDirError, match="not empty and was not made by"):
        prepare_work_dir(c, tmp_path / "work", index_dir=notes)
    assert sorted(p.name for p in notes.rglob("*")) == ["Deep.md", "Keep.md", "shard"]
    assert not (tmp_path / "work").exists()
    # an index folder that holds the vault copy
    with pytest.raises(WorkDirError, match="contains the vault copy"):
        prepare_work_dir(c, tmp_path / "work", index_dir=tmp_path / "work")
    assert not (tmp_path / "work").exists()
    # a new one is marked (and then reused); the default index/ is inside the work folder
    prepare_work_dir(c, tmp_path / "work", index_dir=tmp_path / "idx")
    marker = json.loads((tmp_path / "idx" / MARKER).read_text())
    assert marker["tool"] == "zettel-lsp eval-beir"
    assert prepare_work_dir(c, tmp_path / "work", index_dir=tmp_path / "idx").reused
    assert not (tmp_path / "work" / "index" / MARKER).exists()


def test_the_command_refuses_a_work_folder_holding_the_collection(tmp_path: Path) -> None:
    """``eval-beir coll --work-dir .`` beside ``./coll``: refused, nothing written."""
    write_collection(tmp_path / "coll")
    before = sorted((str(p), p.read_bytes() if p.is_file() else b"") for p in tmp_path.rglob("*"))
    for flags in (["--work-dir", "."], ["--work-dir", "w", "--index-dir", "."]):
        out = subprocess.run(
            [sys.executable, "-m", "zettel_lsp", "eval-beir", "coll", *flags],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 2, out.stderr
        assert "contains the collection folder" in out.stderr
    after = sorted((str(p), p.read_bytes() if p.is_file() else b"") for p in tmp_path.rglob("*"))
    assert after == before


def test_work_folder_is_reused_until_the_collection_changes(tmp_path: Path) -> None:
    root = write_collection(tmp_path / "coll")
    work = tmp_path / "work"
    first = prepare_work_dir(load_beir(root), work)
    assert not first.reused and first.vault == work.resolve() / "vault"
    assert first.index == work.resolve() / "index"
    marker = json.loads((work / WORK_MARKER).read_text())
    assert marker["collection"] == str(root.resolve()) and marker["content_hash"]
    second = prepare_work_dir(load_beir(root), work)
    assert second.reused and second.paths == first.paths
    docs = [*DOCS, {"_id": "11", "title": "New", "text": "A new document."}]
    third = prepare_work_dir(load_beir(write_collection(root, docs)), work)
    assert not third.reused and (work / "vault" / "New.md").is_file()
    elsewhere = prepare_work_dir(load_beir(root), tmp_path / "w2", index_dir=tmp_path / "i")
    assert elsewhere.index == (tmp_path / "i").resolve()
    # an empty folder is fine too
    (tmp_path / "empty").mkdir()
    assert not prepare_work_dir(load_beir(root), tmp_path / "empty").reused


def test_default_work_dir_is_in_the_cache_keyed_by_path(tmp_path: Path) -> None:
    a = default_work_dir(tmp_path / "x" / "cacm", tmp_path / "cache")
    b = default_work_dir(tmp_path / "y" / "cacm", tmp_path / "cache")
    assert a.parent == tmp_path / "cache" / "beir" and a.name.startswith("cacm-")
    assert a != b and a == default_work_dir(tmp_path / "x" / "cacm", tmp_path / "cache")


# ---------------------------------------------------------------------------------- queries


def test_judged_queries(tmp_path: Path) -> None:
    c = load_beir(write_collection(tmp_path / "coll"))
    paths = materialise(c, tmp_path / "vault")
    golden = judged_queries(c, paths)
    assert [(g.id, g.category) for g in golden] == [("q1", "bridge"), ("q2", "coll")]
    assert golden[0].query == "how does a sourdough starter ferment"
    assert golden[0].relevant == {"Sourdough starter.md"}
    # grade 0 is not relevant; a judged document missing from the corpus still counts
    assert golden[1].relevant == {"Multiprogramming A Survey.md", "(not in corpus) 99"}


def test_empty_collection_is_fine(tmp_path: Path) -> None:
    c = BeirCollection(tmp_path / "c", "c", [], [], {})
    assert materialise(c, tmp_path / "v") == {} and judged_queries(c, {}) == []


# ---------------------------------------------------------------------------------- shared data


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "docs", "judged", "queries", "heading"),
    [
        ("cacm", 3204, 52, 64, "Cites"),
        ("cisi", 1460, 76, 112, "Cites"),
        ("hotpotqa100", 994, 100, 100, "Links"),
        ("musique100", 1890, 100, 100, "Links"),
    ],
)
def test_shared_collections_load_and_link(
    tmp_path: Path, name: str, docs: int, judged: int, queries: int, heading: str
) -> None:
    root = SHARED / "data" / "ir" / name
    if not (root / "corpus.jsonl").is_file():
        pytest.skip(f"IR collection {name} not found at {root} (../shared is beside the project)")
    c = load_beir(root)
    assert (len(c.docs), len(c.queries), c.links_heading) == (docs, queries, heading)
    paths = materialise(c, tmp_path / "vault")
    golden = judged_queries(c, paths)
    assert len(golden) == judged
    assert all(not r.startswith("(not in corpus)") for g in golden for r in g.relevant)
    cards, problems = load_vault(tmp_path / "vault")
    assert problems == [] and len(cards) == docs
    graph = LinkGraph.build(cards)
    assert graph.linked_pairs() == {(paths[s], paths[d]) for s, d in c.links if s != d}
    titles = {card.path: card.title for card in cards}
    assert all(titles[paths[d.id]] == (d.title.strip() or paths[d.id][:-3]) for d in c.docs)
