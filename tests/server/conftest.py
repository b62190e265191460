"""Server fixtures: the real server over stdio, on a copy of examples/vault, per client kind.

Read-only tests share one vault copy and index folder per session, copied from a complete index
of the vault (``indexed_example``), so every start is warm (each module's server still
reconciles, parses the graph and watches the folder).
Tests that change the vault or the index take their own copy (``fresh_vault``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import copy_indexed

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "zettel_lsp"])
CLIENTS = ["visual_studio_code", "neovim"]
READY_TIMEOUT = 180.0


@pytest.fixture(scope="session")
def server_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One model cache for every server the tests start."""
    return tmp_path_factory.mktemp("server-cache")


@pytest.fixture(scope="session")
def shared_vault(tmp_path_factory: pytest.TempPathFactory, indexed_example: Path) -> Path:
    """A copy of examples/vault that read-only tests share (never modified), with a copy of its
    complete index in the ``index`` folder beside it."""
    root = tmp_path_factory.mktemp("shared")
    copy_indexed(indexed_example, root / "vault", root / "index")
    return root / "vault"


@pytest_lsp.fixture(config=SERVER, params=CLIENTS, scope="module")
async def client(
    request: pytest.FixtureRequest,
    lsp_client: LanguageClient,
    shared_vault: Path,
    server_cache: Path,
):
    """A ready server on the shared vault, per client kind, for a module's read-only tests
    (modules using it run in a module-scoped event loop). The client carries ``encoding`` (the
    negotiated position encoding) and ``init_result``."""
    result = await start_session(
        lsp_client,
        request.param,
        shared_vault,
        options(server_cache, shared_vault.parent / "index"),
    )
    lsp_client.init_result = result  # type: ignore[attr-defined]
    lsp_client.encoding = encoding_of(result)  # type: ignore[attr-defined]
    await wait_ready(lsp_client)
    yield
    await lsp_client.shutdown_session()


def options(cache: Path, index_dir: Path, **extra: Any) -> dict[str, Any]:
    """Initialization options. The suggestions keep their default weights (the tests name the
    cards they expect); choosing them on the vault's links has tests of its own
    (tests/server/test_self_tune.py)."""
    return {"cacheDir": str(cache), "indexDir": str(index_dir), "suggestSelfTune": False, **extra}


async def start_session(
    client: LanguageClient,
    kind: str,
    vault: Path,
    init_options: dict[str, Any],
    *,
    folders: list[Path] | None = None,
) -> types.InitializeResult:
    """Initialize ``client`` as the editor ``kind`` would; it then carries ``pulls``: whether
    that editor pulls diagnostics (else the server pushes them)."""
    folders = folders or [vault]
    capabilities = client_capabilities(kind)
    text = capabilities.text_document
    client.pulls = bool(text and text.diagnostic)  # type: ignore[attr-defined]
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=vault.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
            initialization_options=init_options,
        )
    )


async def status(client: LanguageClient) -> dict[str, Any]:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="zettel.status", arguments=[])
    )
    assert isinstance(result, dict)
    return result


async def wait_ready(
    client: LanguageClient, phases: tuple[str, ...] = ("ready",)
) -> dict[str, Any]:
    """Poll zettel.status until every vault reached one of ``phases``."""
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        st = await status(client)
        if st["vaults"] and all(v["phase"] in phases for v in st["vaults"]):
            return st
        if time.monotonic() > deadline:
            raise AssertionError(f"server not ready in {READY_TIMEOUT} s: {st}")
        await asyncio.sleep(0.1)


async def open_doc(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri,
                language_id="markdown",
                version=1,
                text=path.read_text(encoding="utf-8") if text is None else text,
            )
        )
    )
    return uri


def encoding_of(result: types.InitializeResult) -> str:
    enc = result.capabilities.position_encoding
    return str(enc.value if hasattr(enc, "value") else enc or "utf-16")


def client_column(line: str, codepoints: int, encoding: str) -> int:
    """A code-point column in the negotiated position encoding."""
    prefix = line[:codepoints]
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding == "utf-32":
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


def find(path: Path, needle: str, encoding: str, nth: int = 0) -> types.Position:
    """The position of the ``nth`` occurrence of ``needle`` in a file, in client units."""
    seen = 0
    for i, line in enumerate(path.read_text(encoding="utf-8").split("\n")):
        at = line.find(needle)
        while at >= 0:
            if seen == nth:
                return types.Position(line=i, character=client_column(line, at, encoding))
            seen += 1
            at = line.find(needle, at + 1)
    raise AssertionError(f"{needle!r} not in {path}")


def slice_range(path: Path, rng: types.Range, encoding: str) -> str:
    """The text a one-line range covers, given in client units."""
    assert rng.start.line == rng.end.line
    line = path.read_text(encoding="utf-8").split("\n")[rng.start.line]
    cols = [client_column(line, i, encoding) for i in range(len(line) + 1)]
    return line[cols.index(rng.start.character) : cols.index(rng.end.character)]
