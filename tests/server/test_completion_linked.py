"""``[[`` completion keeps the cards a note already links (issue #45, bug 1), on a real card:
vaultofknowledge's ``Hadrons.md`` links ``[[Baryons]]``, ``[[Mesons]]`` and
``[[Strong Interactions]]``. Typing the start of one of those names lists that card among the
first (before, linked cards came after every other match, loose subsequences included, and the
list was cut before them).

The server is the real one over stdio on the shared vault (read only; its index goes to a
temporary folder). Names come from the link graph, so the answers are asked as soon as the
graph is parsed, while the vectors are still being computed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import shared_vault
from tests.server.conftest import open_doc, options, start_session, wait_ready

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "zettel_lsp"])
HADRONS = (
    "04. Organized Knowledge - Old Format/Science and Engineering/Physics/Particle Physics/"
    "Standard Model/Hadrons.md"
)
NEAR_TOP = 3  # the linked card is among this many first items
# what is typed after "[[", and the linked card it names
TYPED = [("Mes", "Mesons"), ("Bary", "Baryons"), ("Stro", "Strong Interactions")]


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path, server_cache: Path):
    vault = shared_vault("vaultofknowledge")
    if not (vault / HADRONS).is_file():
        pytest.skip(f"{HADRONS} not found in {vault}")
    await start_session(
        lsp_client, "visual_studio_code", vault, options(server_cache, tmp_path / "index")
    )
    await wait_ready(lsp_client, ("embedding", "ready"))
    lsp_client.vault = vault  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_typed_start_of_a_linked_card_lists_it_first(client: LanguageClient) -> None:
    vault: Path = client.vault  # type: ignore[attr-defined]
    text = (vault / HADRONS).read_text(encoding="utf-8")
    for typed, title in TYPED:
        assert f"[[{title}]]" in text  # the card links it
        edited = text + f"\nSee also [[{typed}"
        uri = await open_doc(client, vault / HADRONS, edited)
        lines = edited.split("\n")
        got = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=len(lines) - 1, character=len(lines[-1])),
            )
        )
        assert isinstance(got, types.CompletionList)
        labels = [i.label for i in got.items]
        assert title in labels[:NEAR_TOP], (typed, labels[:10])
        item = got.items[labels.index(title)]
        assert (item.detail or "").endswith("· linked")
        # the client's own filtering keeps it: it is filtered by the name typed
        assert (item.filter_text or "").lower().startswith(typed.lower())
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
