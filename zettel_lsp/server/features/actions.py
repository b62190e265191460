"""Link suggestions: code actions ("Link 'x' → [[X]]", one per mentioned card with its count,
most confident first; below them "Link N confident mentions"; "Add related links", resolved
lazily when the client can), the quick fixes of an unresolved link ("Link to «closest match»"
for a near miss, "Create card «X»"; listed first) and the ``zettel.suggestLinks`` command (the
same suggestions as JSON, for the suggestion views). Mentions are ranked and thresholded by
:func:`zettel_lsp.search.suggest.rank_mentions` (issue #14).

The server never edits a note by itself: every change is a ``WorkspaceEdit`` the editor applies.
Related cards of unsaved text need embeddings: they are computed outside the vault lock
(:func:`zettel_lsp.search.suggest.related_suggestions` with ``read=service.read``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.graph.diagnostics import (
    Kind,
    closest,
    new_card_path,
    new_card_text,
    retarget,
)
from zettel_lsp.graph.names import Suggestion
from zettel_lsp.notes.editing import insert_related, unlinked_names
from zettel_lsp.notes.model import Link
from zettel_lsp.search.suggest import (
    MentionSuggestion,
    MentionTarget,
    link_name,
    mention_fields,
    related_suggestions,
)
from zettel_lsp.server.arguments import arg, limit_arg
from zettel_lsp.server.documents import Codec, Doc, card_uri, range_json, workspace_edit
from zettel_lsp.server.features.shared import answer_doc, capability, offset_at
from zettel_lsp.server.server import ZettelLanguageServer

ADD_RELATED = "zettel.addRelated"


def mention_actions(
    doc: Doc,
    rng: types.Range,
    codec: PositionCodec,
    *,
    document_changes: bool,
) -> list[types.CodeAction]:
    """One quick fix per mentioned card with a mention in ``rng`` (linking those mentions), most
    confident first, then "Link N confident mentions" for the whole note."""
    c = Codec(codec, doc.lines)
    start, end = offset_at(doc, rng.start, codec), offset_at(doc, rng.end, codec)
    targets = doc.mentions()

    def linking(
        title: str, kind: types.CodeActionKind, mentions: Sequence[MentionSuggestion]
    ) -> types.CodeAction:
        edits = [
            types.TextEdit(range=c.range(m.start_pos, m.end_pos), new_text=m.replacement)
            for m in mentions
        ]
        return types.CodeAction(
            title=title, kind=kind, edit=workspace_edit(doc, edits, document_changes)
        )

    out = []
    for t in targets:
        here = [m for m in t.mentions if not (m.end < start or m.start > end)]
        if here:
            out.append(linking(fix_title(here), types.CodeActionKind.QuickFix, here))
    confident = confident_mentions(targets)
    if confident:
        title = link_confident_title(len(confident))
        out.append(linking(title, types.CodeActionKind.RefactorRewrite, confident))
    return out


def link_fixes(
    doc: Doc,
    rng: types.Range,
    codec: PositionCodec,
    *,
    document_changes: bool,
    create_files: bool,
    new_note_folder: str | None,
    diagnostics: Sequence[types.Diagnostic] = (),
) -> list[types.CodeAction]:
    """For the unresolved link under the cursor (``rng`` inside the link) or named by one of
    the client's ``diagnostics``: "Link to «closest match»" when a card's name is a near miss
    (preferred), and "Create card «X»" (a new file in the ``newNoteFolder`` with the title as
    its first line). A selection over several lines offers none (the mention fixes are for
    that). With ``create_files`` (the client applies ``CreateFile``) the edit creates the
    file; otherwise it is a text edit to the new file's URI (Neovim opens it as a new buffer)."""
    c = Codec(codec, doc.lines)
    start, end = offset_at(doc, rng.start, codec), offset_at(doc, rng.end, codec)
    service = doc.service
    named: dict[int, list[types.Diagnostic]] = {}  # the client's, by where their link starts
    for d in diagnostics:
        if d.code == Kind.UNRESOLVED.value:
            named.setdefault(doc.index.offset(c.from_client(d.range.start)), []).append(d)

    def find() -> list[tuple[Link, Suggestion | None, str | None]]:
        out = []
        for p in doc.problems(frozenset({Kind.UNRESOLVED})):
            link = p.link
            if link is None:
                continue
            inside = link.span.start <= start and end <= link.span.end
            if not inside and link.span.start not in named:
                continue
            best = closest(p)
            name = link_name(service.graph, best.path, doc.rel) if best is not None else None
            out.append((link, best, name))
        return out

    actions: list[types.CodeAction] = []
    for link, best, name in service.read(find):
        fixed = named.get(link.span.start)
        if best is not None and name is not None:
            edit = retarget(link, name, doc.rel, best.path)
            if edit is not None:
                a, b, text = edit
                r = c.range(doc.index.position(a), doc.index.position(b))
                actions.append(
                    types.CodeAction(
                        title=f"Link to «{best.title}»",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=fixed,
                        is_preferred=True,
                        edit=workspace_edit(
                            doc, [types.TextEdit(range=r, new_text=text)], document_changes
                        ),
                    )
                )
        path = new_card_path(doc.card, link, new_note_folder)
        if path is None or (service.root / path).exists():
            continue
        actions.append(
            types.CodeAction(
                title=f"Create card «{new_card_text(link)[2:].strip()}»",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=fixed,
                edit=create_card_edit(
                    card_uri(service.root, path), new_card_text(link), create_files=create_files
                ),
            )
        )
    return actions


def create_card_edit(uri: str, text: str, *, create_files: bool) -> types.WorkspaceEdit:
    """A new file at ``uri`` holding ``text``: ``CreateFile`` then its text when the client
    takes resource operations, else only a text edit to the (not yet existing) file."""
    origin = types.Position(line=0, character=0)
    insert = types.TextEdit(range=types.Range(start=origin, end=origin), new_text=text)
    if create_files:
        return types.WorkspaceEdit(
            document_changes=[
                types.CreateFile(
                    uri=uri,
                    options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True),
                ),
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=None
                    ),
                    edits=[insert],
                ),
            ]
        )
    return types.WorkspaceEdit(changes={uri: [insert]})


def fix_title(mentions: Sequence[MentionSuggestion]) -> str:
    """ "Link 'x' → [[X|x]]", with "(3 mentions)" when the fix links more than one."""
    first = mentions[0]
    more = f" ({len(mentions)} mentions)" if len(mentions) > 1 else ""
    return f"Link '{first.text}' → {first.replacement}{more}"


def link_confident_title(n: int) -> str:
    return f"Link {n} confident mention{'' if n == 1 else 's'}"


def confident_mentions(targets: Sequence[MentionTarget]) -> list[MentionSuggestion]:
    """Every mention of the confident cards in text order, headings left alone (what "Link N
    confident mentions" links)."""
    return sorted(
        (m for t in targets if t.confident for m in t.mentions if not m.in_heading),
        key=lambda m: m.start,
    )


def related_action(
    doc: Doc, heading: str, edit: types.WorkspaceEdit | None = None
) -> types.CodeAction:
    """ "Add related links" with its ``edit``, or without: filled in by ``codeAction/resolve``."""
    return types.CodeAction(
        title=f"Add related links under '{heading}'",
        kind=types.CodeActionKind.RefactorRewrite,
        edit=edit,
        data=None if edit else {"action": ADD_RELATED, "uri": doc.uri, "version": doc.version},
    )


def related_links_edit(
    doc: Doc, heading: str, limit: int, codec: PositionCodec
) -> types.TextEdit | None:
    service = doc.service
    engine = service.engine
    if engine is None:
        return None
    suggestions = related_suggestions(engine, doc.card, limit, unmentioned=True, read=service.read)
    names = service.read(lambda: [link_name(service.graph, s.path, doc.rel) for s in suggestions])
    names = unlinked_names(doc.card, names)
    if not names:
        return None
    at, new_text = insert_related(doc.card, heading, names)
    p = Codec(codec, doc.lines).to_client(doc.index.position(at))
    return types.TextEdit(range=types.Range(start=p, end=p), new_text=new_text)


def suggest_json(doc: Doc, limit: int, codec: PositionCodec) -> dict[str, Any]:
    """The suggestions as JSON. The clients read ``unlinked_mentions`` and ``related``: fields
    are only ever added. ``unlinked_mentions`` lists the suggested mentions grouped by card,
    most confident card first; ``mention_targets`` has each card once with its count, and
    ``link_confident`` the edits of "Link N confident mentions"."""
    service = doc.service
    c = Codec(codec, doc.lines)
    targets = doc.mentions()
    engine = service.engine
    related = (
        related_suggestions(engine, doc.card, limit, unmentioned=True, read=service.read)
        if engine is not None
        else []
    )
    links = service.read(
        lambda: {r.path: f"[[{link_name(service.graph, r.path, doc.rel)}]]" for r in related}
    )
    confident = confident_mentions(targets)

    def place(m: MentionSuggestion) -> dict[str, Any]:
        return range_json(c.range(m.start_pos, m.end_pos))

    return {
        "uri": doc.uri,
        "card": doc.rel,
        "unlinked_mentions": [
            mention_fields(t, m) | {"range": place(m)} for t in targets for m in t.mentions
        ],
        "mention_targets": [
            {
                "target": t.target,
                "target_title": t.target_title,
                "text": t.mentions[0].text,
                "replacement": t.mentions[0].replacement,
                "count": t.count,
                "confidence": round(t.confidence, 3),
                "confident": t.confident,
                "linked_by": t.linked_by,
                "named_by": t.named_by,
                "already_linked": t.already_linked,
                "ranges": [place(m) for m in t.mentions],
            }
            for t in targets
        ],
        "link_confident": {
            "title": link_confident_title(len(confident)),
            "count": len(confident),
            "edits": [{"range": place(m), "newText": m.replacement} for m in confident],
        },
        "related": [
            asdict(r) | {"uri": card_uri(service.root, r.path), "link": links[r.path]}
            for r in related
        ],
    }


async def on_code_action(
    ls: ZettelLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction]:
    def answer(doc: Doc) -> list[types.CodeAction]:
        codec = ls.workspace.position_codec
        changes = ls.supports("workspace", "workspace_edit", "document_changes")
        operations = capability(ls, "workspace", "workspace_edit", "resource_operations") or ()
        create = changes and types.ResourceOperationKind.Create in operations
        actions = link_fixes(
            doc,
            params.range,
            codec,
            document_changes=changes,
            create_files=create,
            new_note_folder=ls.settings.new_note_folder,
            diagnostics=params.context.diagnostics,
        )
        actions += mention_actions(doc, params.range, codec, document_changes=changes)
        if doc.service.engine is None:
            return actions
        heading = ls.settings.related_heading
        resolve = capability(ls, "text_document", "code_action", "resolve_support", "properties")
        if "edit" in (resolve or ()):
            actions.append(related_action(doc, heading))
        elif edit := related_links_edit(doc, heading, ls.settings.related_limit, codec):
            actions.append(related_action(doc, heading, workspace_edit(doc, [edit], changes)))
        return actions

    return await answer_doc(ls, params.text_document.uri, answer, [])


async def on_code_action_resolve(
    ls: ZettelLanguageServer, action: types.CodeAction
) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    if data.get("action") != ADD_RELATED:
        return action

    def run(doc: Doc) -> types.CodeAction:
        changes = ls.supports("workspace", "workspace_edit", "document_changes")
        edit = related_links_edit(
            doc,
            ls.settings.related_heading,
            ls.settings.related_limit,
            ls.workspace.position_codec,
        )
        action.edit = workspace_edit(doc, [edit] if edit else [], changes)
        if edit is None:
            action.title += " (nothing to add)"
        return action

    return await answer_doc(ls, str(data.get("uri", "")), run, action)


async def cmd_suggest_links(ls: ZettelLanguageServer, *args: Any) -> dict[str, Any] | None:
    """``zettel.suggestLinks`` {uri, limit?}: unlinked mentions and related cards of a card."""
    uri = str(arg(args, "uri", 0, "") or "")
    limit = limit_arg(arg(args, "limit", 1), ls.settings.related_limit)

    codec = ls.workspace.position_codec
    return await answer_doc(ls, uri, lambda doc: suggest_json(doc, limit, codec), None)


CODE_ACTION_OPTIONS = types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite],
    resolve_provider=True,
)


def register(server: ZettelLanguageServer) -> None:
    server.feature(types.TEXT_DOCUMENT_CODE_ACTION, CODE_ACTION_OPTIONS)(on_code_action)
    server.feature(types.CODE_ACTION_RESOLVE)(on_code_action_resolve)
    server.command("zettel.suggestLinks")(cmd_suggest_links)
