/**
 * Server rows -> what the Search and Related views show: title, folder, highlighted excerpt,
 * badges. Also renders the Search view's result list as an HTML string (escaped throughout), so
 * the webview script stays a thin shell that can be tested without a browser.
 */

import { escapeHtml, highlightHtml, queryTerms } from "./highlight";
import type { SearchAnswer, SearchRow } from "./protocol";

export interface Badge {
  label: string;
  /** Tooltip. */
  title: string;
  kind: "leg" | "relation" | "graph";
}

export interface ResultItem {
  title: string;
  /** Folder inside the vault ("retrieval/notes"), or the vault's name at its top level. */
  folder: string;
  heading: string;
  excerpt: string;
  /** The excerpt as escaped HTML with the query's words in `<mark>`. */
  excerptHtml: string;
  badges: Badge[];
  uri: string;
  lineStart: number;
  lineEnd: number;
}

export interface ResultsModel {
  query: string;
  items: ResultItem[];
  /**
   * Shown above the list: why the answer is partial (`complete: false`), or a message of an
   * optional LLM step that was skipped ("query expansion skipped: …").
   */
  note: string;
  partial: boolean;
}

/** How the legs are named for people (docs/server.md lists the legs). */
const LEG_LABELS: Record<string, string> = {
  dense: "meaning",
  bm25: "BM25",
  keyword: "keyword",
  title: "title",
  llm: "LLM",
};

const LEG_TITLES: Record<string, string> = {
  dense: "found by meaning (embeddings)",
  bm25: "found by BM25 (words, weighted)",
  keyword: "found by an exact keyword match",
  title: "found by its title or an alias",
  llm: "rated by the LLM rerank",
};

/** Legs of an expanded query's sub-queries: `q<i>:<leg>` (docs/llm.md). */
const SUB_QUERY_LEG = /^q(\d+):(.+)$/;

const RELATION_TITLES: Record<string, string> = {
  linked: "this note links to it",
  backlink: "it links to this note",
  "2 hops": "two links away",
  "not linked": "not linked yet: a candidate for a new link",
  "this card": "the note open in the editor",
};

export function lastSegment(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

/** The card's folder inside its vault, or the vault's own name for a top-level card. */
export function folderOf(row: Pick<SearchRow, "path" | "vault">): string {
  const slash = row.path.lastIndexOf("/");
  if (slash > 0) return row.path.slice(0, slash);
  return row.vault ? lastSegment(row.vault) : "";
}

export function badgesOf(row: SearchRow): Badge[] {
  const legs = Object.entries(row.legs).sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]));
  const badges: Badge[] = legs
    .filter(([leg]) => !SUB_QUERY_LEG.test(leg))
    .map(([leg, rank]) => ({
      label: LEG_LABELS[leg] ?? leg,
      title: `${LEG_TITLES[leg] ?? `found by the ${leg} search`} (rank ${rank})`,
      kind: "leg" as const,
    }));
  // Query expansion: one badge for all the sub-queries' legs that found it.
  const sub = legs.filter(([leg]) => SUB_QUERY_LEG.test(leg));
  if (sub.length > 0) {
    const found = sub.map(([leg, rank]) => {
      const [, q, name] = SUB_QUERY_LEG.exec(leg) ?? [];
      return `query ${q} ${LEG_LABELS[name ?? ""] ?? name} (rank ${rank})`;
    });
    badges.push({ label: "expanded", title: `found by an expanded query: ${found.join(", ")}`, kind: "leg" });
  }
  if (row.relation) {
    badges.unshift({
      label: row.relation,
      title: RELATION_TITLES[row.relation] ?? row.relation,
      kind: "relation",
    });
  }
  const credit = row.graph?.credit;
  if (credit !== undefined && credit > 0) {
    badges.push({ label: "links ↑", title: "ranked up: other results link to it", kind: "graph" });
  }
  const discount = row.graph?.discount;
  if (discount !== undefined && discount < 1) {
    badges.push({
      label: "mentions ↓",
      title: "ranked down: it mostly mentions the topic and links elsewhere for it",
      kind: "graph",
    });
  }
  return badges;
}

export function toItem(row: SearchRow, terms: readonly string[]): ResultItem {
  return {
    title: row.title,
    folder: folderOf(row),
    heading: row.heading,
    excerpt: row.excerpt,
    excerptHtml: highlightHtml(row.excerpt, terms),
    badges: badgesOf(row),
    uri: row.uri,
    lineStart: row.line_start,
    lineEnd: row.line_end,
  };
}

export function toResultsModel(answer: SearchAnswer, query: string = answer.query): ResultsModel {
  const terms = queryTerms(query);
  return {
    query,
    items: answer.results.map((r) => toItem(r, terms)),
    note: answer.complete ? answer.note : answer.note || "results are partial: the index is still being built",
    partial: !answer.complete,
  };
}

function renderBadge(b: Badge): string {
  return `<span class="badge badge-${b.kind}" title="${escapeHtml(b.title)}">${escapeHtml(b.label)}</span>`;
}

/** The result list's inner HTML: one `<li role="option">` per item, `data-index` for events. */
export function renderItemsHtml(items: readonly ResultItem[], selected: number): string {
  return items
    .map((item, i) => {
      const id = `result-${i}`;
      // The heading is not shown: the server's excerpt already starts with it.
      return (
        `<li id="${id}" class="result${i === selected ? " selected" : ""}" role="option" ` +
        `aria-selected="${i === selected ? "true" : "false"}" tabindex="-1" data-index="${i}">` +
        `<div class="line1"><span class="title">${escapeHtml(item.title)}</span>` +
        `<span class="folder">${escapeHtml(item.folder)}</span></div>` +
        `<div class="excerpt">${item.excerptHtml}</div>` +
        `<div class="badges">${item.badges.map(renderBadge).join("")}</div>` +
        `</li>`
      );
    })
    .join("");
}

/** The line above the list: "5 results", "no results", plus the partial-answer note. */
export function summaryText(model: ResultsModel): string {
  if (!model.query.trim()) return "";
  const n = model.items.length;
  return n === 0 ? "No results" : n === 1 ? "1 result" : `${n} results`;
}
