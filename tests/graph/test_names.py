"""The graph's name table: owners per name, paths, and near misses ("did you mean")."""

from __future__ import annotations

import pytest

import zettel_lsp.graph.names as names_module
from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.names import CUTOFF, Suggestion
from zettel_lsp.graph.resolver import Stage
from zettel_lsp.notes.parser import parse_card

CARDS = {
    "method/Zettelkasten method.md": "# Zettelkasten method\n",
    "method/Atomic notes.md": "---\naliases: [atomic, Atomic note]\n---\nOne idea per note.\n",
    "baking/Overview.md": "The bake.\n",
    "retrieval/Overview.md": "The search.\n",
}


def graph() -> LinkGraph:
    return LinkGraph.build(parse_card(p, t) for p, t in CARDS.items())


def paths(found: tuple[Suggestion, ...]) -> list[str]:
    return [s.path for s in found]


def test_owners_and_paths() -> None:
    names = graph().names
    assert names.owners(Stage.STEM, "OVERVIEW") == {"baking/Overview.md", "retrieval/Overview.md"}
    assert names.owners_of_key(Stage.ALIAS, "atomic") == ("method/Atomic notes.md",)
    assert names.at_path("method/atomic notes") == "method/Atomic notes.md"
    assert names.at_path("atomic notes") is None


def test_near_is_closest_first_each_card_once(monkeypatch: pytest.MonkeyPatch) -> None:
    names = graph().names
    (zk,) = names.near("Zettelkasten methd")
    assert (zk.path, zk.title, zk.name) == (
        "method/Zettelkasten method.md",
        "Zettelkasten method",
        "Zettelkasten method",
    )
    assert CUTOFF <= zk.score < 1
    # "Atomic note" (an alias) and "Atomic notes" (title, file name) are one card, under the
    # closest name as written
    (atomic,) = names.near("atomic nte")
    assert (atomic.path, atomic.name, atomic.score) == (
        "method/Atomic notes.md",
        "Atomic note",
        0.952,
    )
    assert paths(names.near("Overveiw")) == ["baking/Overview.md", "retrieval/Overview.md"]
    assert names.near("Nothing like any title") == () and names.near("") == ()
    monkeypatch.setattr(names_module, "SUGGESTIONS", 1)
    assert paths(graph().names.near("Overveiw")) == ["baking/Overview.md"]  # ties: by path


def test_near_follows_renames_and_removals() -> None:
    g = graph()
    assert paths(g.names.near("Zettelkasten methd")) == ["method/Zettelkasten method.md"]
    assert paths(g.names.near("Overveiw")) == ["baking/Overview.md", "retrieval/Overview.md"]
    g.remove("retrieval/Overview.md")
    g.rename(
        "method/Zettelkasten method.md",
        parse_card("method/Slip box.md", "---\ntitle: Slip box method\n---\n"),
    )
    assert paths(g.names.near("Overveiw")) == ["baking/Overview.md"]  # removed: never suggested
    assert g.names.near("Zettelkasten methd") == ()  # its old names are gone
    (renamed,) = g.names.near("slip box methd")
    assert (renamed.path, renamed.name) == ("method/Slip box.md", "Slip box method")
    assert paths(g.names.near("slip bx")) == ["method/Slip box.md"]  # the new file name


def test_a_text_edit_keeps_the_names() -> None:
    g = graph()
    before = g.names.near("Atomc notes")
    g.upsert(parse_card("method/Atomic notes.md", CARDS["method/Atomic notes.md"] + "More.\n"))
    assert g.names.near("Atomc notes") == before
    g.upsert(parse_card("method/Atomic notes.md", "---\naliases: [atoms]\n---\n"))
    (atoms,) = g.names.near("atom")
    assert (atoms.path, atoms.name) == ("method/Atomic notes.md", "atoms")


def test_near_many_answers_as_near_does() -> None:
    texts = ["Zettelkasten methd", "atomic nte", "Overveiw", "Nothing like any title", ""]
    one, many = graph().names, graph().names
    many.near_many(texts)
    many.near_many(["Overveiw", "overview"])  # answered already, or one name
    assert [many.near(t) for t in texts] == [one.near(t) for t in texts]


def test_a_kept_answer_follows_a_new_name() -> None:
    g = graph()
    assert paths(g.names.near("Overveiw")) == ["baking/Overview.md", "retrieval/Overview.md"]
    assert paths(g.names.near("Zettelkasten methd")) == ["method/Zettelkasten method.md"]
    # a new card close to one asked name: that answer changes, the other is the same
    g.upsert(parse_card("Overveiws.md", "# Overveiws\n"))
    assert paths(g.names.near("Overveiw")) == [
        "Overveiws.md",
        "baking/Overview.md",
        "retrieval/Overview.md",
    ]
    assert paths(g.names.near("Zettelkasten methd")) == ["method/Zettelkasten method.md"]
    # a card renamed and retitled leaves the answers its old names were in
    g.rename("Overveiws.md", parse_card("Else.md", "# Something else\n"))
    assert paths(g.names.near("Overveiw")) == ["baking/Overview.md", "retrieval/Overview.md"]
