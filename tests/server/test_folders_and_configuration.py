"""Several workspace folders are several vaults; settings change while the server runs."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import EXAMPLE_VAULT, copy_indexed
from tests.server.conftest import CLIENTS, SERVER, find, open_doc, start_session, status, wait_ready
from zettel_lsp.index.sync import index_folder
from zettel_lsp.vault import Vault

FOLDERS = ("baking", "retrieval")


@pytest.fixture(scope="session")
def indexed_folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/vault's baking and retrieval folders, each indexed once as a vault of its own
    (``<root>/<folder>/vault`` and ``<root>/<folder>/index``); tests copy them."""
    root = tmp_path_factory.mktemp("indexed-folders")
    cache = tmp_path_factory.mktemp("folders-cache")
    for name in FOLDERS:
        shutil.copytree(EXAMPLE_VAULT / name, root / name / "vault")
        v = Vault(root / name / "vault", root / name / "index", cache_dir=cache)
        try:
            v.open()
        finally:
            v.close()
    return root


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(
    request: pytest.FixtureRequest,
    lsp_client: LanguageClient,
    tmp_path: Path,
    server_cache: Path,
    indexed_folders: Path,
):
    # two folders, each with a copy of its complete index where the server looks for it (no
    # indexDir: one index per vault in the cache folder), so the start is warm
    baking, retrieval = tmp_path / "baking", tmp_path / "retrieval"
    for name, folder in zip(FOLDERS, (baking, retrieval), strict=True):
        copy_indexed(indexed_folders / name, folder, index_folder(folder, None, server_cache))
    await start_session(
        lsp_client,
        request.param,
        baking,
        {"cacheDir": str(server_cache), "hoverLimit": 5},
        folders=[baking, retrieval],
    )
    yield
    await lsp_client.shutdown_session()


async def symbols(client: LanguageClient, query: str) -> list[types.SymbolInformation]:
    got = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    return list(got or [])


async def test_two_folders_are_two_vaults(client: LanguageClient, tmp_path: Path) -> None:
    st = await wait_ready(client)
    roots = sorted(v["root"] for v in st["vaults"])
    assert roots == sorted(str((tmp_path / f).resolve()) for f in ("baking", "retrieval"))
    assert sorted(v["cards"] for v in st["vaults"]) == [14, 14]
    assert len({v["index_dir"] for v in st["vaults"]}) == 2
    # one search over both vaults
    bread = await symbols(client, "levain and sourdough starter")
    assert bread[0].location.uri.startswith((tmp_path / "baking").as_uri())
    rank = await symbols(client, "fusing ranked lists from BM25 and embeddings")
    assert rank[0].name == "Reciprocal rank fusion"
    assert rank[0].location.uri.startswith((tmp_path / "retrieval").as_uri())
    # a link in one vault resolves in that vault only: TF-IDF's [[BM25]] goes to retrieval/
    tfidf = tmp_path / "retrieval" / "TF-IDF.md"
    uri = await open_doc(client, tfidf)
    loc = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=find(tfidf, "[[BM25#Saturation", "utf-16"),
        )
    )
    loc = loc[0] if isinstance(loc, list) else loc
    assert loc is not None and loc.uri == (tmp_path / "retrieval" / "BM25.md").as_uri()


async def test_settings_change_while_running(client: LanguageClient, tmp_path: Path) -> None:
    await wait_ready(client)
    path = tmp_path / "retrieval" / "BM25.md"
    pos = find(path, "BM25 sums one contribution", "utf-16")

    async def related_count() -> int:
        uri = await open_doc(client, path)
        h = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos)
        )
        assert h is not None and isinstance(h.contents, types.MarkupContent)
        return sum(1 for line in h.contents.value.split("\n") if line.startswith("- ["))

    assert await related_count() == 5
    # an answer setting applies to the next request
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"zettel": {"hoverLimit": 2}})
    )
    await asyncio.sleep(0.2)
    assert await related_count() == 2
    # a bad value is reported and leaves the rest alone
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"zettel": {"hoverLimit": -1}})
    )
    deadline = time.monotonic() + 10
    while not any("hoverLimit" in m.message for m in client.messages):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    # an index setting re-opens the vaults: ignoring a folder's cards takes them out
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"zettel": {"ignore": ["*.md"]}})
    )
    deadline = time.monotonic() + 60
    while True:
        st = await status(client)
        vaults = st["vaults"]
        if len(vaults) == 2 and all(v["phase"] == "ready" and v["cards"] == 0 for v in vaults):
            break
        assert time.monotonic() < deadline, st
        await asyncio.sleep(0.1)
    assert await symbols(client, "levain") == []
