"""Diagnostics over stdio: pushed to a client that cannot pull (the VS Code profile here), pulled
by one that can (the Neovim profile), never both; kinds, ranges, severities and settings."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import (
    client_column,
    open_doc,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

WAIT = 60.0

SCRATCH = """---
aliases: [Levain]
---
# Scratch

See [[Zettelkasten methd]] and 🍞 [[Brand new idea]].
Ties: [[Overview]].
Anchors: [[Zettelkasten method#No such part]], [[BM25#^nope]],
[[BM25#Saturation and the k1 parameter]].
Fine: [[Atomic notes]], ![[diagram.png]], [[#Scratch]].
"""


async def pull(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    return list(report.items)


async def diagnostics(
    client: LanguageClient,
    uri: str,
    want: Callable[[Sequence[types.Diagnostic]], bool] = lambda ds: True,
) -> list[types.Diagnostic]:
    """The document's diagnostics once ``want`` holds: pulled, or as last published."""
    deadline = time.monotonic() + WAIT
    while True:
        if client.pulls:  # type: ignore[attr-defined]
            got: Sequence[types.Diagnostic] | None = await pull(client, uri)
        else:
            got = client.diagnostics.get(uri)
        if got is not None and want(got):
            return list(got)
        if time.monotonic() > deadline:
            raise AssertionError(f"no diagnostics as wanted for {uri}: {got}")
        await asyncio.sleep(0.1)


def covered(text: str, rng: types.Range, encoding: str) -> str:
    line = text.split("\n")[rng.start.line]
    cols = [client_column(line, i, encoding) for i in range(len(line) + 1)]
    return line[cols.index(rng.start.character) : cols.index(rng.end.character)]


async def test_every_kind_on_an_unsaved_card(client: LanguageClient, shared_vault: Path) -> None:
    uri = await open_doc(client, shared_vault / "Scratch.md", SCRATCH)
    got = await diagnostics(client, uri, lambda ds: len(ds) >= 6)
    enc = client.encoding  # type: ignore[attr-defined]
    seen = {(d.code, covered(SCRATCH, d.range, enc)): d for d in got}
    assert set(seen) == {
        ("duplicate-title", "Levain"),
        ("unresolved-link", "[[Zettelkasten methd]]"),
        ("unresolved-link", "[[Brand new idea]]"),  # after an emoji: UTF-16 columns
        ("ambiguous-link", "[[Overview]]"),
        ("missing-heading", "[[Zettelkasten method#No such part]]"),
        ("missing-block", "[[BM25#^nope]]"),
    }
    typo = seen[("unresolved-link", "[[Zettelkasten methd]]")]
    assert typo.message == (
        "No card named «Zettelkasten methd»; did you mean «Zettelkasten method»?"
    )
    assert typo.severity == types.DiagnosticSeverity.Warning and typo.source == "zettel-lsp"
    tie = seen[("ambiguous-link", "[[Overview]]")]
    assert tie.severity == types.DiagnosticSeverity.Information
    assert tie.related_information is not None
    assert [r.location.uri for r in tie.related_information] == [
        (shared_vault / "baking" / "Overview.md").as_uri(),
        (shared_vault / "retrieval" / "Overview.md").as_uri(),
    ]
    missing = seen[("missing-heading", "[[Zettelkasten method#No such part]]")]
    assert missing.message == "«Zettelkasten method» has no heading «No such part»"
    assert seen[("duplicate-title", "Levain")].severity == types.DiagnosticSeverity.Information


async def test_a_card_without_problems_has_none(client: LanguageClient, shared_vault: Path) -> None:
    uri = await open_doc(client, shared_vault / "retrieval" / "TF-IDF.md")
    assert await diagnostics(client, uri) == []


async def test_push_or_pull_never_both(client: LanguageClient, shared_vault: Path) -> None:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert isinstance(caps.diagnostic_provider, types.DiagnosticOptions)
    assert caps.diagnostic_provider.inter_file_dependencies
    uri = await open_doc(client, shared_vault / "Scratch2.md", "[[Missing card]]\n")
    got = await diagnostics(client, uri, lambda ds: len(ds) == 1)
    assert got[0].code == "unresolved-link"
    if client.pulls:  # type: ignore[attr-defined]
        await asyncio.sleep(0.5)
        assert client.diagnostics == {}  # nothing pushed to a client that pulls
    # a document's edits count, unsaved
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="[[BM25]]\n")],
        )
    )
    assert await diagnostics(client, uri, lambda ds: len(ds) == 0) == []


async def test_severity_and_off_switch_settings(client: LanguageClient, shared_vault: Path) -> None:
    uri = await open_doc(client, shared_vault / "Scratch3.md", SCRATCH)
    await diagnostics(client, uri, lambda ds: len(ds) >= 6)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={
                "zettel": {
                    "diagnosticsUnresolved": "error",
                    "diagnosticsAmbiguous": "off",
                    "diagnosticsMissingAnchor": "off",
                    "diagnosticsDuplicateTitle": "off",
                }
            }
        )
    )
    await asyncio.sleep(0.3)
    client.text_document_did_change(  # a push client hears again on the next edit
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=SCRATCH + "\n")],
        )
    )
    got = await diagnostics(client, uri, lambda ds: len(ds) == 2)
    assert {d.code for d in got} == {"unresolved-link"}
    assert {d.severity for d in got} == {types.DiagnosticSeverity.Error}
    client.workspace_did_change_configuration(  # back to the defaults for later modules
        types.DidChangeConfigurationParams(
            settings={
                "zettel": {
                    "diagnosticsUnresolved": "warning",
                    "diagnosticsAmbiguous": "information",
                    "diagnosticsMissingAnchor": "warning",
                    "diagnosticsDuplicateTitle": "information",
                }
            }
        )
    )


async def test_workspace_pull_reports_the_vaults_unresolved_links(
    client: LanguageClient, shared_vault: Path
) -> None:
    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    found = {
        (item.uri, d.code)
        for item in report.items
        if isinstance(item, types.WorkspaceFullDocumentDiagnosticReport)
        for d in item.items
    }
    assert found == {
        ((shared_vault / "baking" / "Sourdough starter.md").as_uri(), "unresolved-link"),
        ((shared_vault / "retrieval" / "Inverted index.md").as_uri(), "unresolved-link"),
    }


async def test_a_card_whose_uri_is_percent_encoded(
    client: LanguageClient, shared_vault: Path
) -> None:
    """A file name with spaces and accents (most Obsidian cards): diagnostics reach the client
    under the URI it opened, on open and again when another file changes the graph."""
    path = shared_vault / "Notes on crème brûlée.md"
    uri = await open_doc(client, path, "See [[Caramel sauce]].\n")
    assert "%20" in uri
    got = await diagnostics(client, uri, lambda ds: len(ds) == 1)
    assert got[0].code == "unresolved-link"
    (shared_vault / "Caramel sauce.md").write_text("# Caramel sauce\n", encoding="utf-8")
    try:
        assert await diagnostics(client, uri, lambda ds: len(ds) == 0) == []
        # every push names a document as the client sent it (never pygls' unquoted key)
        assert not [u for u in client.diagnostics if " " in u or "è" in u]
    finally:
        (shared_vault / "Caramel sauce.md").unlink()
