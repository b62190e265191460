"""The real server over stdio: it initializes, logs to window/logMessage, and shuts down cleanly."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.server.conftest import wait_ready
from zettel_lsp import __version__
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
