"""The server finds the vault root when the client's root lies inside a vault (issue #45: eglot
sends the open card's folder), and serves a vault once when workspace folders nest."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.server.conftest import find, open_doc, status, wait_ready
from zettel_lsp.index.sync import index_folder
from zettel_lsp.server.vault_root import find_vault_root

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "zettel_lsp"])


def small_vault(root: Path) -> Path:
    """A vault of two cards: ``Top.md`` at its root, ``sub/Card.md`` linking it."""
    (root / "sub").mkdir(parents=True)
    (root / "Top.md").write_text("# Top\n\nThe card one folder up.\n", encoding="utf-8")
    (root / "sub" / "Card.md").write_text("# Card\n\nSee [[Top]].\n", encoding="utf-8")
    return root


def folders(*paths: Path) -> list[types.WorkspaceFolder]:
    return [types.WorkspaceFolder(uri=p.as_uri(), name=p.name) for p in paths]


@pytest_lsp.fixture(config=SERVER, params=["root_uri", "workspace_folders"])
async def sub_client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path, server_cache: Path
):
    """eglot on an Obsidian vault that is not a git repository: the client's root is the open
    card's folder (as rootUri alone, as eglot 1.9 sends it, or as a workspace folder too)."""
    vault = small_vault(tmp_path / "vault")
    (vault / ".obsidian").mkdir()
    sub = vault / "sub"
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("emacs"),
            root_uri=sub.as_uri(),
            workspace_folders=folders(sub) if request.param == "workspace_folders" else None,
            initialization_options={"cacheDir": str(server_cache), "suggestSelfTune": False},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_a_root_inside_a_vault_serves_the_vault(
    sub_client: LanguageClient, tmp_path: Path, server_cache: Path
) -> None:
    vault = (tmp_path / "vault").resolve()
    st = await wait_ready(sub_client)
    assert [v["root"] for v in st["vaults"]] == [str(vault)]
    assert st["vaults"][0]["index_dir"] == str(index_folder(vault, None, server_cache))
    assert st["vaults"][0]["cards"] == 2
    # the link one folder up resolves
    card = vault / "sub" / "Card.md"
    uri = await open_doc(sub_client, card)
    got = await sub_client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=find(card, "Top]]", "utf-16"),
        )
    )
    targets = got if isinstance(got, list) else [got] if got else []
    assert [getattr(t, "uri", getattr(t, "target_uri", None)) for t in targets] == [
        (vault / "Top.md").as_uri()
    ]
    # the log says which root and why
    chosen = [m.message for m in sub_client.log_messages if "vault root" in m.message]
    assert any(str(vault) in m and ".obsidian" in m for m in chosen), chosen


@pytest_lsp.fixture(config=SERVER)
async def nested_client(lsp_client: LanguageClient, tmp_path: Path, server_cache: Path):
    """A vault with no marker and a folder inside it, both workspace folders."""
    vault = small_vault(tmp_path / "vault")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"),
            root_uri=vault.as_uri(),
            workspace_folders=folders(vault, vault / "sub"),
            initialization_options={"cacheDir": str(server_cache), "suggestSelfTune": False},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_nested_workspace_folders_are_one_vault(
    nested_client: LanguageClient, tmp_path: Path
) -> None:
    vault = (tmp_path / "vault").resolve()
    st = await wait_ready(nested_client)
    assert [(v["root"], v["cards"]) for v in st["vaults"]] == [(str(vault), 2)]
    # a folder inside it, added later, starts no second index either
    (vault / "other").mkdir()
    nested_client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=folders(vault / "other"), removed=[])
        )
    )
    said = f"{vault / 'other'} is inside the vault {vault}"
    for _ in range(100):
        if any(said in m.message for m in nested_client.log_messages):
            break
        await asyncio.sleep(0.1)
    st = await status(nested_client)
    assert [v["root"] for v in st["vaults"]] == [str(vault)]
    # the vault's folder removed, each folder that was inside it is served on its own
    nested_client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[], removed=folders(vault))
        )
    )
    st = await wait_for_roots(nested_client, [str(vault / "other"), str(vault / "sub")])
    assert sorted((v["root"], v["cards"]) for v in st["vaults"]) == [
        (str(vault / "other"), 0),
        (str(vault / "sub"), 1),
    ]


async def wait_for_roots(client: LanguageClient, roots: list[str]) -> dict[str, Any]:
    for _ in range(300):
        st = await status(client)
        if sorted(v["root"] for v in st["vaults"]) == roots:
            return await wait_ready(client)
        await asyncio.sleep(0.1)
    raise AssertionError(f"vaults never became {roots}: {st}")


def test_the_nearest_marker_wins_and_a_repository_is_no_vault(tmp_path: Path) -> None:
    """A folder inside a git repository stays the client's choice; a vault marker above it
    widens it, and the nearest marker wins."""
    notes = tmp_path / "repo" / "docs" / "notes"
    (notes / "sub").mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    assert find_vault_root(notes / "sub") == (notes / "sub", None)
    (tmp_path / "repo" / ".obsidian").mkdir()
    assert find_vault_root(notes / "sub") == (tmp_path / "repo", ".obsidian")
    (notes / ".zettel-lsp.toml").write_text("", encoding="utf-8")
    assert find_vault_root(notes / "sub") == (notes, ".zettel-lsp.toml")
