"""textDocument/completion and completionItem/resolve over stdio, for both client profiles:
``[[`` ranked by the paragraph's meaning in an unsaved buffer, typed names and aliases, the
inserted link with its brackets closed once, headings, block ids, tags, Markdown paths."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import client_column, open_doc, wait_ready

pytestmark = pytest.mark.asyncio(loop_scope="module")

LINKS = "See also [[Reciprocal rank fusion]], [[Cross-encoder reranking]] and [[Maps of Content]]."
BREAD = (
    "The starter ferments flour and water with wild yeast and lactic acid bacteria, "
    "and the dough rises slowly in bulk fermentation before shaping; see [["
)
SEARCH = (
    "Dense embedding vectors and cosine similarity find passages by meaning, and "
    "BM25 scores the exact terms of the query; see [["
)


def position(text: str, line: int, col: int, encoding: str) -> types.Position:
    return types.Position(line=line, character=client_column(text.split("\n")[line], col, encoding))


async def complete(
    client: LanguageClient, uri: str, text: str, line: int, col: int
) -> types.CompletionList:
    enc: str = client.encoding  # type: ignore[attr-defined]
    got = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position(text, line, col, enc),
        )
    )
    if got is None:
        return types.CompletionList(is_incomplete=False, items=[])
    assert isinstance(got, types.CompletionList)
    return got


def apply(text: str, line: int, edit: types.TextEdit, encoding: str) -> str:
    """``edit`` (one line) applied to line ``line`` of ``text``: the new line."""
    src = text.split("\n")[line]
    cols = [client_column(src, i, encoding) for i in range(len(src) + 1)]
    a, b = cols.index(edit.range.start.character), cols.index(edit.range.end.character)
    return src[:a] + edit.new_text + src[b:]


def edit_of(item: types.CompletionItem) -> types.TextEdit:
    assert isinstance(item.text_edit, types.TextEdit)
    return item.text_edit


async def test_names_are_built_before_the_first_request(client: LanguageClient) -> None:
    """Completion's names are built by the start-up, once the graph is, before the vault is
    "ready": not by the first ``[[``."""
    st = await wait_ready(client)
    logs = [m.message for m in client.log_messages]
    built = [m for m in logs if "names for completion" in m]
    assert len(built) == 1, logs[-8:]
    steps = list(st["vaults"][0]["startup_seconds"])
    assert steps.index("warm-up") > steps.index("graph")


async def test_completion_is_advertised(client: LanguageClient) -> None:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert caps.completion_provider is not None
    assert set(caps.completion_provider.trigger_characters or []) >= {"[", "#", "^", "("}
    assert caps.completion_provider.resolve_provider


async def test_nothing_typed_ranks_by_the_paragraph_in_an_unsaved_buffer(
    client: LanguageClient, shared_vault: Path
) -> None:
    text = f"{LINKS}\n\n{BREAD}\n\n{SEARCH}\n"
    uri = await open_doc(client, shared_vault / "Related reading.md", text)
    bread = await complete(client, uri, text, 2, len(BREAD))
    search = await complete(client, uri, text, 4, len(SEARCH))
    for got in (bread, search):
        assert got.is_incomplete  # the vault has more cards than the list
        assert len(got.items) > 10

    def folders(got: types.CompletionList) -> list[str]:
        return [str(edit_of(i).new_text) + " " + str(i.detail) for i in got.items[:5]]

    top_bread = folders(bread)
    top_search = folders(search)
    assert sum("baking" in f or "Sourdough" in f for f in top_bread) >= 3, top_bread
    assert sum("retrieval" in f for f in top_search) >= 3, top_search
    # the cards this one links to come last, marked as linked
    for got in (bread, search):
        tail = [i for i in got.items if (i.detail or "").endswith("· linked")]
        assert {i.label for i in tail} >= {"Reciprocal rank fusion", "Cross-encoder reranking"}
        first_linked = got.items.index(tail[0])
        assert all(
            (i.detail or "").endswith(("· linked", "· this card")) for i in got.items[first_linked:]
        )
        assert got.items[-1].label == "Related reading"  # the card itself at the very end
        assert all(not (i.detail or "").endswith("· linked") for i in got.items[:first_linked])


async def test_a_single_bracket_answers_nothing_and_the_second_one_the_list(
    client: LanguageClient, shared_vault: Path
) -> None:
    """Typed one key at a time, as an editor sends it (VS Code closes each bracket): the
    ``[`` request (where the server searches ahead) answers no items, the ``[[`` one the same
    list as a ``[[`` typed in one go."""
    uri = await open_doc(client, shared_vault / "Typed slowly.md", f"{BREAD} [\n")
    one = await complete(client, uri, f"{BREAD} [\n", 0, len(BREAD) + 2)
    assert not one.items
    two_text = f"{BREAD} [[]]\n"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=two_text)],
        )
    )
    two = await complete(client, uri, two_text, 0, len(BREAD) + 3)
    fresh = await open_doc(client, shared_vault / "Typed at once.md", f"{BREAD} [[\n")
    once = await complete(client, fresh, f"{BREAD} [[\n", 0, len(BREAD) + 3)
    assert len(two.items) > 10
    assert [i.label for i in two.items[:10]] == [i.label for i in once.items[:10]]
    assert all(str(edit_of(i).new_text).endswith("]]") for i in two.items)
    assert apply(two_text, 0, edit_of(two.items[0]), client.encoding).count("]]") == 1  # type: ignore[attr-defined]


async def test_a_typed_alias_inserts_the_alias_and_closes_the_brackets_once(
    client: LanguageClient, shared_vault: Path
) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    text = "# Scratch\n\nFusing rankings: [[RRF]] is simple\n\nnaïve [[rrf\n"
    uri = await open_doc(client, shared_vault / "Scratch.md", text)
    line = text.split("\n")[2]
    closed = await complete(client, uri, text, 2, line.index("RRF]]") + 3)
    first = closed.items[0]
    assert first.label.startswith("RRF")
    assert apply(text, 2, edit_of(first), enc) == (
        "Fusing rankings: [[Reciprocal rank fusion|RRF]] is simple"
    )
    # the card is linked now (line 2): its name still matches best, so it still comes first
    open_ = await complete(client, uri, text, 4, len("naïve [[rrf"))
    again = open_.items[0]
    assert again.label.startswith("RRF") and (again.detail or "").endswith("· linked")
    assert apply(text, 4, edit_of(again), enc) == "naïve [[Reciprocal rank fusion|RRF]]"


async def test_typed_letters_match_titles(client: LanguageClient, shared_vault: Path) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    text = "Some prose about baking: [[Dutch ov"
    uri = await open_doc(client, shared_vault / "Scratch typed.md", text)
    got = await complete(client, uri, text, 0, len(text))
    assert got.items[0].label == "Dutch oven baking"
    assert apply(text, 0, edit_of(got.items[0]), enc).endswith("[[Dutch oven baking]]")
    assert "baking" in (got.items[0].detail or "")


async def test_headings_and_block_ids_of_a_card(client: LanguageClient, shared_vault: Path) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    text = "Scores: [[BM25#]]\nThe formula: [[BM25#^\n"
    uri = await open_doc(client, shared_vault / "Scratch anchors.md", text)
    heads = await complete(client, uri, text, 0, len("Scores: [[BM25#"))
    labels = [i.label for i in heads.items]
    assert labels[:3] == ["BM25", "The formula", "Saturation and the k1 parameter"], labels
    assert apply(text, 0, edit_of(heads.items[1]), enc) == "Scores: [[BM25#The formula]]"
    blocks = await complete(client, uri, text, 1, len("The formula: [[BM25#^"))
    assert [i.label for i in blocks.items] == ["^bm25-formula"]
    assert apply(text, 1, edit_of(blocks.items[0]), enc) == "The formula: [[BM25#^bm25-formula]]"


async def test_tags_in_prose_only(client: LanguageClient, shared_vault: Path) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    text = "Bread notes #bak\n#\n```\ncode #bak\n```\n"
    uri = await open_doc(client, shared_vault / "Scratch tags.md", text)
    got = await complete(client, uri, text, 0, len("Bread notes #bak"))
    labels = [i.label for i in got.items]
    assert labels[0] == "#baking" and "#baking/fermentation" in labels, labels
    assert apply(text, 0, edit_of(got.items[0]), enc) == "Bread notes #baking"
    assert not (await complete(client, uri, text, 1, 1)).items  # a heading marker
    assert not (await complete(client, uri, text, 3, len("code #bak"))).items  # code


async def test_markdown_link_paths(client: LanguageClient, shared_vault: Path) -> None:
    enc: str = client.encoding  # type: ignore[attr-defined]
    text = "See [the formula](retrieval/BM"
    uri = await open_doc(client, shared_vault / "Scratch md.md", text)
    got = await complete(client, uri, text, 0, len(text))
    assert apply(text, 0, edit_of(got.items[0]), enc) == "See [the formula](retrieval/BM25.md"


async def test_documentation_inline_or_resolved(client: LanguageClient, shared_vault: Path) -> None:
    text = "Bread: [[Levain"
    uri = await open_doc(client, shared_vault / "Scratch docs.md", text)
    got = await complete(client, uri, text, 0, len(text))
    item = got.items[0]
    assert item.label == "Levain"
    if "documentation" in _resolve_props(client):  # VS Code: resolved lazily
        assert item.documentation is None
        item = await client.completion_item_resolve_async(item)
    else:  # Neovim: with the item
        assert item.documentation is not None
    doc = item.documentation
    assert isinstance(doc, types.MarkupContent)
    assert "**Levain**" in doc.value and "`baking/Levain.md`" in doc.value
    levain = (shared_vault / "baking" / "Levain.md").read_text(encoding="utf-8")
    first_words = doc.value.split("\n")[-1].split()[:3]
    assert first_words and " ".join(first_words).replace("*", "") in levain.replace("*", "")


def _resolve_props(client: LanguageClient) -> tuple[str, ...]:
    caps = client.capabilities
    try:
        props = caps.text_document.completion.completion_item.resolve_support.properties  # type: ignore[union-attr]
    except AttributeError:
        return ()
    return tuple(props or ())
