"""End to end in a real editor, editing notes: headless Neovim (0.7.x, its built-in LSP client).

Like tests/server/test_neovim.py, a Lua script starts the server with ``vim.lsp.start_client``
on a copy of examples/vault, waits for ``zettel.status`` to say the vault is ready, and writes
what it saw as JSON for the assertions below. It then edits as a user would:

1. **completion**: appends `` [[`` to a prose line of a card (the client sends ``didChange``)
   and asks ``textDocument/completion``; again with three letters typed (``[[Rec``) and with
   brackets the editor closed itself (``[[Rec]]``), applying the first item's edit with
   ``vim.lsp.util.apply_text_edits``;
2. **diagnostics** (pushed: Neovim 0.7 cannot pull): a new, unsaved card whose file name has a
   space links to a card that does not exist; the diagnostic appears in ``vim.diagnostic``, then
   goes away once the missing card is written to disk (the server's watcher sees it);
3. **rename** (last: it moves a file): ``prepareRename`` and ``rename`` on a ``[[link]]``, the
   answer applied with ``vim.lsp.util.apply_workspace_edit`` and ``:wall``; the vault on disk is
   checked afterwards.

Without ``nvim`` on PATH the module is skipped.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.nvim import LUA_SESSION, NVIM, run_headless, session_params
from tests.server.test_neovim import READY_TIMEOUT_MS, uri_path, utf16_position

pytestmark = pytest.mark.skipif(
    NVIM is None,
    reason="nvim not on PATH (bash scripts/setup-neovim.sh installs Debian's neovim)",
)

# 1. completion: " [[" appended to the end of this prose line of this card
COMPLETION_CARD = "retrieval/Stemming.md"
COMPLETION_TITLE = "Stemming and lemmatization"
COMPLETION_LINE_END = "than for English."
# cards COMPLETION_CARD links to (the relation "linked")
COMPLETION_LINKED = {"Inverted index", "Precision and recall", "Stopwords"}
TYPED = "Rec"
TYPED_TARGET = "Reciprocal rank fusion"
RELATIONS = {"linked", "backlink", "2 hops", "not linked", "this card"}
FIRST_ITEMS = 10

# 2. diagnostics: a new card (not on disk) with a space in its file name
SCRATCH_CARD = "Scratch note.md"
MISSING = "No such card here"
# a character outside the BMP before the link: UTF-16 columns differ from code points and bytes
SCRATCH_LINES = [
    "# Scratch note",
    "",
    f"Spärck 🍞 wrote [[{MISSING}]] and then [[BM25]].",
]
DIAGNOSTIC_TIMEOUT_MS = 30_000

# 3. rename: a card with many backlinks, renamed from a [[link]] to it in another card
RENAME_FROM = "retrieval/Vector database.md"
RENAME_LINK = "[[Dense embeddings]]"
OLD_CARD = "retrieval/Dense embeddings.md"
NEW_NAME = "Dense vectors"
NEW_CARD = "retrieval/Dense vectors.md"

LUA_SCRIPT = (
    LUA_SESSION
    + r"""
local function line_of(bufnr, row)
  return vim.api.nvim_buf_get_lines(bufnr, row, row + 1, true)[1]
end

-- Put text at the end of line `row`.
local function append(bufnr, row, text)
  local n = #line_of(bufnr, row)
  vim.api.nvim_buf_set_text(bufnr, row, n, row, n, { text })
end

-- What vim.diagnostic holds for a buffer (the fields the assertions read).
local function diagnostics(bufnr)
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(items, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      message = d.message, source = d.source, severity = d.severity, code = d.code,
    })
  end
  return items
end

local function completion_at(bufnr, pos, trigger)
  local context = { triggerKind = 1 }
  if trigger then
    context = { triggerKind = 2, triggerCharacter = trigger }
  end
  return request(bufnr, "textDocument/completion", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = pos,
    context = context,
  }, 30000)
end

local function first_item(result)
  if type(result) ~= "table" then
    return nil
  end
  local items = result.items or result
  return items[1]
end

local function scenario_completion()
  local buf = open(P.completion.card)
  local row = P.completion.row
  local c = P.completion
  out.completion = { line_before = line_of(buf, row) }

  -- "[[" with nothing typed
  append(buf, row, " [[")
  out.completion.line = line_of(buf, row)
  out.completion.empty, out.completion.empty_error =
    completion_at(buf, { line = row, character = c.character + 3 }, "[")

  -- three letters typed
  append(buf, row, P.typed)
  out.completion.typed, out.completion.typed_error =
    completion_at(buf, { line = row, character = c.character + 3 + #P.typed }, nil)
  local item = first_item(out.completion.typed)
  if item and item.textEdit then
    vim.lsp.util.apply_text_edits({ item.textEdit }, buf, "utf-16")
  end
  out.completion.applied_line = line_of(buf, row)

  -- the editor closed the brackets itself: "[[Rec]]" with the cursor after "Rec"
  vim.api.nvim_buf_set_lines(buf, row, row + 1, true, { out.completion.line_before })
  append(buf, row, " [[" .. P.typed .. "]]")
  out.completion.closed_line = line_of(buf, row)
  out.completion.closed, out.completion.closed_error =
    completion_at(buf, { line = row, character = c.character + 3 + #P.typed }, nil)
  item = first_item(out.completion.closed)
  if item and item.textEdit then
    vim.lsp.util.apply_text_edits({ item.textEdit }, buf, "utf-16")
  end
  out.completion.closed_applied_line = line_of(buf, row)
end

local function scenario_diagnostics()
  -- a card that is not on disk yet: an empty buffer (didOpen), then its text (didChange)
  local buf = open(P.scratch.card)
  out.scratch = { uri = vim.uri_from_bufnr(buf) }
  vim.api.nvim_buf_set_lines(buf, 0, -1, true, P.scratch.lines)
  local t0 = now_ms()
  out.scratch.appeared = vim.wait(P.diagnostic_timeout_ms, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50)
  out.scratch.appeared_ms = now_ms() - t0
  vim.wait(500) -- a second publication (e.g. one per didChange) would show up here
  out.scratch.before = diagnostics(buf)
  out.scratch.published_before = vim.deepcopy(out.published[out.scratch.uri])

  -- the missing card is written to disk (not through the editor): the watcher sees it
  vim.fn.writefile({ "# " .. P.scratch.missing, "", "Now it exists." },
    P.vault .. "/" .. P.scratch.missing .. ".md")
  t0 = now_ms()
  out.scratch.cleared = vim.wait(P.diagnostic_timeout_ms, function()
    return #vim.diagnostic.get(buf) == 0
  end, 50)
  out.scratch.cleared_ms = now_ms() - t0
  out.scratch.after = diagnostics(buf)
end

local function scenario_rename()
  local buf = open(P.rename.card)
  local doc = { uri = vim.uri_from_bufnr(buf) }
  out.rename = {}
  out.rename.prepare, out.rename.prepare_error = request(buf, "textDocument/prepareRename",
    { textDocument = doc, position = P.rename.pos }, 30000)
  out.rename.edit, out.rename.edit_error = request(buf, "textDocument/rename",
    { textDocument = doc, position = P.rename.pos, newName = P.rename.new_name }, 30000)
  if type(out.rename.edit) ~= "table" then
    return
  end
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, out.rename.edit, "utf-16")
  if not ok then
    out.rename.apply_error = tostring(err)
    return
  end
  ok, err = pcall(vim.cmd, "wall")
  if not ok then
    out.rename.wall_error = tostring(err)
  end
  local modified = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_option(b, "modified") then
      table.insert(modified, vim.api.nvim_buf_get_name(b))
    end
  end
  out.rename.modified_after_wall = modified
end

run(function()
  out.published = {}
  start({
    -- keep what the server sent (UTF-16 ranges), then let Neovim show it as usual
    ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
      if result and result.uri then
        local seen = out.published[result.uri] or {}
        table.insert(seen, result.diagnostics)
        out.published[result.uri] = seen
      end
      return vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
    end,
  })

  local first = open(P.completion.card)
  wait_ready(first)

  for _, step in ipairs({
    { "completion", scenario_completion },
    { "diagnostics", scenario_diagnostics },
    { "rename", scenario_rename },
  }) do
    local ok, err = xpcall(step[2], debug.traceback)
    if not ok then
      out[step[1] .. "_lua_error"] = tostring(err)
    end
  end

  out.stopped = stop()
end)
"""
)


def utf16_index(line: str, character: int) -> int:
    """The ``str`` index of UTF-16 column ``character`` of ``line``."""
    units = 0
    for i, ch in enumerate(line):
        if units >= character:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    assert units == character, (line, character)
    return len(line)


def apply_edit(line: str, edit: dict[str, Any]) -> str:
    """``line`` after a one-line LSP ``TextEdit`` (UTF-16 columns)."""
    start, end = edit["range"]["start"], edit["range"]["end"]
    assert start["line"] == end["line"], edit
    a, b = utf16_index(line, start["character"]), utf16_index(line, end["character"])
    new_text: str = edit["newText"]
    return line[:a] + new_text + line[b:]


def items_of(result: Any) -> list[dict[str, Any]]:
    assert isinstance(result, dict | list) and result, f"no completion: {result!r}"
    items = result["items"] if isinstance(result, dict) else result
    assert isinstance(items, list)
    return items


def relation(item: dict[str, Any]) -> str:
    """The relation an item names, from ``detail`` ("folder · relation")."""
    detail: str = item.get("detail", "")
    return detail.rsplit(" · ", 1)[-1]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One Neovim session over a fresh copy of the example vault: what it saw, as JSON."""
    work = tmp_path_factory.mktemp("neovim-editing")
    vault = work / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    completion_text = (vault / COMPLETION_CARD).read_text(encoding="utf-8")
    end = utf16_position(completion_text, COMPLETION_LINE_END, shift=len(COMPLETION_LINE_END))
    rename_text = (vault / RENAME_FROM).read_text(encoding="utf-8")
    # inside the link, on "Dense"
    rename_pos = utf16_position(rename_text, RENAME_LINK, shift=4)
    backlinks = {
        p.relative_to(vault).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(vault.rglob("*.md"))
        if "[[Dense embeddings" in p.read_text(encoding="utf-8")
    }
    params = session_params(
        work,
        vault,
        READY_TIMEOUT_MS,
        diagnostic_timeout_ms=DIAGNOSTIC_TIMEOUT_MS,
        typed=TYPED,
        completion={"card": COMPLETION_CARD, "row": end["line"], "character": end["character"]},
        scratch={"card": SCRATCH_CARD, "lines": SCRATCH_LINES, "missing": MISSING},
        rename={"card": RENAME_FROM, "pos": rename_pos, "new_name": NEW_NAME},
    )
    out, diagnostic = run_headless(LUA_SCRIPT, params, work)
    assert out is not None, f"the Lua script wrote no output\n{diagnostic}"
    assert "error" not in out, f"Lua error: {out['error']}\n{out}\n{diagnostic}"
    out["vault"] = str(vault)
    out["completion_file_line"] = completion_text.splitlines()[end["line"]]
    out["rename_pos"] = rename_pos
    out["backlinks"] = backlinks
    out["old_card_text"] = (EXAMPLE_VAULT / OLD_CARD).read_text(encoding="utf-8")
    out["diagnostic"] = diagnostic
    return out


def context(session: dict[str, Any], step: str) -> str:
    """What to print when an assertion on ``step`` fails: its Lua error and the server's log."""
    log = "\n".join(session.get("log", [])[-30:])
    return f"{session.get(step + '_lua_error', '')}\n--- server log:\n{log}"


def test_session_is_clean(session: dict[str, Any]) -> None:
    assert [v["phase"] for v in session["status"]["vaults"]] == ["ready"]
    for step in ("completion", "diagnostics", "rename"):
        assert f"{step}_lua_error" not in session, context(session, step)
    assert session["stopped"], f"the server did not stop: {session['diagnostic']}"
    assert session.get("server_exit", {}).get("code") == 0, session.get("server_exit")
    errors = [m for m in session["messages"] if m.get("type") == 1]
    assert not errors, f"the server showed errors: {errors}"


# ------------------------------------------------------------------ completion


def test_completion_after_brackets_closes_each_link_once(session: dict[str, Any]) -> None:
    c = session["completion"]
    assert c.get("empty_error") is None, c["empty_error"] + context(session, "completion")
    # the buffer held the file's line, then the unsaved " [[" the client sent with didChange
    assert c["line_before"] == session["completion_file_line"]
    line = c["line"]
    assert line == c["line_before"] + " [["
    items = items_of(c["empty"])
    assert len(items) >= FIRST_ITEMS, [i["label"] for i in items]
    for item in items:
        edit = item.get("textEdit")
        assert edit is not None, item
        after = apply_edit(line, edit)
        # the line keeps its text and gains exactly one closed link: " [[Name]]"
        assert after.startswith(c["line_before"] + " [["), (after, item)
        name = after[len(c["line_before"]) + 3 :]
        assert name.endswith("]]") and "]]]]" not in after, (after, item)
        assert name[:-2] and "[" not in name and "]" not in name[:-2], (after, item)
        assert after.count("]]") == line.count("]]") + 1, (after, item)
    labels = [i["label"] for i in items]
    assert COMPLETION_TITLE not in labels[:FIRST_ITEMS], labels


def test_completion_items_name_their_relation(session: dict[str, Any]) -> None:
    items = items_of(session["completion"]["empty"])
    for item in items:
        rel = relation(item)
        assert rel in RELATIONS, item
        assert item["labelDetails"]["description"] == item["detail"], item
        assert item["kind"] == 17, item  # CompletionItemKind.File
    by_label = {i["label"]: relation(i) for i in items}
    # the cards this card links to are marked "linked" (and come after the others)
    for title in COMPLETION_LINKED:
        assert by_label.get(title) == "linked", (title, by_label)
    if COMPLETION_TITLE in by_label:
        assert by_label[COMPLETION_TITLE] == "this card", by_label
    ranks = [relation(i) in ("linked", "this card") for i in items]
    assert ranks == sorted(ranks), [(i["label"], relation(i)) for i in items]
    # Neovim does not resolve documentation lazily: it comes with each item
    assert all(i.get("documentation", {}).get("kind") == "markdown" for i in items), items[0]


def test_completion_with_letters_typed_puts_the_match_first(session: dict[str, Any]) -> None:
    c = session["completion"]
    assert c.get("typed_error") is None, c["typed_error"] + context(session, "completion")
    items = items_of(c["typed"])
    first = items[0]
    assert first["label"] == TYPED_TARGET, [i["label"] for i in items]
    typed_line = c["line_before"] + " [[" + TYPED
    want = c["line_before"] + f" [[{TYPED_TARGET}]]"
    assert apply_edit(typed_line, first["textEdit"]) == want, first
    # vim.lsp.util.apply_text_edits put the link in the buffer
    assert c["applied_line"] == want


def test_completion_replaces_brackets_the_editor_closed(session: dict[str, Any]) -> None:
    c = session["completion"]
    assert c.get("closed_error") is None, c["closed_error"] + context(session, "completion")
    assert c["closed_line"] == c["line_before"] + f" [[{TYPED}]]"
    items = items_of(c["closed"])
    assert items[0]["label"] == TYPED_TARGET, [i["label"] for i in items]
    for item in items:
        after = apply_edit(c["closed_line"], item["textEdit"])
        assert "]]]]" not in after and after.count("]]") == 1, (after, item)
        assert after.endswith("]]"), (after, item)
    assert c["closed_applied_line"] == c["line_before"] + f" [[{TYPED_TARGET}]]"


# ------------------------------------------------------------------ diagnostics


def test_unresolved_link_is_pushed_then_cleared(session: dict[str, Any]) -> None:
    s = session.get("scratch")
    assert s is not None, context(session, "diagnostics")
    assert s["uri"].endswith("/Scratch%20note.md"), s["uri"]
    assert uri_path(s["uri"]) == Path(session["vault"]) / SCRATCH_CARD
    assert s["appeared"], f"no diagnostic in {s['appeared_ms']:.0f} ms" + context(
        session, "diagnostics"
    )
    text = "\n".join(SCRATCH_LINES)
    link = f"[[{MISSING}]]"
    line = SCRATCH_LINES[2]
    # vim.diagnostic: byte columns (Neovim converted the server's UTF-16 range)
    byte_col = len(line[: line.index(link)].encode("utf-8"))
    assert s["before"] == [
        {
            "lnum": 2,
            "col": byte_col,
            "end_lnum": 2,
            "end_col": byte_col + len(link.encode("utf-8")),
            "message": f"No card named «{MISSING}»",
            "source": "zettel-lsp",
            "severity": 2,  # Warning, the default of diagnosticsUnresolved
            "code": "unresolved-link",
        }
    ], s["before"]
    # what the server sent: UTF-16 columns (the 🍞 before the link counts 2)
    published = s["published_before"]
    assert published and published[-1], published
    (sent,) = published[-1]
    start = utf16_position(text, link)
    end = {"line": start["line"], "character": start["character"] + len(link)}
    assert sent["range"] == {"start": start, "end": end}, sent
    # the card written to disk resolves the link: the server pushes an empty list
    assert s["cleared"], f"still {s['after']} after {s['cleared_ms']:.0f} ms" + context(
        session, "diagnostics"
    )
    assert s["after"] == []


# ------------------------------------------------------------------ rename


def test_prepare_rename_on_a_link(session: dict[str, Any]) -> None:
    r = session.get("rename")
    assert r is not None, context(session, "rename")
    assert r.get("prepare_error") is None, r["prepare_error"]
    prepare = r["prepare"]
    assert isinstance(prepare, dict), prepare
    pos = session["rename_pos"]
    name_start = pos["character"] - 2  # just after "[["
    want = {
        "start": {"line": pos["line"], "character": name_start},
        "end": {"line": pos["line"], "character": name_start + len("Dense embeddings")},
    }
    assert prepare["range"] == want, prepare
    assert prepare["placeholder"] == "Dense embeddings"


def test_rename_moves_the_card_and_rewrites_its_links(session: dict[str, Any]) -> None:
    r = session.get("rename")
    assert r is not None, context(session, "rename")
    assert r.get("edit_error") is None, r["edit_error"] + context(session, "rename")
    edit = r["edit"]
    vault = Path(session["vault"])
    changes = edit["documentChanges"]
    # the text edits come first, then the move
    assert [c.get("kind") for c in changes] == [None] * (len(changes) - 1) + ["rename"], changes
    assert uri_path(changes[-1]["oldUri"]) == vault / OLD_CARD, changes[-1]
    assert uri_path(changes[-1]["newUri"]) == vault / NEW_CARD, changes[-1]
    edited = {uri_path(c["textDocument"]["uri"]) for c in changes[:-1]}
    backlinks: dict[str, str] = session["backlinks"]
    assert edited == {vault / rel for rel in [*backlinks, OLD_CARD]}, sorted(edited)
    assert r.get("apply_error") is None, r["apply_error"]
    assert r.get("wall_error") is None, r["wall_error"]
    assert r["modified_after_wall"] == [], r["modified_after_wall"]
    assert not (vault / OLD_CARD).exists()
    assert (vault / NEW_CARD).is_file()
    # the card's H1 repeated its file name: it follows the new name, nothing else changed
    old_text = session["old_card_text"]
    assert old_text.count("\n# Dense embeddings\n") == 1
    new_text = (vault / NEW_CARD).read_text(encoding="utf-8")
    assert new_text == old_text.replace("\n# Dense embeddings\n", f"\n# {NEW_NAME}\n")
    # every card that linked to the old name now links to the new one, alias kept
    assert len(backlinks) >= 5, sorted(backlinks)
    old_link = re.compile(r"\[\[Dense embeddings(\|[^\]]*)?\]\]")
    for rel, before in backlinks.items():
        path = vault / (NEW_CARD if rel == OLD_CARD else rel)
        now = path.read_text(encoding="utf-8")
        assert "[[Dense embeddings" not in now, (rel, now)
        want = old_link.sub(lambda m: f"[[{NEW_NAME}{m.group(1) or ''}]]", before)
        assert now == want, (rel, now)
    assert f"[[{NEW_NAME}]]" in (vault / RENAME_FROM).read_text(encoding="utf-8")
    assert "[[Dense embeddings" not in "".join(
        p.read_text(encoding="utf-8") for p in vault.rglob("*.md")
    )
