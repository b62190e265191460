"""The vault commands: ``zettel.reindex``, ``zettel.status`` and ``zettel.ask`` (an answer from
the notes with Ollama, streamed as ``zettel/askDelta`` notifications)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pygls.uris import to_fs_path

from zettel_lsp import __version__
from zettel_lsp.search.results import folder_of
from zettel_lsp.server.arguments import arg
from zettel_lsp.server.documents import card_uri
from zettel_lsp.server.server import ZettelLanguageServer
from zettel_lsp.server.service import VaultService


def cmd_reindex(ls: ZettelLanguageServer, *args: Any) -> dict[str, Any]:
    """``zettel.reindex``: a full reconcile of every vault, in the background."""
    for s in list(ls.services):
        s.reindex()
    return {"started": [str(s.root) for s in ls.services]}


async def cmd_status(ls: ZettelLanguageServer, *args: Any) -> dict[str, Any]:
    """``zettel.status`` {ollama?}: every vault's phase and index figures (and Ollama's state
    when asked, or when a feature uses it)."""
    with_llm = arg(args, "ollama", 0, False) is True

    def run() -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": __version__,
            "vaults": [s.status() for s in list(ls.services)],
        }
        s = ls.settings
        if with_llm or s.llm.expand_query or s.llm.llm_rerank or s.model.startswith("ollama:"):
            out["ollama"] = ls.llm.status()  # a quick, cached request
        return out

    return await ls.off_loop(run, {"version": __version__, "vaults": []})


def ask_vault(ls: ZettelLanguageServer, uri: Any) -> VaultService | None:
    """The vault a question is about: the one holding ``uri`` when several are open, else the
    first."""
    services = list(ls.services)
    if not services:
        return None
    if len(services) > 1 and uri:
        fs = to_fs_path(str(uri))
        found = ls.service_for(Path(fs).resolve()) if fs else None
        if found is not None:
            return found
    return services[0]


async def cmd_ask(ls: ZettelLanguageServer, *args: Any) -> dict[str, Any]:
    """Answer a question from the notes with Ollama: {question, token?, uri?} (``uri`` picks
    the vault when several are open). With a ``token``, the answer streams as
    ``zettel/askDelta`` {token, delta} notifications. A cancel stops the stream; the reply
    is then pygls' RequestCancelled error."""
    question = str(arg(args, "question", 0, "") or "")
    token = arg(args, "token", 1)
    cancelled = ls.cancel_event()
    empty: dict[str, Any] = {"question": question, "answer": "", "sources": []}

    def run() -> dict[str, Any]:
        from zettel_lsp.llm import ask

        service = ask_vault(ls, arg(args, "uri", 2))
        if not question.strip() or service is None:
            return empty | {"fallback": None}
        engine = service.engine
        if engine is None:
            return empty | {"fallback": service.status_note() or "the index is not open"}

        def delta(text: str) -> None:
            if token is not None:
                ls.protocol.notify("zettel/askDelta", {"token": token, "delta": text})

        result = ask(
            engine,
            ls.llm,
            question,
            on_delta=delta,
            cancel=cancelled.is_set,
            options=ls.search_options(ls.settings.llm.max_context_chunks),
            read=service.read,
        )
        if result.fallback:
            ls.llm_messages([result.fallback])
        out = result.as_dict()
        for src in out.get("sources", []):
            src["uri"] = card_uri(service.root, str(src["path"]))
            src["folder"] = folder_of(str(src["path"]), service.root.name)
        out["vault"] = str(service.root)
        return out

    try:
        return await ls.off_loop(run, empty)
    finally:
        cancelled.set()
        ls.forget_cancel(cancelled)


def register(server: ZettelLanguageServer) -> None:
    server.command("zettel.reindex")(cmd_reindex)
    server.command("zettel.status")(cmd_status)
    server.command("zettel.ask")(cmd_ask)
