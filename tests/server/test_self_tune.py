"""Self-tuned link suggestions through the server (issue #15): after "ready" the server chooses
the suggestions' weights on the vault's own links in the background, with its own $/progress,
keeps them in the index folder, says so in ``zettel.status``, and ``suggestSelfTune: false``
turns them off at once. Real server over stdio, real index and model."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.search.test_calibrate import groups_vault
from tests.server.conftest import SERVER, open_doc, options, start_session, status, wait_ready

pytestmark = pytest.mark.asyncio(loop_scope="module")

CHOSEN = "chosen on this vault's links"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("self-tune") / "vault"
    groups_vault(root)
    return root


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient, vault: Path, server_cache: Path):
    init = options(server_cache, vault.parent / "index", suggestSelfTune=True)
    await start_session(lsp_client, "visual_studio_code", vault, init)
    await wait_ready(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def vault_status(client: LanguageClient) -> dict[str, Any]:
    (v,) = (await status(client))["vaults"]
    return v  # type: ignore[no-any-return]


async def wait_for(client: LanguageClient, weights: str) -> dict[str, Any]:
    """Poll zettel.status every second (as editors do, every 2 s: the server works on the
    weights between requests)."""
    deadline = time.monotonic() + 120
    while (st := await vault_status(client))["suggestion_weights"] != weights:
        if time.monotonic() > deadline:
            raise AssertionError(f"suggestion_weights not {weights!r} in 120 s: {st}")
        await asyncio.sleep(1.0)
    return st


async def test_the_weights_are_chosen_after_ready_and_kept(
    client: LanguageClient, vault: Path
) -> None:
    st = await wait_for(client, CHOSEN)
    made = st["self_tuned"]
    assert made["cards"] == 48 and made["pairs"] > 48
    assert made["recall@10"] >= made["default_recall@10"]
    assert (vault.parent / "index" / "suggest-fusion.json").is_file()
    ops = [list(v) for v in client.progress_reports.values()]
    (op,) = [o for o in ops if getattr(o[0], "title", "") == "Link suggestions for vault"]
    assert isinstance(op[-1], types.WorkDoneProgressEnd)
    assert "weights chosen on" in (op[-1].message or "")
    uri = await open_doc(client, vault / "chess 0.md")
    got = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="zettel.suggestLinks", arguments=[{"uri": uri}])
    )
    assert got["related"], "no related cards suggested"


async def test_the_setting_turns_them_off_and_on(client: LanguageClient) -> None:
    await wait_for(client, CHOSEN)
    for on, weights in ((False, "default (self-tuning off)"), (True, CHOSEN)):
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"zettel": {"suggestSelfTune": on}})
        )
        await wait_for(client, weights)
