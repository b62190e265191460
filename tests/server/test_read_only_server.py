"""A second server on an index folder another server holds (issue #44, finding 5): it answers
read-only, keeps its answers current from disk, says so in ``zettel.status``, and opens the index
itself once the first server exits. Two real servers on a small vault in ``tmp_path``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import SERVER, options, start_session, status, wait_ready
from zettel_lsp.index.folder_lock import COMPACTING, FolderLock, is_free

KIND = "visual_studio_code"
SEEN_WITHIN = 5.0  # seconds for a disk change to reach the read-only server's answers
TAKEN_WITHIN = 30.0  # seconds for it to become a normal server after the holder exits

NOTES = {
    "Otters.md": "# Otters\n\nOtters hold hands while they sleep. See [[Rivers]].\n",
    "Rivers.md": "# Rivers\n\nRivers carry water to the sea; [[Otters]] live by them.\n",
    "Sea.md": "# Sea\n\nThe sea is salty.\n",
}


def small_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


async def search(client: LanguageClient, query: str) -> list[dict[str, Any]]:
    got = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="zettel.search", arguments=[{"query": query}])
    )
    assert isinstance(got, dict)
    rows: list[dict[str, Any]] = got["results"]
    return rows


async def symbols(client: LanguageClient, query: str) -> list[str]:
    got = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    return [s.location.uri for s in got or [] if isinstance(s, types.SymbolInformation)]


async def within(seconds: float, check: Callable[[], Awaitable[bool]], what: str) -> float:
    """Poll ``check`` until it holds; the seconds it took."""
    t0 = time.monotonic()
    while not await check():
        assert time.monotonic() - t0 < seconds, f"not within {seconds} s: {what}"
        await asyncio.sleep(0.1)
    return time.monotonic() - t0


class TwoServers:
    """Server 1 holds the index of a small vault; server 2 on the same folder is read-only."""

    def __init__(self, tmp_path: Path, cache: Path) -> None:
        self.vault = small_vault(tmp_path)
        self.init = options(cache, tmp_path / "index")
        self.first_running = False

    async def __aenter__(self) -> TwoServers:
        self.first = await SERVER.start()
        self.second = await SERVER.start()
        self.first_running = True
        await start_session(self.first, KIND, self.vault, self.init)
        await wait_ready(self.first)
        await start_session(self.second, KIND, self.vault, self.init)
        await wait_ready(self.second, ("read-only",))
        return self

    async def stop_first(self) -> None:
        await self.first.shutdown_session()  # shutdown and exit; returns once it exited
        self.first_running = False

    async def __aexit__(self, *exc: object) -> None:
        await self.second.shutdown_session()
        if self.first_running:
            await self.first.shutdown_session()
        await self.second.stop()
        await self.first.stop()


async def test_read_only_server_answers_from_the_disk_as_it_changes(
    tmp_path: Path, server_cache: Path
) -> None:
    async with TwoServers(tmp_path, server_cache) as two:
        vault, second = two.vault, two.second
        new = vault / "Quokkas.md"
        new.write_text("# Quokkas\n\nQuokkas smile at quokkaberry bushes.\n", encoding="utf-8")
        with (vault / "Sea.md").open("a", encoding="utf-8") as fh:
            fh.write("\nWhales sing marmalizing songs.\n")

        async def new_card_found() -> bool:
            return new.as_uri() in await symbols(second, "quokkaberry")

        async def appended_word_found() -> bool:
            rows = await search(second, "marmalizing")
            return any(r["path"] == "Sea.md" for r in rows)

        await within(SEEN_WITHIN, new_card_found, "the new card, by workspace/symbol")
        await within(SEEN_WITHIN, appended_word_found, "the appended word, by zettel.search")
        (vault / "Otters.md").unlink()

        async def deleted_card_gone() -> bool:
            return (vault / "Otters.md").as_uri() not in await symbols(second, "otters")

        await within(SEEN_WITHIN, deleted_card_gone, "a deleted card gone")
        (st,) = (await status(second))["vaults"]
        assert st["phase"] == "read-only" and st["read_only"] is True
        assert st["note"].startswith("read-only: ") and "in use by another zettel-lsp" in st["note"]


async def test_read_only_server_takes_the_index_over_when_the_holder_exits(
    tmp_path: Path, server_cache: Path
) -> None:
    async with TwoServers(tmp_path, server_cache) as two:
        vault, second = two.vault, two.second
        (vault / "Quokkas.md").write_text("# Quokkas\n\nThey eat quokkaberry.\n", encoding="utf-8")
        await two.stop_first()

        async def taken_over() -> bool:
            (v,) = (await status(second))["vaults"]
            return bool(v["phase"] == "ready")

        await within(TAKEN_WITHIN, taken_over, "server 2 ready after server 1 exited")
        (st,) = (await status(second))["vaults"]
        assert st["read_only"] is False and st["note"] == ""
        rows = await search(second, "quokkaberry")
        assert rows and rows[0]["path"] == "Quokkas.md"
        assert "bm25" in rows[0]["legs"]  # the index answers, not the text scan
        assert not [m for m in second.messages if m.type == types.MessageType.Error]


def test_the_lock_probe_takes_nothing_and_counts_a_compactor_as_free(tmp_path: Path) -> None:
    assert is_free(tmp_path)
    held = FolderLock(tmp_path)
    assert not is_free(tmp_path)
    held.release()
    assert is_free(tmp_path)
    compactor = FolderLock(tmp_path, purpose=COMPACTING)  # a newcomer stops it: free
    assert is_free(tmp_path)
    compactor.release()
    FolderLock(tmp_path).release()  # the probe left nothing held
