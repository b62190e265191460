"""The real server over stdio: it initializes, logs to window/logMessage, and shuts down cleanly."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.server.conftest import wait_ready
from zettel_lsp import __version__
from zettel_lsp.index.compact import COMPACT_AFTER_ENV, COMPACT_LOG
from zettel_lsp.index.state import read_state
from zettel_lsp.index.sync import Indexer


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "zettel_lsp"]),
    params=["visual_studio_code", "neovim"],
)
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path, server_cache: Path
):
    (tmp_path / "Note.md").write_text("# Note\n")
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="vault")],
            initialization_options={
                "cacheDir": str(server_cache),
                "indexDir": str(tmp_path.parent / f"{tmp_path.name}-index"),
            },
        )
    )
    lsp_client.initialize_result = result  # type: ignore[attr-defined]
    yield
    if getattr(lsp_client, "shut_down", False):
        lsp_client.exit(None)  # a test already sent shutdown; a second one gets no answer
    else:
        await lsp_client.shutdown_session()


async def test_initialize_reports_name_and_version(client: LanguageClient) -> None:
    info = client.initialize_result.server_info  # type: ignore[attr-defined]
    assert info is not None and (info.name, info.version) == ("zettel-lsp", __version__)


async def test_logs_go_to_window_log_message_not_stdout(
    client: LanguageClient, tmp_path: Path
) -> None:
    # Anything printed to stdout would corrupt the protocol stream and fail the session.
    await client.wait_for_notification(types.WINDOW_LOG_MESSAGE)
    ready = [m.message for m in client.log_messages if "ready" in m.message]
    assert len(ready) == 1
    assert ready[0].endswith(f"workspace folders: {tmp_path}")


async def test_the_stored_vectors_are_read_ahead_before_ready(client: LanguageClient) -> None:
    # a first session embeds the one card; the read-ahead of a later session is tested in
    # tests/index/test_warm.py, here: the server runs it, before "ready", and says so
    await wait_ready(client)
    read = [m.message for m in client.log_messages if "stored vectors read ahead" in m.message]
    assert len(read) == 1, [m.message for m in client.log_messages]


async def test_shutdown_closes_the_index(
    client: LanguageClient, tmp_path: Path, server_cache: Path
) -> None:
    await wait_ready(client)
    await client.shutdown_async(None)
    client.shut_down = True  # type: ignore[attr-defined]
    # the shard is flushed and its lock released before the answer: another process can open it
    with Indexer(
        tmp_path, tmp_path.parent / f"{tmp_path.name}-index", cache_dir=server_cache
    ) as ix:
        assert set(ix.state.files) == {"Note.md"}
        assert ix.state.dense_done == 1


def init_params(vault: Path, index: Path, cache: Path) -> types.InitializeParams:
    """A VS Code session on ``vault`` with its index and cache folders."""
    return types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        root_uri=vault.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=vault.as_uri(), name="vault")],
        initialization_options={"cacheDir": str(cache), "indexDir": str(index)},
    )


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "zettel_lsp"],
        server_env={**os.environ, COMPACT_AFTER_ENV: "1"},  # compact after any write
    ),
)
async def compacting(lsp_client: LanguageClient, tmp_path: Path, server_cache: Path):
    (tmp_path / "Note.md").write_text("# Note\n\nA thought worth keeping.\n")
    index = tmp_path.parent / f"{tmp_path.name}-index"
    await lsp_client.initialize_session(init_params(tmp_path, index, server_cache))
    yield
    lsp_client.exit(None)


async def test_shutdown_leaves_the_index_compacting_in_the_background(
    compacting: LanguageClient, tmp_path: Path
) -> None:
    """Issue #18: the server closes its index, then a detached process compacts it (where no
    editor waits); the shutdown answer does not wait for it."""
    index_dir = tmp_path.parent / f"{tmp_path.name}-index"
    await wait_ready(compacting)
    state = read_state(index_dir)
    assert state is not None and state.uncompacted > 0
    await compacting.shutdown_async(None)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        state = read_state(index_dir)
        log = index_dir / COMPACT_LOG
        if state is not None and state.uncompacted == 0 and "compacted" in _text(log):
            break
        await asyncio.sleep(0.1)
    assert state is not None and state.uncompacted == 0
    assert "compacted" in (index_dir / COMPACT_LOG).read_text()


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "zettel_lsp"],
        server_env={**os.environ, COMPACT_AFTER_ENV: "10"},
    ),
)
async def first_index(lsp_client: LanguageClient, tmp_path: Path, server_cache: Path):
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(30):
        (vault / f"Card {i}.md").write_text(f"# Card {i}\n\nQuokka island number {i}.\n")
    await lsp_client.initialize_session(init_params(vault, tmp_path / "ix", server_cache))
    yield
    await lsp_client.shutdown_session()


async def test_a_first_index_is_compacted_before_embedding(
    first_index: LanguageClient, tmp_path: Path
) -> None:
    """Issue #18: a vault's first index past the threshold (here 10 points and 10 chunks to
    embed) is compacted between its lexical and dense phases, in a child process, as
    `zettel-lsp index` does: a server stopped while embedding reopens from indexed segments.
    After "ready" only the vectors written since are uncompacted, and every leg answers."""
    st = await wait_ready(first_index)
    (v,) = st["vaults"]
    assert "compact" in v["startup_seconds"]
    logs = [m.message for m in first_index.log_messages]
    assert any("compacted the new index (30 points)" in m for m in logs), logs
    state = read_state(tmp_path / "ix")
    assert state is not None and state.dense_done == 30
    assert state.uncompacted == 30  # the vectors alone: the 30 lexical points were compacted
    found = await first_index.workspace_symbol_async(types.WorkspaceSymbolParams(query="quokka 17"))
    assert found and found[0].name.startswith("Card 17")
