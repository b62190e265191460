"""One folder for a card in every view (issue #45, item 8): search rows, related rows, the
completion item's detail and ``workspace/symbol``'s container all name the card's folder inside
the vault, and for a card at the top of the vault the vault's own folder name (before: ``/`` in
completion, the vault's name in symbols, nothing in related rows).

The real server over stdio on a small generated vault: a card at the root, one two folders
down, and a third that mentions both.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.server.conftest import open_doc, options, start_session, wait_ready

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "zettel_lsp"])
VAULT_NAME = "my notes"
ROOT_CARD = "Sourdough starter.md"
DEEP_CARD = "baking/bread/Rye bread.md"
HUB_CARD = "baking/Fermentation.md"
CARDS = {
    ROOT_CARD: "# Sourdough starter\n\nFlour and water left to ferment with wild yeast.\n",
    DEEP_CARD: "# Rye bread\n\nA dense bread of rye flour raised with a sourdough starter.\n",
    HUB_CARD: "# Fermentation\n\nWild yeast ferments flour and water for rye bread.\n",
}
EXPECTED = {ROOT_CARD: VAULT_NAME, DEEP_CARD: "baking/bread"}


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path, server_cache: Path):
    vault = tmp_path / VAULT_NAME
    (vault / ".obsidian").mkdir(parents=True)
    for rel, text in CARDS.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    await start_session(
        lsp_client, "visual_studio_code", vault, options(server_cache, tmp_path / "index")
    )
    await wait_ready(lsp_client)
    lsp_client.vault = vault  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def command(client: LanguageClient, name: str, args: dict[str, Any]) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=[args])
    )


def by_path(rows: list[dict[str, Any]]) -> dict[str, str]:
    return {row["path"]: row.get("folder", "") for row in rows if row["path"] in EXPECTED}


async def completion_folders(client: LanguageClient, vault: Path) -> dict[str, str]:
    """The folder part of each item's detail ("folder · relation") after ``[[``."""
    text = CARDS[HUB_CARD] + "\nSee [["
    uri = await open_doc(client, vault / HUB_CARD, text)
    lines = text.split("\n")
    got = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=len(lines) - 1, character=len(lines[-1])),
        )
    )
    assert isinstance(got, types.CompletionList)
    titles = {Path(rel).stem: rel for rel in EXPECTED}
    return {
        titles[item.label]: (item.detail or "").rsplit(" · ", 1)[0]
        for item in got.items
        if item.label in titles
    }


async def symbol_folders(client: LanguageClient) -> dict[str, str]:
    out = {}
    for rel in EXPECTED:
        got = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=Path(rel).stem))
        for sym in got or []:
            assert isinstance(sym, types.SymbolInformation)
            if sym.location.uri.endswith(Path(rel).name.replace(" ", "%20")):
                out[rel] = sym.container_name or ""
    return out


async def test_every_view_names_the_same_folder(client: LanguageClient) -> None:
    vault: Path = client.vault  # type: ignore[attr-defined]
    search = await command(client, "zettel.search", {"query": "sourdough rye flour"})
    uri = (vault / HUB_CARD).as_uri()
    related = await command(client, "zettel.related", {"uri": uri})
    views = {
        "zettel.search": by_path(search["results"]),
        "zettel.related": by_path(related),
        "completion detail": await completion_folders(client, vault),
        "workspace/symbol": await symbol_folders(client),
    }
    for view, folders in views.items():
        assert folders == EXPECTED, (view, views)
