"""Start-up on a fresh vault: $/progress pairs, reindex, live updates, settings, a locked index.

Each test has its own copy of examples/vault. The cold start starts without an index; the
others start from a copy of a complete index of it (``indexed_example``), as a server restarted
on a vault it indexed before does, since what they check does not depend on a cold start."""

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

from tests.conftest import EXAMPLE_VAULT, copy_indexed
from tests.server.conftest import (
    CLIENTS,
    SERVER,
    options,
    start_session,
    status,
    wait_ready,
)


@pytest.fixture
def cold() -> None:
    """Taken by a test that needs the server to start on a vault never indexed."""


@pytest.fixture
def vault(request: pytest.FixtureRequest, tmp_path: Path, indexed_example: Path) -> Path:
    """A private copy of examples/vault with its index folder beside it (``index``): none for a
    test taking ``cold``, else a copy of a complete index of the vault."""
    dst = tmp_path / "vault"
    if "cold" in request.fixturenames:
        shutil.copytree(EXAMPLE_VAULT, dst)
    else:
        copy_indexed(indexed_example, dst, tmp_path / "index")
    return dst


@pytest_lsp.fixture(config=SERVER, params=CLIENTS)
async def client(
    request: pytest.FixtureRequest,
    lsp_client: LanguageClient,
    vault: Path,
    server_cache: Path,
):
    await start_session(
        lsp_client,
        request.param,
        vault,
        options(server_cache, vault.parent / "index", symbolLimit="ten", bogus=1),
    )
    yield
    await lsp_client.shutdown_session()


async def search(client: LanguageClient, query: str) -> dict[str, Any]:
    got = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="zettel.search", arguments=[{"query": query}])
    )
    assert isinstance(got, dict)
    return got


def progress_pairs(client: LanguageClient) -> list[list[Any]]:
    return [list(v) for v in client.progress_reports.values()]


async def test_cold_start_reports_progress_and_answers_early(
    cold: None, client: LanguageClient
) -> None:
    # answered at once, whatever is ready, and it says whether the answer is final
    early = await search(client, "sourdough starter")
    assert early["complete"] is False or early["note"] == ""
    await wait_ready(client)
    ops = progress_pairs(client)
    assert ops, "no $/progress"
    for values in ops:
        assert isinstance(values[0], types.WorkDoneProgressBegin)
        assert isinstance(values[-1], types.WorkDoneProgressEnd)
        assert sum(isinstance(v, types.WorkDoneProgressBegin) for v in values) == 1
        assert sum(isinstance(v, types.WorkDoneProgressEnd) for v in values) == 1
    begin = ops[0][0]
    assert begin.title.startswith("Indexing vault")
    reports = [v for v in ops[0] if isinstance(v, types.WorkDoneProgressReport)]
    assert any("embedded" in (r.message or "") for r in reports)
    assert "ready" in (ops[0][-1].message or "")
    done = await search(client, "sourdough starter")
    assert done["complete"] is True
    assert done["results"][0]["path"] == "baking/Sourdough starter.md"


async def test_invalid_settings_are_shown_and_defaults_used(client: LanguageClient) -> None:
    await wait_ready(client)
    shown = " ".join(m.message for m in client.messages)
    assert "symbolLimit" in shown and "bogus" in shown
    got = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="bread"))
    assert got is not None and 0 < len(got) <= 20  # the default limit


async def test_edits_on_disk_reach_search_and_links(client: LanguageClient, vault: Path) -> None:
    await wait_ready(client)
    card = vault / "baking" / "Banneton.md"
    card.write_text(
        "# Banneton\n\nA banneton is a cane basket that holds shaped dough during the final "
        "[[Proofing]] and leaves spiral flour rings on the crust.\n",
        encoding="utf-8",
    )
    deadline = time.monotonic() + 30
    while True:
        got = await search(client, "cane basket spiral flour rings")
        if got["results"] and got["results"][0]["path"] == "baking/Banneton.md":
            break
        assert time.monotonic() < deadline, got
        await asyncio.sleep(0.2)
    proofing = vault / "baking" / "Proofing.md"
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=proofing.as_uri()),
            position=types.Position(line=0, character=0),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert card.as_uri() in {loc.uri for loc in refs or []}


async def test_reindex_uses_a_fresh_progress_token(client: LanguageClient) -> None:
    await wait_ready(client)
    before = set(client.progress_reports)
    got = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="zettel.reindex", arguments=[])
    )
    assert got["started"]
    deadline = time.monotonic() + 30
    while not set(client.progress_reports) - before:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.1)
    (token,) = set(client.progress_reports) - before
    while not (
        client.progress_reports[token]
        and isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd)
    ):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.1)
    assert (await status(client))["vaults"][0]["phase"] == "ready"


@pytest.mark.parametrize("kind", CLIENTS)
async def test_second_server_on_a_locked_index_answers_read_only(
    kind: str, vault: Path, server_cache: Path
) -> None:
    index = vault.parent / "index"
    first = await SERVER.start()
    second = await SERVER.start()
    try:
        await start_session(first, kind, vault, options(server_cache, index))
        await wait_ready(first)
        await start_session(second, kind, vault, options(server_cache, index))
        st = await wait_ready(second, ("read-only",))
        assert "in use by another zettel-lsp" in st["vaults"][0]["note"]
        assert any("read-only" in m.message for m in second.messages)
        got = await second.workspace_symbol_async(
            types.WorkspaceSymbolParams(query="reciprocal rank fusion")
        )
        assert got and got[0].name == "Reciprocal rank fusion"
        tfidf = vault / "retrieval" / "TF-IDF.md"
        hover = await second.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=tfidf.as_uri()),
                position=types.Position(
                    line=16, character=tfidf.read_text().split("\n")[16].index("[[BM25#") + 2
                ),
            )
        )
        assert hover is not None and "### [BM25]" in hover.contents.value  # type: ignore[union-attr]
    finally:
        await second.shutdown_session()
        await first.shutdown_session()
        await second.stop()
        await first.stop()
