"""Rename edits on hand-built vaults: every link form rewritten in its own form, titles,
headings, refusals, and a property test that renaming and renaming back is the identity."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.graph.rename import (
    RenameError,
    RenamePlan,
    TextEdit,
    new_path_for,
    plan_file_rename,
    plan_heading_rename,
    plan_title_rename,
)
from zettel_lsp.notes.parser import parse_card


def build(spec: dict[str, str]) -> LinkGraph:
    return LinkGraph.build(parse_card(p, t) for p, t in spec.items())


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    """``text`` with ``edits`` (a plan's: in text order) applied; they must not overlap."""
    done = len(text)
    for e in reversed(edits):
        assert e.end <= done, "overlapping edits"
        text, done = text[: e.start] + e.new_text + text[e.end :], e.start
    return text


def applied(spec: dict[str, str], plan: RenamePlan) -> dict[str, str]:
    """The vault after ``plan``: edits, then the move."""
    out = {p: apply_edits(t, plan.edits.get(p, [])) for p, t in spec.items()}
    if plan.move is not None:
        old, new = plan.move
        out[new] = out.pop(old)
    return out


SOURCE = """\
# Source

Plain [[Old note]] and [[old note]] in lower case, with a path [[notes/Old note]],
a suffix [[Old note.md]], a heading [[Old note#Part one]], a block [[Old note#^blk]],
an alias [[Old note|shown text]], an embed ![[Old note]], an embed with a heading
![[Old note#Part one|x]], a Markdown link [text](notes/Old%20note.md), one with a fragment
[frag](notes/Old%20note.md#part-one), an angle one [a](<notes/Old note.md>), a root one
[r](/notes/Old%20note.md) and a title [tt](notes/Old%20note.md "Title").
Not a link: `[[Old note]]` in code, [[Other]], [[Old notebook]].
"""

VAULT = {
    "Source.md": SOURCE,
    "notes/Old note.md": "# Old note\n\n## Part one\n\nText ^blk\n\n"
    "Self [[#Part one]] [[Old note]].\n",
    "Other.md": "Links to [[Old note]] here.\n",
    "Old notebook.md": "Unrelated.\n",
}


def test_file_rename_rewrites_every_link_form() -> None:
    g = build(VAULT)
    plan = plan_file_rename(g, "notes/Old note.md", "notes/New name.md")
    assert plan.move == ("notes/Old note.md", "notes/New name.md")
    after = applied(VAULT, plan)
    src = after["Source.md"]
    for expected in (
        "Plain [[New name]] and [[new name]] in lower case",
        "[[notes/New name]]",
        "[[New name.md]]",
        "[[New name#Part one]]",
        "[[New name#^blk]]",
        "[[New name|shown text]]",
        "![[New name]]",
        "![[New name#Part one|x]]",
        "[text](notes/New%20name.md)",
        "[frag](notes/New%20name.md#part-one)",
        "[a](<notes/New name.md>)",
        "[r](/notes/New%20name.md)",
        '[tt](notes/New%20name.md "Title")',
        "`[[Old note]]` in code, [[Other]], [[Old notebook]].",
    ):
        assert expected in src, expected
    assert after["Other.md"] == "Links to [[New name]] here.\n"
    # the H1 that repeats the file name follows it; the card's own links too
    assert after["notes/New name.md"].startswith("# New name\n")
    assert "Self [[#Part one]] [[New name]]." in after["notes/New name.md"]
    assert after["Old notebook.md"] == "Unrelated.\n"


def test_every_link_still_resolves_to_the_card_after_the_rename() -> None:
    g = build(VAULT)
    before = {p: [rl.target for rl in g.links_of(p)] for p in VAULT}
    after = applied(VAULT, plan_file_rename(g, "notes/Old note.md", "notes/New name.md"))
    g2 = build(after)
    for path, targets in before.items():
        new_path = "notes/New name.md" if path == "notes/Old note.md" else path
        mapped = ["notes/New name.md" if t == "notes/Old note.md" else t for t in targets]
        assert [rl.target for rl in g2.links_of(new_path)] == mapped


def test_frontmatter_title_equal_to_the_file_name_follows_it() -> None:
    spec = {
        "A.md": "---\ntitle: 'A'\ntags: [x]\n---\nBody\n",
        "B.md": "[[A]] [[A|label]]\n",
    }
    after = applied(spec, plan_file_rename(build(spec), "A.md", "Z.md"))
    assert after["Z.md"] == "---\ntitle: 'Z'\ntags: [x]\n---\nBody\n"
    assert after["B.md"] == "[[Z]] [[Z|label]]\n"


def test_dendron_label_first_links_rename_the_target_side() -> None:
    spec = {
        "a.b.md": "---\ntitle: B\n---\nbody\n",
        "root.md": "See [[the b note|a.b]] and [[a.b]].\n",
    }
    after = applied(spec, plan_file_rename(build(spec), "a.b.md", "a.c.md"))
    assert after["root.md"] == "See [[the b note|a.c]] and [[a.c]].\n"
    assert after["a.c.md"] == spec["a.b.md"]  # the frontmatter title is not the file name


def test_move_to_another_folder_rewrites_paths_and_relative_links() -> None:
    spec = {
        "x/Card.md": "[up](../Top.md) [[Top]]\n",
        "Top.md": "[c](x/Card.md) [[Card]] [[x/Card]]\n",
        "x/Sib.md": "[s](Card.md)\n",
    }
    after = applied(spec, plan_file_rename(build(spec), "x/Card.md", "y/z/Card.md", strict=False))
    assert after["Top.md"] == "[c](y/z/Card.md) [[Card]] [[y/z/Card]]\n"
    assert after["x/Sib.md"] == "[s](../y/z/Card.md)\n"
    assert after["y/z/Card.md"] == "[up](../../Top.md) [[Top]]\n"
    g2 = build(after)
    assert g2.backlinks("y/z/Card.md") == ["Top.md", "x/Sib.md"]
    assert g2.outgoing("y/z/Card.md") == ["Top.md"]


def test_links_by_alias_are_kept() -> None:
    spec = {"A.md": "---\naliases: [Alpha]\n---\n", "B.md": "[[Alpha]] [[A]]\n"}
    after = applied(spec, plan_file_rename(build(spec), "A.md", "Z.md"))
    assert after["B.md"] == "[[Alpha]] [[Z]]\n"


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("B", "exists"),
        ("a/b", "cannot contain"),
        ("x|y", "cannot contain"),
        ("", "empty"),
        (" pad", "space"),
        ("a[b]", "cannot contain"),
        ("a^b", "cannot contain"),
    ],
)
def test_refused_names(new: str, message: str) -> None:
    g = build({"A.md": "x", "B.md": "y", "C.md": "[[A]]"})
    with pytest.raises(RenameError, match=message):
        plan_file_rename(g, "A.md", new_path_for("A.md", new))


def test_a_name_taking_over_links_of_another_card_is_refused() -> None:
    spec = {"f/A.md": "", "g/Note.md": "", "f/Src.md": "[[Note]]"}
    g = build(spec)
    with pytest.raises(RenameError, match="would point at this card"):
        plan_file_rename(g, "f/A.md", "f/Note.md")


def test_same_file_name_in_another_folder_writes_the_path_when_needed() -> None:
    spec = {"f/A.md": "", "g/Note.md": "", "g/Src.md": "[[A]]", "f/Src2.md": "[[A]]"}
    after = applied(spec, plan_file_rename(build(spec), "f/A.md", "f/Note.md"))
    assert after["g/Src.md"] == "[[f/Note]]"  # [[Note]] would pick g/Note.md from g/
    assert after["f/Src2.md"] == "[[Note]]"
    # a card at the vault root wins a bare [[Note]] from everywhere (a path from the root)
    spec = {"f/A.md": "", "Note.md": "", "f/Src.md": "[[A]]", "f/N.md": "[[Note]]"}
    after = applied(spec, plan_file_rename(build(spec), "f/A.md", "f/Note.md"))
    assert after["f/Src.md"] == "[[f/Note]]"
    assert build(after).backlinks("f/Note.md") == ["f/Src.md"]


def test_title_rename_edits_the_h1_and_title_links() -> None:
    spec = {
        "202401011200.md": "# Deep work\n\nText\n",
        "Src.md": "[[Deep work]] [[deep work|dw]] [[202401011200]]\n",
    }
    g = build(spec)
    plan = plan_title_rename(g, "202401011200.md", "Focused work")
    assert plan.move is None
    after = applied(spec, plan)
    assert after["202401011200.md"] == "# Focused work\n\nText\n"
    assert after["Src.md"] == "[[Focused work]] [[focused work|dw]] [[202401011200]]\n"


def test_title_rename_on_a_frontmatter_title() -> None:
    spec = {"n1.md": '---\ntitle: "Old T"\n---\nx\n', "S.md": "[[Old T#H]]\n"}
    after = applied(spec, plan_title_rename(build(spec), "n1.md", "New T"))
    assert after["n1.md"] == '---\ntitle: "New T"\n---\nx\n'
    assert after["S.md"] == "[[New T#H]]\n"


def test_heading_rename_rewrites_links_to_it() -> None:
    spec = {
        "Card.md": "# Card\n\n## Old head\n\ntext\n\n## Other\n\n[[#Old head]]\n",
        "S.md": "[[Card#Old head]] [[Card#old head|x]] [[Card#Other]] [m](Card.md#old-head)\n"
        "[e](Card.md#Old%20head) ![[Card#Old head]]\n",
    }
    g = build(spec)
    heading = g.cards["Card.md"].headings[1]
    after = applied(spec, plan_heading_rename(g, "Card.md", heading, "New head"))
    assert "## New head\n" in after["Card.md"]
    assert "[[#New head]]" in after["Card.md"]
    assert after["S.md"] == (
        "[[Card#New head]] [[Card#new head|x]] [[Card#Other]] [m](Card.md#new-head)\n"
        "[e](Card.md#New%20head) ![[Card#New head]]\n"
    )
    with pytest.raises(RenameError, match="already"):
        plan_heading_rename(g, "Card.md", heading, "other")


def test_new_path_for_keeps_folder_and_suffix() -> None:
    assert new_path_for("a/b/Old.md", "New") == "a/b/New.md"
    assert new_path_for("Old.MD", "New") == "New.MD"


# ------------------------------------------------------------------ round trip property

NAMES = st.sampled_from(["Alpha", "beta note", "Gamma (2)", "Déjà vu", "x.y", "Ω 100%"])
FORMS = st.sampled_from(
    [
        "[[{n}]]",
        "[[{n}|alias]]",
        "![[{n}#H]]",
        "[[{f}{n}#^b1]]",
        "[t]({f}{e}.md)",
        "[t](<{f}{n}.md>)",
        "[[{l}]]",
        "[[{c}|x]]",
        "[[{n}.md]]",
    ]
)
FOLDERS = st.sampled_from(["", "sub/"])


@settings(max_examples=60, deadline=None)
@given(
    old=NAMES,
    new=st.sampled_from(["Zz é 2", "R é (x)"]),
    folder=FOLDERS,
    forms=st.lists(FORMS, min_size=1, max_size=6),
    crlf=st.booleans(),
)
def test_rename_and_back_is_the_identity(
    old: str, new: str, folder: str, forms: list[str], crlf: bool
) -> None:
    from urllib.parse import quote

    enc = quote(old, safe="")
    body = " and ".join(
        f.format(
            n=old,
            f=folder,
            e=enc,
            l=old.lower(),
            c=" ".join(w[:1].upper() + w[1:] for w in old.split(" ")),
        )
        for f in forms
    )
    end = "\r\n" if crlf else "\n"
    spec = {
        f"{folder}{old}.md": f"# {old}{end}{end}## H{end}text ^b1{end}",
        "Src.md": f"{body}{end}",
        "sub/Deep.md": f"{body} [[Src]]{end}",
    }
    g = build(spec)
    old_path = f"{folder}{old}.md"
    new_path = new_path_for(old_path, new)
    forward = applied(spec, plan_file_rename(g, old_path, new_path))
    g2 = build(forward)
    assert len(g2.backlinks(new_path)) == len(g.backlinks(old_path))
    back = applied(forward, plan_file_rename(g2, new_path, old_path))
    assert back == spec


def test_a_frontmatter_title_stays_valid_yaml() -> None:
    spec = {"n1.md": "---\ntitle: Old T\n---\nx\n", "n2.md": "---\ntitle: 'It''s'\n---\n"}
    after = applied(spec, plan_title_rename(build(spec), "n1.md", "Part: two"))
    assert after["n1.md"] == '---\ntitle: "Part: two"\n---\nx\n'
    assert build(after).cards["n1.md"].title == "Part: two"
    after = applied(spec, plan_title_rename(build(spec), "n2.md", "Bob's"))
    assert after["n2.md"] == "---\ntitle: 'Bob''s'\n---\n"
    assert build(after).cards["n2.md"].title == "Bob's"
