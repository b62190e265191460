"""Search: ``workspace/symbol`` (every keystroke of the editor's symbol picker) and the
``zettel.search`` command (the sidebars and pickers, with the optional LLM steps), both over
every open vault, merged by score. A ``workspace/symbol`` query that is one ``#tag`` lists the
cards tagged with it instead (:func:`tag_symbols`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from zettel_lsp.graph.relation import relation
from zettel_lsp.notes.tags import cards_tagged, first_tag_line
from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.search.results import folder_of, result_dict
from zettel_lsp.search.suggest import linked_targets
from zettel_lsp.server.arguments import arg, limit_arg
from zettel_lsp.server.documents import Doc, card_uri, lines_range
from zettel_lsp.server.server import ZettelLanguageServer
from zettel_lsp.server.service import SearchAnswer, VaultService

if TYPE_CHECKING:
    from zettel_lsp.llm import Ollama


def search_rows(
    service: VaultService,
    query: str,
    options: SearchOptions,
    *,
    llm: Ollama | None = None,
    expand: bool = False,
    rerank: bool = False,
    cancel: Callable[[], bool] | None = None,
    here: Doc | None = None,
) -> tuple[list[dict[str, Any]], SearchAnswer]:
    """CLI-shaped result rows (plus ``uri``, ``vault`` and ``folder``) and the answer's status. With
    ``here`` (the card open in the editor, in this vault), each row also says how it relates
    to that card (``relation``: linked, backlink, 2 hops, not linked; ``this card``)."""
    answer = service.search(query, options, llm=llm, expand=expand, rerank=rerank, cancel=cancel)
    words = answer.query.terms  # parsed once, by the search
    rows = []
    for r in answer.results:
        row = result_dict(r, words)
        row["uri"] = card_uri(service.root, r.path)
        row["vault"] = str(service.root)
        row["folder"] = folder_of(r.path, service.root.name)
        rows.append(row)
    if here is not None:
        card = here.card

        def relate() -> None:
            graph = service.graph
            linked = linked_targets(graph, card)
            for row in rows:
                row["relation"] = relation(graph, here.rel, linked, row["path"])

        service.read(relate)
    return rows, answer


def symbols(rows: Sequence[dict[str, Any]]) -> list[types.SymbolInformation]:
    return [
        _symbol(
            row["title"],
            row["uri"],
            row["line_start"],
            row["line_end"],
            row["folder"],
        )
        for row in rows
    ]


def _symbol(name: str, uri: str, first: int, last: int, folder: str) -> types.SymbolInformation:
    """A card as a symbol: its ``first`` to ``last`` lines, in ``folder``."""
    location = types.Location(uri=uri, range=lines_range(first, last))
    return types.SymbolInformation(
        name=name, kind=types.SymbolKind.File, location=location, container_name=folder
    )


def merge_rows(per_vault: Sequence[list[dict[str, Any]]], limit: int) -> list[dict[str, Any]]:
    """Several vaults' results in one list, by score (each vault's fused scores are normalised per
    leg, so they compare)."""
    if len(per_vault) == 1:
        return per_vault[0][:limit]
    rows = [r for rs in per_vault for r in rs]
    rows.sort(key=lambda r: -float(r["score"]))
    return rows[:limit]


# Cards listed for a ``#tag`` query (per vault): every tagged card, up to this many.
TAG_LIMIT = 500


def tag_query(query: str) -> str | None:
    """The tag a ``workspace/symbol`` query names (``"#method/zettelkasten"`` ->
    ``"method/zettelkasten"``), or None for a normal query."""
    q = query.strip()
    if len(q) < 2 or not q.startswith("#") or q[1] == "#" or any(ch.isspace() for ch in q):
        return None
    return q[1:]


def tag_symbols(service: VaultService, tag: str, limit: int) -> list[types.SymbolInformation]:
    """Cards of ``service`` with the tag ``tag`` or a tag nested under it (``#a`` lists
    ``#a/b`` cards too), most linked first, each at the first line that writes the tag."""

    def find() -> list[types.SymbolInformation]:
        graph = service.graph
        tagged = cards_tagged(graph.cards.values(), tag)
        # most linked first: link_counts counts a card's backlinks without listing them
        ranked = sorted(tagged, key=lambda c: (-graph.link_counts(c.path)[0], c.title.casefold()))
        out = []
        for card in ranked[:limit]:
            line = first_tag_line(card, tag)
            uri = card_uri(service.root, card.path)
            folder = folder_of(card.path, service.root.name)
            out.append(_symbol(card.title, uri, line, line, folder))
        return out

    return service.read(find)


async def on_workspace_symbol(
    ls: ZettelLanguageServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation]:
    limit = ls.settings.symbol_limit
    tag = tag_query(params.query)

    def run() -> list[types.SymbolInformation]:
        if tag is not None:
            return [sym for s in list(ls.services) for sym in tag_symbols(s, tag, TAG_LIMIT)]
        per_vault = []
        for s in list(ls.services):
            # no LLM steps here: editors send this on every keystroke
            rows, answer = search_rows(s, params.query, ls.search_options(limit))
            if not answer.complete:
                ls.note_partial(s, answer.note)
            per_vault.append(rows)
        return symbols(merge_rows(per_vault, limit))

    return await ls.off_loop(run, [])


async def cmd_search(ls: ZettelLanguageServer, *args: Any) -> dict[str, Any]:
    """``zettel.search`` {query, limit?, llm?, uri?}: results of every vault, merged; with
    ``uri`` (the card open in the editor) each row says how it relates to that card."""
    query = str(arg(args, "query", 0, "") or "")
    limit = limit_arg(arg(args, "limit", 1), ls.settings.symbol_limit)
    use_llm = arg(args, "llm", 2, True) is not False
    here_uri = arg(args, "uri", 3)
    cancelled = ls.cancel_event()

    def run() -> dict[str, Any]:
        llm_settings = ls.settings.llm
        expand = use_llm and llm_settings.expand_query
        rerank = use_llm and llm_settings.llm_rerank
        llm = ls.llm if expand or rerank else None
        here = ls.doc(str(here_uri)) if here_uri else None
        per_vault: list[list[dict[str, Any]]] = []
        notes: list[str] = []
        messages: list[str] = []
        complete = True
        for s in list(ls.services):
            rows, answer = search_rows(
                s,
                query,
                ls.search_options(limit),
                llm=llm,
                expand=expand,
                rerank=rerank,
                cancel=cancelled.is_set,
                here=here if here is not None and here.service is s else None,
            )
            per_vault.append(rows)
            complete = complete and answer.complete
            messages.extend(m for m in answer.llm_messages if m not in messages)
            if answer.note:
                notes.append(f"{s.root.name}: {answer.note}")
        ls.llm_messages(messages)
        return {
            "query": query,
            "results": merge_rows(per_vault, limit),
            "complete": complete,
            "note": "; ".join(notes + messages),
        }

    empty: dict[str, Any] = {"query": query, "results": [], "complete": False, "note": ""}
    try:
        return await ls.off_loop(run, empty)
    finally:
        cancelled.set()  # a superseded search stops its LLM steps
        ls.forget_cancel(cancelled)


def register(server: ZettelLanguageServer) -> None:
    server.feature(types.WORKSPACE_SYMBOL)(on_workspace_symbol)
    server.command("zettel.search")(cmd_search)
