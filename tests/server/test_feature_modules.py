"""Each feature module's handlers, imported and called directly (issue #13: no handler is a
closure inside ``create_server`` any more). The server object is the real one, with a pygls
workspace and a real vault service (real index, real model) on a copy of examples/vault; only
the JSON-RPC transport is left out (the stdio tests in this folder cover it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.workspace import Workspace
from pytest_lsp import client_capabilities

from tests.conftest import copy_indexed
from zettel_lsp.server.app import COMMANDS, create_server
from zettel_lsp.server.features import (
    MODULES,
    actions,
    commands,
    hover,
    lifecycle,
    navigation,
    rename,
    search,
)
from zettel_lsp.server.server import ZettelLanguageServer
from zettel_lsp.server.service import Phase

CARD = "baking/Autolyse.md"


@pytest.fixture(scope="module")
def ls(
    tmp_path_factory: pytest.TempPathFactory, server_cache: Path, indexed_example: Path
) -> Iterator[ZettelLanguageServer]:
    root = tmp_path_factory.mktemp("features")
    vault = root / "vault"
    copy_indexed(indexed_example, vault, root / "index")  # a complete index: a warm start
    server = create_server()
    lifecycle.on_initialize(
        server,
        types.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"),
            initialization_options={
                "cacheDir": str(server_cache),
                "indexDir": str(root / "index"),
                "watch": False,
            },
        ),
    )
    server.protocol._workspace = Workspace(
        vault.as_uri(), workspace_folders=[types.WorkspaceFolder(uri=vault.as_uri(), name="v")]
    )
    server.protocol.client_capabilities = client_capabilities("visual_studio_code")
    server.start_vaults([vault.resolve()])
    service = server.services[0]
    assert service.done.wait(300)
    assert service.phase == Phase.READY, service.status()
    yield server
    server.stop_vaults()


def _open(ls: ZettelLanguageServer, rel: str, text: str | None = None) -> str:
    root = ls.services[0].root
    uri = (root / rel).as_uri()
    ls.workspace.put_text_document(
        types.TextDocumentItem(
            uri=uri,
            language_id="markdown",
            version=1,
            text=(root / rel).read_text(encoding="utf-8") if text is None else text,
        )
    )
    return uri


def _at(ls: ZettelLanguageServer, rel: str, needle: str) -> types.Position:
    lines = (ls.services[0].root / rel).read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        if needle in line:
            return types.Position(line=i, character=line.index(needle) + 2)
    raise AssertionError(needle)


def test_every_module_registers_what_it_answers() -> None:
    server = create_server()
    features = set(server.protocol.fm.features)
    for method in (
        types.WORKSPACE_SYMBOL,
        types.TEXT_DOCUMENT_HOVER,
        types.TEXT_DOCUMENT_DEFINITION,
        types.TEXT_DOCUMENT_REFERENCES,
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CODE_ACTION_RESOLVE,
    ):
        assert method in features, method
    assert set(COMMANDS) <= set(server.protocol.fm.commands)
    assert all(callable(m.register) for m in MODULES)


async def test_off_loop_answers_a_failure_with_the_default_and_passes_a_json_rpc_error() -> None:
    """The request pool's one runner: a bug is logged and answered with the default; an error
    the handler means as its answer (a refused rename) reaches the client."""
    server = ZettelLanguageServer()

    def refuse() -> int:
        raise rename.RenameRefused("no such name")

    try:
        assert await server.off_loop(lambda: 1 // 0, 7) == 7
        with pytest.raises(rename.RenameRefused, match="no such name"):
            await server.off_loop(refuse, 7)
    finally:
        server.requests.shutdown()
        server.vault_tasks.shutdown()


async def test_search_module_answers_workspace_symbol_and_zettel_search(
    ls: ZettelLanguageServer,
) -> None:
    got = await search.on_workspace_symbol(ls, types.WorkspaceSymbolParams(query="autolyse"))
    assert got and got[0].name == "Autolyse"
    out = await search.cmd_search(ls, {"query": "autolyse", "limit": 3, "llm": False})
    assert out["results"][0]["path"] == CARD and len(out["results"]) <= 3


async def test_navigation_module_answers_definition_and_references(
    ls: ZettelLanguageServer,
) -> None:
    uri = _open(ls, CARD)
    doc = types.TextDocumentIdentifier(uri=uri)
    where = await navigation.on_definition(
        ls, types.DefinitionParams(text_document=doc, position=_at(ls, CARD, "[[Gluten]]"))
    )
    assert where is not None and where.uri.endswith("/baking/Gluten.md")
    refs = await navigation.on_references(
        ls,
        types.ReferenceParams(
            text_document=doc,
            position=_at(ls, CARD, "[[Gluten]]"),
            context=types.ReferenceContext(include_declaration=False),
        ),
    )
    assert any(r.uri == uri for r in refs)


async def test_hover_module_answers_hover_and_zettel_related(ls: ZettelLanguageServer) -> None:
    uri = _open(ls, CARD)
    doc = types.TextDocumentIdentifier(uri=uri)
    on_link = await hover.on_hover(
        ls, types.HoverParams(text_document=doc, position=_at(ls, CARD, "[[Gluten]]"))
    )
    assert on_link is not None and "Gluten" in str(on_link.contents)
    on_prose = await hover.on_hover(
        ls, types.HoverParams(text_document=doc, position=_at(ls, CARD, "Raymond Calvel"))
    )
    assert on_prose is not None and "Related notes" in str(on_prose.contents)
    related = await hover.cmd_related(ls, {"uri": uri, "limit": 3})
    assert 0 < len(related) <= 3 and all(r["path"] != CARD for r in related)


async def test_actions_module_answers_code_actions_and_suggestions(
    ls: ZettelLanguageServer,
) -> None:
    text = "# Crumb test\n\nA long autolyse and good gluten make an open crumb.\n"
    uri = _open(ls, "Crumb test.md", text)
    doc = types.TextDocumentIdentifier(uri=uri)
    whole = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=3, character=0)
    )
    got = await actions.on_code_action(
        ls,
        types.CodeActionParams(
            text_document=doc, range=whole, context=types.CodeActionContext(diagnostics=[])
        ),
    )
    titles = [a.title for a in got]
    assert any(t.startswith("Link 'autolyse'") for t in titles), titles
    suggestions = await actions.cmd_suggest_links(ls, {"uri": uri})
    assert suggestions is not None
    assert {m["target"] for m in suggestions["unlinked_mentions"]} >= {CARD, "baking/Gluten.md"}


async def test_commands_module_answers_status_and_reindex(ls: ZettelLanguageServer) -> None:
    st = await commands.cmd_status(ls)
    assert st["vaults"][0]["phase"] == "ready" and st["vaults"][0]["cards"] > 30
    assert commands.cmd_reindex(ls) == {"started": [str(ls.services[0].root)]}
    assert commands.ask_vault(ls, None) is ls.services[0]
