/**
 * Server rows -> what the Search and Related views show: title, folder, the matching heading as
 * a breadcrumb, the excerpt as a reader sees it (link text, table rows as cells) with the query's
 * words highlighted, badges. Also renders the Search view's result list as an HTML string
 * (escaped throughout), so the webview script stays a thin shell that can be tested without a
 * browser.
 *
 * Layout (media/search.css): the title comes first and keeps its width; the folder gets what is
 * left, dimmed and shortened from the left ("…Knowledge/Colour Theory"), so a title is cut only
 * when it alone is wider than the row. Compact mode: one line per result (title and folder), the
 * rest in the tooltip.
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
  /** The note's path inside its vault (the tooltip). */
  path: string;
  heading: string;
  /** The heading path as a breadcrumb ("Colour Theory › Primaries"); "" before any heading. */
  breadcrumb: string;
  /** The breadcrumb as escaped HTML with the query's words in `<mark>`. */
  breadcrumbHtml: string;
  /** The excerpt as a reader sees it: table rows on their own lines, cells between " │ ". */
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

/**
 * A folder shortened from the left to its last `keep` folders ("…/Creativity and Arts/Colour
 * Theory"), for lists that cut text at its end (the Related view's descriptions).
 */
export function shortFolder(folder: string, keep = 2): string {
  const parts = folder.split("/");
  return parts.length > keep ? `…/${parts.slice(-keep).join("/")}` : folder;
}

/**
 * The card's folder inside its vault, or the vault's own name for a top-level card: the server's
 * `folder` when it sends one (the same in every view), else worked out from the path.
 */
export function folderOf(row: Pick<SearchRow, "path" | "vault" | "folder">): string {
  if (row.folder !== undefined) return row.folder;
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
  // No leg found it: it came in through links to and from the top results (the server's and
  // the CLI's "via links"), or it is among the most-linked cards for an empty query.
  const credit = row.graph?.credit;
  if (legs.length === 0) {
    badges.push({ label: "via links", title: "found only through links to and from the top results", kind: "graph" });
  } else if (credit !== undefined && credit > 0) {
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

/** Between the cells of a table row in a readable excerpt (the server's `CELL_SEPARATOR`). */
export const CELL_SEPARATOR = " │ ";

const WIKILINK = /(!?)\[\[([^[\]\n]+?)\]\]/g;
const MEDIA = /\.(?:png|jpe?g|gif|svg|webp|bmp|avif|pdf|excalidraw|mp[34]|mov|webm|ogg|wav|m4a)$/i;
// [text](destination "title"), ![alt](image): the text may hold escapes and one level of [..].
const MARKDOWN_LINK =
  /!?\[((?:[^[\]\n\\]|\\.|\[[^[\]\n]*\])*)\]\([ \t]*(?:<[^<>\n]*>|(?:[^\s()\\<]|\\.|\([^\s()]*\))+)(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'))?[ \t]*\)/g;
// |---|:--:| in an excerpt flattened to one line.
const TABLE_SEPARATOR = /\|(?:\s*:?-+:?\s*\|)+/g;
const PIPES = /\s*(?:\\?\|\s*)+/g;
const PAIRED_MARKS = /(\*\*|__|~~|==)(?=\S)(.+?)(?<=\S)\1/g;

function shownWikilink(bang: string, inner: string): string {
  const bar = inner.indexOf("|");
  let target = bar < 0 ? inner : inner.slice(0, bar);
  const label = bar < 0 ? "" : inner.slice(bar + 1).trim();
  if (target.endsWith("\\")) target = target.slice(0, -1); // [[a\|b]] inside a table
  const name = (target.split("#")[0] ?? "").trim();
  if (bang && MEDIA.test(name)) return ""; // an embedded picture: nothing to read
  return label || name || target.trim();
}

/** Where the server cut its excerpt out of a longer text (at a character count). */
const CUT = "…";
// A window that starts or ends inside a link: "…ne similarity]] and", "…dings|dense]] list",
// "…retrieval](https://x) and"; "see [[Dense embed…", "the [paper](https://exa…".
const CUT_WIKILINK_HEAD = /^…([^[\]\n]*?)\]\]/;
const CUT_WIKILINK_TAIL = /(!?)\[\[([^[\]\n]*)…$/;
const CUT_MARKDOWN_LINK_HEAD = /^…([^[\]\n]*?)\]\([^()\s]*\)/;
const CUT_MARKDOWN_LINK_TAIL = /(!?)\[([^[\]\n]*)\]\([^()\s]*…$/;

/** The text of a link the excerpt's window cut: its label (after `|`) or its target. */
function cutLinkText(inner: string): string {
  const bar = inner.lastIndexOf("|");
  if (bar >= 0) return inner.slice(bar + 1).trim();
  return (inner.split("#")[0] ?? "").replace(/\\$/, "");
}

/** A raw excerpt whose window was cut inside a link, with the link's text instead of its syntax. */
function withoutCutLinks(excerpt: string): string {
  return (
    excerpt
      // A label after `|` is whole: the space keeps withoutCutWords from dropping its first word.
      .replace(CUT_WIKILINK_HEAD, (_m, inner: string) =>
        inner.includes("|") ? `${CUT} ${cutLinkText(inner)}` : `${CUT}${cutLinkText(inner)}`,
      )
      .replace(CUT_MARKDOWN_LINK_HEAD, (_m, text: string) => `${CUT}${text}`)
      .replace(CUT_WIKILINK_TAIL, (_m, bang: string, inner: string) => (bang ? CUT : `${cutLinkText(inner)}${CUT}`))
      .replace(CUT_MARKDOWN_LINK_TAIL, (_m, bang: string, text: string) => (bang ? CUT : `${text.trim()}${CUT}`))
  );
}

/**
 * An excerpt without the piece of a word at its cut start: the server cuts its window at a
 * character count ("…epts Test Coverage"), a reader expects whole words ("…Test Coverage"). No
 * query word is lost: the window starts well before the first one. (The end stays: a word there
 * may be a query word, and the view's two-line clamp cuts it anyway.)
 */
export function withoutCutWords(text: string): string {
  if (!text.startsWith(CUT)) return text;
  const rest = text.slice(CUT.length);
  const piece = /^\S*\s+/.exec(rest);
  return piece && piece[0].length <= 40 && rest.length > piece[0].length ? CUT + rest.slice(piece[0].length) : text;
}

/**
 * A raw excerpt (Markdown flattened to one line, as older servers send only `excerpt`) as a
 * reader sees it: `[[a|b]]` -> b, `[[a#h]]` -> a, `[t](u)` -> t, `**b**` -> b (also a link cut
 * by the excerpt's window: "…ne similarity]]" -> "…ne similarity"); in a table, the separator row
 * dropped and the pipes shown as cell separators.
 */
export function readableExcerpt(excerpt: string): string {
  let s = withoutCutLinks(excerpt)
    .replace(WIKILINK, (_m, bang: string, inner: string) => shownWikilink(bang, inner))
    .replace(MARKDOWN_LINK, (_m, text: string) => text.trim())
    .replace(PAIRED_MARKS, "$2");
  const table = /\|\s*:?-+:?\s*\|/.test(s) || /^\s*\|/.test(s);
  if (table) {
    s = s.replace(TABLE_SEPARATOR, " ").replace(PIPES, CELL_SEPARATOR);
    // No separator before the first cell or after the last one.
    while (s.startsWith(CELL_SEPARATOR)) s = s.slice(CELL_SEPARATOR.length);
    while (s.endsWith(CELL_SEPARATOR)) s = s.slice(0, -CELL_SEPARATOR.length);
  }
  return s.replace(/[ \t]+/g, " ").trim();
}

/** " > "-joined heading path -> "A › B". */
export function breadcrumbOf(heading: string): string {
  return heading
    .split(" > ")
    .map((h) => readableExcerpt(h))
    .filter(Boolean)
    .join(" › ");
}

/** What a row's excerpt shows: the server's readable text, or the raw excerpt made readable
 * (without the leading heading, which the breadcrumb shows); a whole word after a cut start. */
export function excerptOf(row: Pick<SearchRow, "excerpt" | "excerpt_text" | "heading">): string {
  if (row.excerpt_text !== undefined) return withoutCutWords(row.excerpt_text);
  let text = readableExcerpt(row.excerpt);
  const parts = row.heading.split(" > ");
  const last = readableExcerpt(parts[parts.length - 1] ?? "");
  if (last && text.startsWith(last)) text = text.slice(last.length).trimStart();
  return withoutCutWords(text);
}

/** A readable excerpt as escaped HTML: query words in `<mark>`, table rows on their own lines
 * (`<br>`), cells between dimmed separators. */
export function excerptHtmlOf(text: string, terms: readonly string[]): string {
  return text
    .split("\n")
    .map((line) =>
      line
        .split(CELL_SEPARATOR)
        .map((cell) => highlightHtml(cell, terms))
        .join('<span class="cell-sep" aria-hidden="true"> │ </span>'),
    )
    .join("<br>");
}

export function toItem(row: SearchRow, terms: readonly string[]): ResultItem {
  const excerpt = excerptOf(row);
  const breadcrumb = breadcrumbOf(row.heading);
  return {
    title: row.title,
    folder: folderOf(row),
    path: row.path,
    heading: row.heading,
    breadcrumb,
    breadcrumbHtml: highlightHtml(breadcrumb, terms),
    excerpt,
    excerptHtml: excerptHtmlOf(excerpt, terms),
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

/**
 * The folder after a title: dimmed, shortened from the left by the style sheet (`direction:
 * rtl` on the span; the `<bdi>` keeps the path itself left to right).
 */
export function folderHtml(folder: string): string {
  return `<span class="folder"><bdi dir="ltr">${escapeHtml(folder)}</bdi></span>`;
}

export interface RenderOptions {
  /** One line per result (title and folder); the breadcrumb and excerpt go to the tooltip. */
  compact?: boolean;
}

/** The tooltip of a row: the title, where it is, and (compact) what the excerpt says. */
export function tooltipOf(item: ResultItem, compact = false): string {
  const where = item.path + (item.breadcrumb ? ` › ${item.breadcrumb}` : "");
  const lines = [item.title, where];
  if (compact && item.excerpt) lines.push("", item.excerpt.replace(/\n/g, " / "));
  return lines.join("\n");
}

/** The result list's inner HTML: one `<li role="option">` per item, `data-index` for events. */
export function renderItemsHtml(
  items: readonly ResultItem[],
  selected: number,
  options: RenderOptions = {},
): string {
  const compact = options.compact === true;
  return items
    .map((item, i) => {
      const id = `result-${i}`;
      const crumb = item.breadcrumb ? `<span class="crumb">${item.breadcrumbHtml}</span> ` : "";
      const body = compact
        ? ""
        : (crumb || item.excerptHtml ? `<div class="excerpt">${crumb}${item.excerptHtml}</div>` : "") +
          `<div class="badges">${item.badges.map(renderBadge).join("")}</div>`;
      return (
        `<li id="${id}" class="result${i === selected ? " selected" : ""}" role="option" ` +
        `aria-selected="${i === selected ? "true" : "false"}" tabindex="-1" data-index="${i}" ` +
        `title="${escapeHtml(tooltipOf(item, compact))}">` +
        `<div class="line1"><span class="title">${escapeHtml(item.title)}</span>` +
        `${folderHtml(item.folder)}</div>` +
        body +
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
