"""workspace/executeCommand: the zettel.* API the editor plugins use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import (
    open_doc,
    status,
)
from zettel_lsp.server.app import COMMANDS

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def run(client: LanguageClient, command: str, *args: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(args))
    )


async def test_commands_are_advertised(client: LanguageClient) -> None:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert caps.execute_command_provider is not None
    assert set(caps.execute_command_provider.commands) == set(COMMANDS)
    assert "zettel.ask" in COMMANDS and "zettel.search" in COMMANDS


async def test_search_returns_cli_shaped_results(
    client: LanguageClient, shared_vault: Path
) -> None:
    got = await run(
        client, "zettel.search", {"query": "rank fusion of keyword and vector lists", "limit": 3}
    )
    assert got["complete"] is True and got["note"] == ""
    rows = got["results"]
    assert len(rows) == 3
    first = rows[0]
    # both cards that explain merging keyword and vector lists lead (with the convex fusion,
    # "Vector database", which holds every query word, edges out "Reciprocal rank fusion")
    assert {r["path"] for r in rows[:2]} == {
        "retrieval/Reciprocal rank fusion.md",
        "retrieval/Vector database.md",
    }
    assert first["uri"] == (shared_vault / first["path"]).as_uri()
    assert set(first) >= {"path", "title", "score", "line_start", "line_end", "excerpt", "legs"}
    assert first["line_end"] >= first["line_start"] >= 0
    assert set(first["legs"]) <= {"dense", "bm25", "keyword", "title", "anchor"} and first["legs"]
    assert "relation" not in first  # only relative to an open card
    # positional arguments work too
    again = await run(client, "zettel.search", "rank fusion of keyword and vector lists", 3)
    assert [r["path"] for r in again["results"]] == [r["path"] for r in rows]


async def test_related_for_a_position_and_for_a_whole_card(
    client: LanguageClient, shared_vault: Path
) -> None:
    path = shared_vault / "baking" / "Levain.md"
    uri = await open_doc(client, path)
    whole = await run(client, "zettel.related", {"uri": uri})
    assert 1 <= len(whole) <= 5
    assert all(r["path"] != "baking/Levain.md" for r in whole)
    assert all(r["relation"] in {"linked", "backlink", "2 hops", "not linked"} for r in whole)
    assert sum(r["path"].startswith("baking/") for r in whole) >= 3  # it is about baking
    line = next(i for i, t in enumerate(path.read_text().split("\n")) if t.strip() and i > 6)
    at = await run(
        client, "zettel.related", {"uri": uri, "position": {"line": line, "character": 0}}
    )
    assert at and all(r["path"] != "baking/Levain.md" for r in at)


async def test_suggest_links_lists_mentions_and_unlinked_related(
    client: LanguageClient, shared_vault: Path
) -> None:
    path = shared_vault / "baking" / "Gluten.md"
    uri = await open_doc(client, path)
    got = await run(client, "zettel.suggestLinks", {"uri": uri})
    assert got["card"] == "baking/Gluten.md"
    mention = next(m for m in got["unlinked_mentions"] if m["target"] == "baking/Hydration.md")
    line = path.read_text().split("\n")[mention["range"]["start"]["line"]]
    start, end = mention["range"]["start"]["character"], mention["range"]["end"]["character"]
    assert line[start:end].lower() == "hydration"  # ASCII line: units are code points
    linked = {"baking/Stretch and fold.md"}  # Gluten links it ([[Stretch and fold|folding]])
    assert got["related"] and not {r["path"] for r in got["related"]} & (linked | {got["card"]})
    assert all(r["reason"] for r in got["related"])
    assert all(r["link"].startswith("[[") and r["link"].endswith("]]") for r in got["related"])


async def test_status_describes_the_vault(client: LanguageClient, shared_vault: Path) -> None:
    st = await status(client)
    (vault,) = st["vaults"]
    assert vault["root"] == str(shared_vault.resolve())
    assert vault["phase"] == "ready" and vault["complete"] is True
    assert vault["cards"] == 45 and vault["cards_in_graph"] == 45
    assert vault["chunks"] > 45 and vault["cards_embedded"] == 45
    assert vault["chunks_waiting_for_vectors"] == 0
    assert "all-MiniLM-L6-v2" in vault["model"]
    assert vault["index_dir"] == str((shared_vault.parent / "index").resolve())


async def test_unknown_uri_gets_empty_answers(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "nowhere" / "Missing.md").as_uri()
    assert await run(client, "zettel.related", {"uri": uri}) == []
    assert await run(client, "zettel.suggestLinks", {"uri": uri}) is None


async def test_search_results_relate_to_the_open_card(
    client: LanguageClient, shared_vault: Path
) -> None:
    uri = await open_doc(client, shared_vault / "retrieval" / "Cross-encoder reranking.md")
    got = await run(client, "zettel.search", {"query": "rank fusion", "limit": 10, "uri": uri})
    rel = {r["path"]: r["relation"] for r in got["results"]}
    assert rel["retrieval/Reciprocal rank fusion.md"] == "linked"  # it links [[RRF]]
    if "retrieval/Cross-encoder reranking.md" in rel:
        assert rel["retrieval/Cross-encoder reranking.md"] == "this card"
    assert set(rel.values()) <= {"linked", "backlink", "2 hops", "not linked", "this card"}
