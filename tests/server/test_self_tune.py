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
from zettel_lsp.index.db import IndexDB
from zettel_lsp.search.calibrate import load_calibration

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
    db = IndexDB(vault.parent / "index", readonly=True)
    try:
        assert load_calibration(db) is not None
    finally:
        db.close()
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


async def test_edits_that_change_a_tenth_of_the_vault_choose_them_again(
    client: LanguageClient, vault: Path
) -> None:
    """Made again once a tenth of the cards are new, without a restart (after the edits were
    embedded), and not before: 4 new cards of 48 are under the tenth, the 5th reaches it."""
    first = (await wait_for(client, CHOSEN))["self_tuned"]
    assert first["cards"] == 48

    def add(i: int) -> None:
        see = " ".join(f"[[chess {j}]]" for j in (i % 6, (i + 1) % 6, (i + 2) % 6))
        (vault / f"chess extra {i}.md").write_text(
            f"# chess extra {i}\n\nNotes on chess: rook gambit endgame pawn king. See {see}.\n",
            encoding="utf-8",
        )

    async def embedded(cards: int) -> None:
        deadline = time.monotonic() + 60
        while True:
            st = await vault_status(client)
            if st["cards"] == cards and st["cards_embedded"] == cards:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{cards} cards not embedded in 60 s: {st}")
            await asyncio.sleep(0.5)

    for i in range(4):
        add(i)
    await embedded(52)
    await asyncio.sleep(3.0)  # what a re-choice would have started by now
    assert (await vault_status(client))["self_tuned"]["cards"] == 48
    add(4)
    await embedded(53)
    deadline = time.monotonic() + 120
    while (made := (await vault_status(client))["self_tuned"])["cards"] != 53:
        assert time.monotonic() < deadline, f"not chosen again in 120 s: {made}"
        await asyncio.sleep(1.0)
    assert made["pairs"] >= first["pairs"]
