/**
 * The Search view's script (runs in the webview, bundled to dist/webview/search.js).
 *
 * A thin shell: it debounces typing, numbers each query and shows only the answer to the newest
 * one, renders the list with lib/results (all text escaped there), and handles the keyboard:
 * Down from the box enters the list, Up/Down/Home/End move, Enter opens, Escape goes back to
 * the box (and clears it when already there).
 */

import { Debouncer, ReplyFilter } from "../lib/latest";
import type { FromWebview, ToWebview } from "../lib/messages";
import { renderItemsHtml, summaryText, type ResultItem } from "../lib/results";

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

const replies = new ReplyFilter();
let items: ResultItem[] = [];
/** The request whose answer is on screen (`open` names it, so the host finds the right list). */
let shownSeq = 0;
let selected = -1;
/** Enter was pressed before the answer to the current text arrived: open its first result. */
let openWhenAnswered = false;
/** The answer on screen is partial or an error: worth asking again on "refresh". */
let incomplete = false;

function send(message: FromWebview): void {
  vscode.postMessage(message);
}

function search(query: string): void {
  vscode.setState({ query });
  const seq = replies.next();
  if (!query.trim()) {
    // Nothing to ask: clear at once, and make any answer still on its way stale.
    show(seq, [], "", "");
    box.classList.remove("busy");
    return;
  }
  box.classList.add("busy");
  send({ type: "search", seq, query });
}

const debounced = new Debouncer<string>(DEBOUNCE_MS, search);

function show(seq: number, newItems: ResultItem[], summaryLine: string, noteLine: string): void {
  shownSeq = seq;
  items = newItems;
  selected = items.length > 0 ? 0 : -1;
  list.innerHTML = renderItemsHtml(items, selected);
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
      if (debounced.isPending) {
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
      show(msg.seq, m.items, summaryText(m), m.partial ? `Partial results: ${m.note}` : "");
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
      if (msg.query !== undefined && msg.query !== input.value) {
        input.value = msg.query;
        debounced.call(input.value);
      }
      input.focus();
      input.select();
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

// Restore the last query when the view is shown again.
const state = vscode.getState();
const saved =
  typeof state === "object" && state !== null && "query" in state && typeof state.query === "string"
    ? state.query
    : "";
send({ type: "ready" });
if (saved) {
  input.value = saved;
  search(saved);
}
input.focus();
