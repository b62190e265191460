/**
 * The Search view's script (runs in the webview, bundled to dist/webview/search.js).
 *
 * Two modes behind a tab list ("Search | Ask"; Left/Right switch). Search is a thin shell: it
 * debounces typing, numbers each query and shows only the answer to the newest one, renders the
 * list with lib/results (all text escaped there), and handles the keyboard: Down from the box
 * enters the list, Up/Down/Home/End move, Enter opens, Escape goes back to the box (and clears
 * it when already there). Typing searches without the optional LLM steps; when the user turned
 * them on, Enter runs them first (a second Enter opens the first result). Ask is ask.ts.
 */

import { Debouncer, ReplyFilter } from "../lib/latest";
import type { FromWebview, Mode, ToWebview } from "../lib/messages";
import { renderItemsHtml, summaryText, type ResultItem } from "../lib/results";
import { AskPanel } from "./ask";

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const DEBOUNCE_MS = 150;

const vscode = acquireVsCodeApi();

function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el as T;
}

const input = byId<HTMLInputElement>("query");
const box = byId<HTMLElement>("box");
const list = byId<HTMLUListElement>("results");
const summary = byId<HTMLElement>("summary");
const note = byId<HTMLElement>("note");
const server = byId<HTMLElement>("server");
const tabs: Record<Mode, HTMLButtonElement> = {
  search: byId<HTMLButtonElement>("tab-search"),
  ask: byId<HTMLButtonElement>("tab-ask"),
};
const panels: Record<Mode, HTMLElement> = {
  search: byId<HTMLElement>("search-panel"),
  ask: byId<HTMLElement>("ask-panel"),
};

const replies = new ReplyFilter();
let items: ResultItem[] = [];
/** The request whose answer is on screen (`open` names it, so the host finds the right list). */
let shownSeq = 0;
let selected = -1;
/** Enter was pressed before the answer to the current text arrived: open its first result. */
let openWhenAnswered = false;
/** The answer on screen is partial or an error: worth asking again on "refresh". */
let incomplete = false;
/** Enter in the box runs LLM steps (`zettel.expandQuery` or `zettel.llmRerank` is on). */
let llmSearch = false;
/** One line per result (`zettel.searchView.compact`). */
let compact = false;
/** What the last search sent (the list on screen answers it once `busy` is off). */
let lastSent = { query: "", llm: false };

interface SavedState {
  query: string;
  question: string;
  mode: Mode;
}
const saved = readState(vscode.getState());
let mode: Mode = saved.mode;

function readState(state: unknown): SavedState {
  const s = typeof state === "object" && state !== null ? (state as Record<string, unknown>) : {};
  return {
    query: typeof s.query === "string" ? s.query : "",
    question: typeof s.question === "string" ? s.question : "",
    mode: s.mode === "ask" ? "ask" : "search",
  };
}

function saveState(): void {
  vscode.setState({ query: input.value, question: ask.question, mode } satisfies SavedState);
}

function send(message: FromWebview): void {
  vscode.postMessage(message);
}

const ask = new AskPanel(send, () => saveState());

function search(query: string, llm = false): void {
  saveState();
  const seq = replies.next();
  lastSent = { query, llm };
  if (!query.trim()) {
    // Nothing to ask: clear at once, and make any answer still on its way stale.
    show(seq, [], "", "");
    box.classList.remove("busy");
    return;
  }
  box.classList.add("busy");
  send({ type: "search", seq, query, llm });
}

const debounced = new Debouncer<string>(DEBOUNCE_MS, (query) => search(query));

/** The list on screen came from a search with the LLM steps, for the text in the box. */
function showingLlmResults(): boolean {
  return lastSent.llm && lastSent.query === input.value && !box.classList.contains("busy");
}

function setMode(next: Mode, focus: boolean): void {
  mode = next;
  for (const m of ["search", "ask"] as const) {
    const on = m === next;
    tabs[m].setAttribute("aria-selected", on ? "true" : "false");
    tabs[m].tabIndex = on ? 0 : -1;
    panels[m].hidden = !on;
  }
  saveState();
  if (focus) {
    if (next === "ask") ask.focus();
    else input.focus();
  }
}

for (const m of ["search", "ask"] as const) {
  tabs[m].addEventListener("click", () => setMode(m, true));
  tabs[m].addEventListener("keydown", (e) => {
    if (e.key === "ArrowLeft" || e.key === "ArrowRight" || e.key === "Home" || e.key === "End") {
      e.preventDefault();
      const other: Mode = m === "search" ? "ask" : "search";
      const next: Mode = e.key === "Home" ? "search" : e.key === "End" ? "ask" : other;
      setMode(next, false);
      tabs[next].focus();
    }
  });
}

function show(seq: number, newItems: ResultItem[], summaryLine: string, noteLine: string): void {
  shownSeq = seq;
  items = newItems;
  selected = items.length > 0 ? 0 : -1;
  list.innerHTML = renderItemsHtml(items, selected, { compact });
  input.setAttribute("aria-expanded", items.length > 0 ? "true" : "false");
  updateActiveDescendant();
  summary.textContent = summaryLine;
  note.textContent = noteLine;
  note.hidden = noteLine === "";
}

function select(index: number, focus: boolean): void {
  if (items.length === 0) return;
  selected = Math.max(0, Math.min(items.length - 1, index));
  list.querySelectorAll<HTMLElement>("li.result").forEach((li, i) => {
    const on = i === selected;
    li.classList.toggle("selected", on);
    li.setAttribute("aria-selected", on ? "true" : "false");
    li.tabIndex = on ? 0 : -1;
    if (on) {
      li.scrollIntoView({ block: "nearest" });
      if (focus) li.focus();
    }
  });
  updateActiveDescendant();
}

function updateActiveDescendant(): void {
  if (selected >= 0) input.setAttribute("aria-activedescendant", `result-${selected}`);
  else input.removeAttribute("aria-activedescendant");
}

function open(index: number, preserveFocus = false): void {
  if (index < 0 || index >= items.length) return;
  send({ type: "open", seq: shownSeq, index, preserveFocus });
}

input.addEventListener("input", () => {
  openWhenAnswered = false;
  debounced.call(input.value);
});

input.addEventListener("keydown", (e) => {
  switch (e.key) {
    case "ArrowDown":
      e.preventDefault();
      select(selected < 0 ? 0 : selected, true);
      break;
    case "Enter":
      e.preventDefault();
      if (llmSearch && input.value.trim() && !showingLlmResults()) {
        // Search again with the LLM steps (query expansion, LLM rerank); the next Enter opens.
        debounced.cancel();
        openWhenAnswered = false;
        search(input.value, true);
      } else if (debounced.isPending) {
        // The list on screen is for older text: search now and open when the answer comes.
        openWhenAnswered = true;
        debounced.flush();
      } else if (items.length > 0) {
        open(Math.max(0, selected));
      }
      break;
    case "Escape":
      if (input.value) {
        e.preventDefault();
        input.value = "";
        debounced.cancel();
        search("");
      }
      break;
  }
});

list.addEventListener("keydown", (e) => {
  switch (e.key) {
    case "ArrowDown":
      e.preventDefault();
      select(selected + 1, true);
      break;
    case "ArrowUp":
      e.preventDefault();
      if (selected <= 0) input.focus();
      else select(selected - 1, true);
      break;
    case "Home":
      e.preventDefault();
      select(0, true);
      break;
    case "End":
      e.preventDefault();
      select(items.length - 1, true);
      break;
    case "Enter":
    case " ":
      e.preventDefault();
      open(selected);
      break;
    case "Escape":
      e.preventDefault();
      input.focus();
      input.select();
      break;
    default:
      // Typing in the list goes to the box.
      if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) input.focus();
  }
});

function indexOf(target: EventTarget | null): number {
  const li = target instanceof Element ? target.closest<HTMLElement>("li.result") : null;
  return li ? Number(li.dataset.index) : -1;
}

list.addEventListener("click", (e) => {
  const i = indexOf(e.target);
  if (i >= 0) {
    select(i, false);
    open(i);
  }
});

window.addEventListener("message", (event: MessageEvent<ToWebview>) => {
  const msg = event.data;
  switch (msg.type) {
    case "results": {
      if (!replies.accepts(msg.seq)) return; // an answer to older text
      box.classList.remove("busy");
      const m = msg.model;
      incomplete = m.partial;
      let line = summaryText(m);
      if (line && llmSearch) line += lastSent.llm ? " · with the LLM steps" : " · Enter: refine with the LLM";
      show(msg.seq, m.items, line, m.partial ? `Partial results: ${m.note}` : m.note);
      if (openWhenAnswered) {
        openWhenAnswered = false;
        open(0);
      }
      break;
    }
    case "error":
      if (!replies.accepts(msg.seq)) return;
      box.classList.remove("busy");
      openWhenAnswered = false;
      incomplete = true;
      show(msg.seq, [], "", msg.message);
      break;
    case "focus":
      setMode("search", false);
      if (msg.query !== undefined && msg.query !== input.value) {
        input.value = msg.query;
        debounced.call(input.value);
      }
      input.focus();
      input.select();
      break;
    case "focusAsk":
      setMode("ask", false);
      ask.focus(msg.question);
      break;
    case "config":
      llmSearch = msg.llmSearch;
      if (msg.compact !== compact) {
        compact = msg.compact;
        document.body.classList.toggle("compact", compact);
        // The same list, one line per result (or back), with the selection and focus kept.
        const focused = list.contains(document.activeElement);
        list.innerHTML = renderItemsHtml(items, selected, { compact });
        if (selected >= 0) select(selected, focused);
      }
      break;
    case "askDelta":
    case "askDone":
    case "askStopped":
    case "askError":
      ask.handle(msg);
      break;
    case "server":
      server.textContent = msg.message;
      server.hidden = msg.message === "";
      break;
    case "refresh":
      // Only an incomplete answer is worth asking again (a complete one would just lose the
      // selection), and not while typing: the pending search will ask anyway.
      if (incomplete && input.value.trim() && !debounced.isPending) search(input.value);
      break;
  }
});

// Restore the last query, question and mode when the view is shown again.
send({ type: "ready" });
ask.restore(saved.question);
setMode(saved.mode, false);
if (saved.query) {
  input.value = saved.query;
  search(saved.query);
}
if (mode === "ask") ask.focus();
else input.focus();
