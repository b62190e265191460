"""Multilingual search through the server (issue #17): ``zettel.status`` says which legs are
ready and what the multilingual phase covers; on an English vault the first query in another
language starts that phase in the background, and searches answer meanwhile."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import EXAMPLE_VAULT, ROOT
from tests.server.conftest import SERVER, options, start_session, status, wait_ready

pytestmark = pytest.mark.asyncio(loop_scope="module")

KIND = "visual_studio_code"  # the routing is the server's: one editor is enough here


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The English example vault with the German, Russian and Chinese cards of
    examples/multilingual in a folder: 24 of 56 cards not English, so ``auto`` embeds them."""
    dst = tmp_path_factory.mktemp("multilingual-server") / "vault"
    shutil.copytree(EXAMPLE_VAULT, dst)
    shutil.copytree(ROOT / "examples" / "multilingual", dst / "multilingual")
    return dst


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient, vault: Path, server_cache: Path):
    await start_session(lsp_client, KIND, vault, options(server_cache, vault.parent / "index"))
    await wait_ready(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def vault_status(client: LanguageClient) -> dict[str, Any]:
    st = await status(client)
    assert len(st["vaults"]) == 1
    return st["vaults"][0]  # type: ignore[no-any-return]


async def wait_for(client: LanguageClient, ok: Any, what: str) -> dict[str, Any]:
    deadline = time.monotonic() + 180
    while True:
        st = await vault_status(client)
        if ok(st):
            return st
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached in 180 s: {st}")
        await asyncio.sleep(0.2)


async def symbols(client: LanguageClient, query: str) -> list[str]:
    got = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    assert isinstance(got, list)
    return [s.name for s in got]


async def test_the_status_names_the_legs_and_the_languages(client: LanguageClient) -> None:
    st = await wait_for(
        client, lambda s: "dense_ml" in s["legs_ready"], "the multilingual leg ready"
    )
    assert st["multilingual"] == "auto"
    assert st["languages"]["de"] == 8 and st["languages"]["ru"] == 8
    assert st["languages"]["zh"] == 8 and st["languages"]["en"] >= 20
    assert st["multilingual_scope"] == "non-English cards"
    assert st["multilingual_model"].startswith("use-multilingual")
    assert set(st["legs_ready"]) >= {"bm25", "keyword", "title", "dense", "dense_ml"}
    st = await wait_for(
        client, lambda s: s["cards_waiting_for_multilingual"] == 0, "the non-English cards"
    )
    assert st["non_english_cards_embedded_multilingual"] == 24


async def test_queries_in_each_language(client: LanguageClient) -> None:
    await wait_for(client, lambda s: s["cards_waiting_for_multilingual"] == 0, "embedded")
    assert (await symbols(client, "как кормить закваску мукой и водой"))[0] == "Закваска"
    assert (await symbols(client, "齐民要术"))[0] == "轮作"  # a Chinese keyword
    assert "Sauerteig" in (await symbols(client, "Wie füttert man den Sauerteig?"))[:3]
    # English: the English cards as before, and the multilingual leg reads the others (the
    # English cards also get the lexical legs' votes, so a foreign card must be clearly better)
    got = await symbols(client, "how telescope aperture affects what you see")
    assert "天文望远镜" in got[:10]


async def test_a_query_not_in_english_brings_every_card_in(client: LanguageClient) -> None:
    # the English cards have no multilingual vectors until a query in another language
    st = await vault_status(client)
    assert st["cards_embedded_multilingual"] == 24
    await symbols(client, "как печь хлеб")
    st = await wait_for(
        client,
        lambda s: (
            s["multilingual_scope"] == "all cards" and s["cards_waiting_for_multilingual"] == 0
        ),
        "every card embedded by the multilingual model",
    )
    assert st["cards_embedded_multilingual"] == st["cards"]
    # an English card found from Russian ("the crumb of bread": Crumb)
    assert "Crumb" in (await symbols(client, "мякиш хлеба и его пористость"))[:5]
