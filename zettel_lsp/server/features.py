"""What the LSP methods answer, as functions of a vault service and a document.

Nothing here talks to the client: :mod:`zettel_lsp.server.app` turns requests into calls and
results into responses. Internal positions are code points (Python ``str`` indices); a
:class:`Codec` turns them into the client's units (UTF-16 by default) and back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

from zettel_lsp.graph.link_graph import LinkGraph
from zettel_lsp.index.sync import point_id
from zettel_lsp.notes.masking import atx_heading
from zettel_lsp.notes.model import Card, Link, Position
from zettel_lsp.notes.parser import parse_card
from zettel_lsp.notes.positions import LineIndex
from zettel_lsp.notes.title_rule import same_name
from zettel_lsp.search.engine import SearchOptions
from zettel_lsp.search.fusion import CardResult
from zettel_lsp.search.query import MAX_QUERY_WORDS, parse_query
from zettel_lsp.search.results import excerpt, result_dict
from zettel_lsp.search.suggest import (
    MentionSuggestion,
    link_name,
    linked_targets,
    mention_suggestions,
    related_suggestions,
)
from zettel_lsp.server.service import SearchAnswer, VaultService

if TYPE_CHECKING:
    from zettel_lsp.llm import Ollama

PREVIEW_CHARS = 400
RELATED_EXCERPT_CHARS = 100


@dataclass
class Doc:
    """One card as the editor has it (unsaved edits included)."""

    uri: str
    service: VaultService
    rel: str  # vault-relative path
    text: str
    version: int | None

    def __post_init__(self) -> None:
        self.card: Card = parse_card(
            self.rel, self.text, title_source=self.service.settings.title_source
        )
        self.index = LineIndex(self.text)
        self.lines = self.text.splitlines(keepends=True) or [""]


class Codec:
    """Code-point positions <-> client positions for one text."""

    def __init__(self, codec: PositionCodec, lines: Sequence[str]) -> None:
        self._codec = codec
        self._lines = list(lines)

    def to_client(self, pos: Position) -> types.Position:
        return self._codec.position_to_client_units(
            self._lines, types.Position(line=pos.line, character=pos.character)
        )

    def from_client(self, pos: types.Position) -> Position:
        p = self._codec.position_from_client_units(self._lines, pos)
        return Position(p.line, p.character)

    def range(self, start: Position, end: Position) -> types.Range:
        return types.Range(start=self.to_client(start), end=self.to_client(end))


def card_uri(root: Path, rel: str) -> str:
    return from_fs_path(str(root / rel)) or (root / rel).as_uri()


def lines_range(line_start: int, line_end: int) -> types.Range:
    """Whole lines: columns are 0, so no unit conversion is needed."""
    return types.Range(
        start=types.Position(line=line_start, character=0),
        end=types.Position(line=line_end + 1, character=0),
    )


# ---------------------------------------------------------------------- search


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
    """CLI-shaped result rows (plus ``uri`` and ``vault``) and the answer's status. With
    ``here`` (the card open in the editor, in this vault), each row also says how it relates
    to that card (``relation``: linked, backlink, 2 hops, not linked; ``this card``)."""
    answer = service.search(query, options, llm=llm, expand=expand, rerank=rerank, cancel=cancel)
    words = parse_query(query).terms
    rows = []
    for r in answer.results:
        row = result_dict(r, words)
        row["uri"] = card_uri(service.root, r.path)
        row["vault"] = str(service.root)
        rows.append(row)
    if here is not None:
        with service.lock:
            linked = linked_targets(service.graph, here.card)
            for row in rows:
                path = row["path"]
                row["relation"] = (
                    "this card"
                    if path == here.rel
                    else relation(service.graph, here.rel, linked, path)
                )
    return rows, answer


def symbols(rows: Sequence[dict[str, Any]]) -> list[types.SymbolInformation]:
    out = []
    for row in rows:
        folder = row["path"].rsplit("/", 1)[0] if "/" in row["path"] else ""
        out.append(
            types.SymbolInformation(
                name=row["title"],
                kind=types.SymbolKind.File,
                location=types.Location(
                    uri=row["uri"], range=lines_range(row["line_start"], row["line_end"])
                ),
                container_name=folder or Path(row["vault"]).name,
            )
        )
    return out


def merge_rows(per_vault: Sequence[list[dict[str, Any]]], limit: int) -> list[dict[str, Any]]:
    """Several vaults' results in one list, by score (each vault's fused scores are normalised per
    leg, so they compare)."""
    if len(per_vault) == 1:
        return per_vault[0][:limit]
    rows = [r for rs in per_vault for r in rs]
    rows.sort(key=lambda r: -float(r["score"]))
    return rows[:limit]


# ---------------------------------------------------------------------- links under the cursor


def link_at(doc: Doc, offset: int) -> Link | None:
    for link in doc.card.links:
        if link.span.start <= offset <= link.span.end:
            return link
    return None


def target_location(service: VaultService, target: str, link: Link) -> types.Location | None:
    """Where a resolved link points: the card, its heading or its block."""
    card = service.graph.cards.get(target)
    line = 0
    if card is not None:
        if link.heading:
            want = _norm_heading(link.heading.split("#")[-1])
            for h in card.headings:
                if _norm_heading(h.text) == want:
                    line = h.line
                    break
        elif link.block_id:
            for b in card.block_ids:
                if b.name == link.block_id:
                    line = b.line
                    break
    elif not (service.root / target).is_file():
        return None
    pos = types.Position(line=line, character=0)
    return types.Location(uri=card_uri(service.root, target), range=types.Range(start=pos, end=pos))


def _norm_heading(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def resolve_at(doc: Doc, offset: int) -> tuple[Link, str | None] | None:
    """The link under the cursor and its target path (None when unresolved)."""
    link = link_at(doc, offset)
    if link is None:
        return None
    graph = doc.service.graph
    res = graph.resolve_link(link, doc.rel)
    if res.target is not None:
        return link, res.target
    if res.attachment:
        for base in (doc.card.folder, ""):
            candidate = f"{base}/{link.target}" if base else link.target
            if (doc.service.root / candidate).is_file():
                return link, candidate
    return link, None


def definition(doc: Doc, pos: types.Position, codec: PositionCodec) -> types.Location | None:
    offset = doc.index.offset(Codec(codec, doc.lines).from_client(pos))
    found = resolve_at(doc, offset)
    if found is None or found[1] is None:
        return None
    return target_location(doc.service, found[1], found[0])


def references(
    doc: Doc, pos: types.Position, codec: PositionCodec, include_declaration: bool
) -> list[types.Location]:
    """Backlinks of the card under the cursor: the linked card on a link, else this card."""
    offset = doc.index.offset(Codec(codec, doc.lines).from_client(pos))
    found = resolve_at(doc, offset)
    target = found[1] if found is not None and found[1] is not None else doc.rel
    graph = doc.service.graph
    out: list[types.Location] = []
    if include_declaration and target in graph.cards:
        start = types.Position(line=0, character=0)
        out.append(
            types.Location(
                uri=card_uri(doc.service.root, target), range=types.Range(start=start, end=start)
            )
        )
    for src in sorted(graph.backlinks(target)):
        card = graph.cards.get(src)
        if card is None:
            continue
        src_codec = Codec(codec, card.text.splitlines(keepends=True) or [""])
        uri = card_uri(doc.service.root, src)
        for rl in graph.links_of(src):
            if rl.target == target:
                span = rl.link.span
                out.append(
                    types.Location(uri=uri, range=src_codec.range(span.start_pos, span.end_pos))
                )
    return out


# ---------------------------------------------------------------------- hover


def relation(graph: LinkGraph, here: str, linked: set[str], other: str) -> str:
    """How ``other`` relates to the card ``here`` (whose current links are ``linked``)."""
    if other in linked:
        return "linked"
    if here in graph.outgoing(other):
        return "backlink"
    if graph.distance(here, other, cutoff=2) == 2:
        return "2 hops"
    return "not linked"


def paragraph_at(doc: Doc, line: int) -> tuple[int, int, str] | None:
    """The non-blank lines around ``line`` (None on a blank line or in the frontmatter)."""
    raw = doc.text.split("\n")
    if line >= len(raw) or line < doc.card.body_start_line or not raw[line].strip():
        return None
    start = line
    while start > doc.card.body_start_line and raw[start - 1].strip():
        start -= 1
    end = line
    while end + 1 < len(raw) and raw[end + 1].strip():
        end += 1
    return start, end, "\n".join(raw[start : end + 1])


def hover(
    doc: Doc, pos: types.Position, codec: PositionCodec, limit: int, options: SearchOptions
) -> types.Hover | None:
    cpos = Codec(codec, doc.lines).from_client(pos)
    offset = doc.index.offset(cpos)
    found = resolve_at(doc, offset)
    if found is not None:
        link, target = found
        md = _link_hover(doc, link, target, limit)
        span = link.span
        rng = Codec(codec, doc.lines).range(span.start_pos, span.end_pos)
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=md), range=rng
        )
    para = paragraph_at(doc, cpos.line)
    if para is None:
        return None
    start, end, text = para
    if not parse_query(text).words:
        return None
    cursor = offset - doc.index.line_start(start)
    results = _related_to_text(doc, words_around(text, cursor), limit, options)
    if not results:
        return None
    linked = linked_targets(doc.service.graph, doc.card)
    lines = ["**Related notes**", ""]
    for r in results:
        rel = relation(doc.service.graph, doc.rel, linked, r.path)
        lines.append(_related_line(doc.service, r.path, r.title, r.chunk, rel))
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n".join(lines)),
        range=Codec(codec, doc.lines).range(
            Position(start, 0), Position(end, len(doc.index.line_text(end)))
        ),
    )


_WORDS = re.compile(r"\S+")


def words_around(text: str, at: int, n: int = MAX_QUERY_WORDS) -> str:
    """At most ``n`` words of ``text`` centred on offset ``at``: a long paragraph is asked
    about where the cursor is (a query is capped at ``n`` words anyway)."""
    words = list(_WORDS.finditer(text))
    if len(words) <= n:
        return text
    here = next((i for i, w in enumerate(words) if w.end() >= at), len(words) - 1)
    first = max(0, min(here - n // 2, len(words) - n))
    return text[words[first].start() : words[first + n - 1].end()]


def _related_to_text(doc: Doc, text: str, limit: int, options: SearchOptions) -> list[CardResult]:
    opts = SearchOptions(
        limit=limit + 1,
        legs=tuple(leg for leg in options.legs if leg != "keyword") or options.legs,
        graph=options.graph,
    )
    answer = doc.service.search(text, opts)
    return [r for r in answer.results if r.path != doc.rel][:limit]


def _related_line(
    service: VaultService, path: str, title: str, chunk: dict[str, Any], rel: str
) -> str:
    line = int(chunk.get("line_start", 0))
    uri = card_uri(service.root, path) + f"#L{line + 1}"
    snippet = excerpt(str(chunk.get("text", "")), [], RELATED_EXCERPT_CHARS)
    snippet = snippet.replace("\n", " ").replace("[", "\\[").replace("]", "\\]")
    return f"- [{_md_text(title)}]({uri}) · *{rel}* — {snippet}"


def _md_text(text: str) -> str:
    return re.sub(r"([\[\]*_`\\])", r"\\\1", text)


def _link_hover(doc: Doc, link: Link, target: str | None, limit: int) -> str:
    service = doc.service
    if target is None:
        return (
            f"**Unresolved link** `{link.target}`: no card has this file name, title, alias or id."
        )
    card = service.graph.cards.get(target)
    uri = card_uri(service.root, target)
    if card is None:
        return f"**[{_md_text(link.target)}]({uri})** (attachment)"
    backlinks = len(service.graph.backlinks(target))
    parts = [
        f"### [{_md_text(card.title)}]({uri})",
        f"`{target}` · {backlinks} backlink{'s' if backlinks != 1 else ''}",
        "",
        _preview(card, link),
    ]
    similar = similar_cards(service, target, limit, exclude={doc.rel})
    if similar:
        linked = linked_targets(service.graph, doc.card)
        parts += ["", "**Related**", ""]
        for path, title, chunk in similar:
            rel = relation(service.graph, doc.rel, linked, path)
            parts.append(_related_line(service, path, title, chunk, rel))
    return "\n".join(parts)


def _preview(card: Card, link: Link) -> str:
    lines = card.text.split("\n")
    start = card.body_start_line
    end = len(lines) - 1
    if link.heading:
        want = _norm_heading(link.heading.split("#")[-1])
        for h in card.headings:
            if _norm_heading(h.text) == want:
                start, end = h.line, h.end_line
                break
    elif link.block_id:
        for b in card.block_ids:
            if b.name == link.block_id:
                start = end = b.line
                break
    body = "\n".join(lines[start : end + 1]).strip()
    if start == card.body_start_line:  # drop the title heading: the hover shows it already
        first, _, rest = body.partition("\n")
        if same_name(first.lstrip("# "), card.title):
            body = rest.strip()
    if len(body) > PREVIEW_CHARS:
        cut = body.rfind(" ", 0, PREVIEW_CHARS)
        body = body[: cut if cut > 0 else PREVIEW_CHARS] + " …"
    return "\n".join("> " + line for line in body.split("\n")) if body else "*(empty card)*"


def similar_cards(
    service: VaultService, path: str, limit: int, *, exclude: set[str] | None = None
) -> list[tuple[str, str, dict[str, Any]]]:
    """Cards closest to the stored card ``path``: its first chunk's vector (no embedding
    needed), or BM25 on its text while vectors are missing. (path, title, chunk)."""
    engine = service.engine
    if engine is None:
        return []
    skip = {path} | (exclude or set())
    got = engine.store.retrieve([point_id(path, 0)], with_dense=True)
    if not got:
        return []
    _, payload, vec = got[0]
    n = limit + len(skip) + 2
    if vec is not None:
        hits = engine.store.dense_search(list(vec), n)
    else:
        hits = engine.store.bm25_search(str(payload.get("text", ""))[:2000], n)
    out: list[tuple[str, str, dict[str, Any]]] = []
    seen = set(skip)
    for h in hits:
        if h.path in seen:
            continue
        seen.add(h.path)
        out.append((h.path, str(h.payload.get("title", h.path)), h.payload))
        if len(out) >= limit:
            break
    return out


# ---------------------------------------------------------------------- code actions


def mention_actions(
    doc: Doc,
    rng: types.Range,
    codec: PositionCodec,
    *,
    document_changes: bool,
) -> list[types.CodeAction]:
    c = Codec(codec, doc.lines)
    start = doc.index.offset(c.from_client(rng.start))
    end = doc.index.offset(c.from_client(rng.end))
    mentions = mention_suggestions(doc.service.graph, doc.card)
    out: list[types.CodeAction] = []
    for m in mentions:
        if m.end < start or m.start > end:
            continue
        out.append(
            types.CodeAction(
                title=f"Link '{m.text}' → {m.replacement}",
                kind=types.CodeActionKind.QuickFix,
                edit=workspace_edit(doc, [_mention_edit(c, m)], document_changes),
            )
        )
    if mentions:
        n = len(mentions)
        out.append(
            types.CodeAction(
                title=f"Link all unlinked mentions in this note ({n})",
                kind=types.CodeActionKind.RefactorRewrite,
                edit=workspace_edit(doc, [_mention_edit(c, m) for m in mentions], document_changes),
            )
        )
    return out


def _mention_edit(c: Codec, m: MentionSuggestion) -> types.TextEdit:
    return types.TextEdit(range=c.range(m.start_pos, m.end_pos), new_text=m.replacement)


def workspace_edit(
    doc: Doc, edits: list[types.TextEdit], document_changes: bool
) -> types.WorkspaceEdit:
    if document_changes:
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=doc.uri, version=doc.version
                    ),
                    edits=list(edits),
                )
            ]
        )
    return types.WorkspaceEdit(changes={doc.uri: list(edits)})


ADD_RELATED = "zettel.addRelated"


def related_action_stub(doc: Doc, heading: str) -> types.CodeAction:
    """ "Add related links", to be filled in by ``codeAction/resolve``."""
    return types.CodeAction(
        title=f"Add related links under '{heading}'",
        kind=types.CodeActionKind.RefactorRewrite,
        data={"action": ADD_RELATED, "uri": doc.uri, "version": doc.version},
    )


def related_action(
    doc: Doc, heading: str, limit: int, codec: PositionCodec, *, document_changes: bool
) -> types.CodeAction | None:
    """ "Add related links" with its edit, or None when there is nothing to add."""
    edit = related_links_edit(doc, heading, limit, codec)
    if edit is None:
        return None
    return types.CodeAction(
        title=f"Add related links under '{heading}'",
        kind=types.CodeActionKind.RefactorRewrite,
        edit=workspace_edit(doc, [edit], document_changes),
    )


def related_links_edit(
    doc: Doc, heading: str, limit: int, codec: PositionCodec
) -> types.TextEdit | None:
    engine = doc.service.engine
    if engine is None:
        return None
    with doc.service.lock:
        suggestions = related_suggestions(engine, doc.card, limit)
        names = [link_name(doc.service.graph, s.path, doc.rel) for s in suggestions]
    present = {m.lower() for m in re.findall(r"\[\[([^\[\]|#\n]+)", doc.text)}
    names = [n for n in names if n.lower() not in present]
    if not names:
        return None
    at, new_text = insert_related(doc.text, heading, names)
    p = Codec(codec, doc.lines).to_client(doc.index.position(at))
    return types.TextEdit(range=types.Range(start=p, end=p), new_text=new_text)


def insert_related(text: str, heading: str, names: Sequence[str]) -> tuple[int, str]:
    """Where (code-point offset) and what to insert: list items at the end of the ``heading``
    section if the note has one, else a new section at the end of the note."""
    items = "".join(f"- [[{n}]]\n" for n in names)
    want = atx_heading(heading)
    want_level = want[0] if want else 2
    want_text = (want[1] if want else heading).strip().lower()
    lines = text.split("\n")
    offsets = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    in_fence = False
    section: int | None = None
    end_line = len(lines)
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        m = None if in_fence else atx_heading(line)
        if m is None:
            continue
        if section is None and m[0] == want_level and m[1].lower() == want_text:
            section = i
        elif section is not None and m[0] <= want_level:
            end_line = i
            break
    if section is not None:
        last = section
        for i in range(section + 1, end_line):
            if lines[i].strip():
                last = i
        at = offsets[last] + len(lines[last])
        sep = "\n\n" if last == section else "\n"
        return at, sep + items.rstrip("\n")
    if not text.strip():
        return len(text), f"{heading}\n\n{items}"
    prefix = "" if text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
    return len(text), f"{prefix}{heading}\n\n{items}"


# ---------------------------------------------------------------------- commands' JSON


def suggest_json(doc: Doc, limit: int, codec: PositionCodec) -> dict[str, Any]:
    c = Codec(codec, doc.lines)
    with doc.service.lock:
        mentions = mention_suggestions(doc.service.graph, doc.card)
        engine = doc.service.engine
        related = related_suggestions(engine, doc.card, limit) if engine is not None else []
        links = {r.path: f"[[{link_name(doc.service.graph, r.path, doc.rel)}]]" for r in related}
    return {
        "uri": doc.uri,
        "card": doc.rel,
        "unlinked_mentions": [
            {
                "text": m.text,
                "target": m.target,
                "target_title": m.target_title,
                "replacement": m.replacement,
                "range": _range_json(c.range(m.start_pos, m.end_pos)),
            }
            for m in mentions
        ],
        "related": [
            {
                "path": r.path,
                "uri": card_uri(doc.service.root, r.path),
                "title": r.title,
                "link": links[r.path],
                "score": r.score,
                "reason": r.reason,
                "line_start": r.line_start,
                "line_end": r.line_end,
                "excerpt": r.excerpt,
            }
            for r in related
        ],
    }


def related_json(
    doc: Doc, pos: types.Position | None, codec: PositionCodec, limit: int, options: SearchOptions
) -> list[dict[str, Any]]:
    """Related notes for the paragraph at ``pos``, or for the whole card without one."""
    text = doc.card.body
    if pos is not None:
        para = paragraph_at(doc, Codec(codec, doc.lines).from_client(pos).line)
        if para is not None:
            text = para[2]
    if not parse_query(text).words:
        return []
    linked = linked_targets(doc.service.graph, doc.card)
    out = []
    for r in _related_to_text(doc, text, limit, options):
        row = result_dict(r, [])
        row["uri"] = card_uri(doc.service.root, r.path)
        row["relation"] = relation(doc.service.graph, doc.rel, linked, r.path)
        out.append(row)
    return out


def _range_json(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }
