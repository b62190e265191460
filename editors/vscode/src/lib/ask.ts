/**
 * The Ask box's logic, without `vscode` or the DOM (shared by the extension host, the webview
 * and the unit tests):
 *
 * - {@link AskStreams}: the server streams an answer as `zettel/askDelta` `{token, delta}`
 *   notifications; each request gets a fresh token, and the pieces go to the request that
 *   owns it (late pieces, for a request that ended or was stopped, are dropped).
 * - {@link toAskModel}: `zettel.ask`'s answer -> what the view shows (sources with folder,
 *   score and highlighted excerpt, the fallback notice, the status line).
 * - {@link renderAnswerHtml}: the answer as escaped HTML with line breaks kept and a little
 *   Markdown (`**bold**`, `` `code` ``); citations like `[Title]` of a source become buttons
 *   that open it.
 */

import { escapeHtml, highlightHtml, queryTerms } from "./highlight";
import type { AskAnswer } from "./protocol";
import { breadcrumbOf, excerptHtmlOf, excerptOf, folderHtml, folderOf } from "./results";

/** The notification the server streams an answer with. */
export const ASK_DELTA_METHOD = "zettel/askDelta";

export interface AskDelta {
  token: string;
  delta: string;
}

/** A `zettel/askDelta` notification's params, or undefined when malformed. */
export function parseAskDelta(value: unknown): AskDelta | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  // The server echoes the token it was given; ours are strings, but accept a number too.
  const token = typeof v.token === "string" ? v.token : typeof v.token === "number" ? String(v.token) : "";
  if (!token || typeof v.delta !== "string") return undefined;
  return { token, delta: v.delta };
}

/** Routes streamed pieces of answers to the request that owns their token. */
export class AskStreams {
  private readonly listeners = new Map<string, (delta: string) => void>();

  /** Send `token`'s pieces to `onDelta` until the returned function is called. */
  listen(token: string, onDelta: (delta: string) => void): () => void {
    this.listeners.set(token, onDelta);
    return () => {
      if (this.listeners.get(token) === onDelta) this.listeners.delete(token);
    };
  }

  /**
   * Deliver a notification's params. False when they are malformed or for no open request
   * (a piece that arrives after its request ended or was stopped is dropped).
   */
  deliver(params: unknown): boolean {
    const d = parseAskDelta(params);
    if (!d || d.delta === "") return false;
    const listener = this.listeners.get(d.token);
    if (!listener) return false;
    listener(d.delta);
    return true;
  }

  /** Requests still listening. */
  get open(): number {
    return this.listeners.size;
  }

  clear(): void {
    this.listeners.clear();
  }
}

/** A fresh token for one `zettel.ask` request (`random` e.g. crypto.randomUUID). */
export function askToken(random: () => string): string {
  return `zettel-ask-${random()}`;
}

/** One source of an answer, as the view shows it. */
export interface SourceItem {
  title: string;
  /** Folder inside the vault, or the vault's name for a note at its top level. */
  folder: string;
  path: string;
  score: number;
  /** "0.057" */
  scoreText: string;
  /** The heading path as a breadcrumb (servers that send the source's `heading`), or "". */
  breadcrumb: string;
  breadcrumbHtml: string;
  excerpt: string;
  /** The excerpt as escaped HTML with the question's words in `<mark>`. */
  excerptHtml: string;
  uri: string;
  lineStart: number;
  lineEnd: number;
}

export interface AskModel {
  question: string;
  answer: string;
  model: string;
  sources: SourceItem[];
  /** Why the model could not (fully) answer; "" when it did. */
  fallback: string;
  /** Skipped LLM steps and other notes. */
  messages: string[];
  cancelled: boolean;
}

export function scoreText(score: number): string {
  if (!Number.isFinite(score)) return "";
  return score >= 10 ? score.toFixed(1) : score.toFixed(3);
}

export function toAskModel(answer: AskAnswer): AskModel {
  const terms = queryTerms(answer.question);
  return {
    question: answer.question,
    answer: answer.answer,
    model: answer.model,
    sources: answer.sources.map((s) => {
      // As in the Search view: the server's readable text when it sends one, whole words.
      const excerpt = excerptOf(s);
      const breadcrumb = breadcrumbOf(s.heading);
      return {
        title: s.title,
        folder: folderOf({ path: s.path, vault: answer.vault, folder: s.folder }),
        path: s.path,
        score: s.score,
        scoreText: scoreText(s.score),
        breadcrumb,
        breadcrumbHtml: highlightHtml(breadcrumb, terms),
        excerpt,
        excerptHtml: excerptHtmlOf(excerpt, terms),
        uri: s.uri,
        lineStart: s.line_start,
        lineEnd: s.line_end,
      };
    }),
    fallback: answer.fallback ?? "",
    messages: answer.messages,
    cancelled: answer.cancelled,
  };
}

/** The text to show as the answer: the final one, or what streamed when there is none. */
export function finalAnswer(model: Pick<AskModel, "answer">, streamed: string): string {
  return model.answer.trim() ? model.answer : streamed;
}

export type AskPhase = "asking" | "answered" | "stopped" | "failed";

/** The line above the answer: what is going on, and who answered. */
export function askStatusText(
  phase: AskPhase,
  model?: Pick<AskModel, "model" | "sources" | "answer" | "fallback">,
): string {
  const n = model?.sources.length ?? 0;
  const notes = `${n} note${n === 1 ? "" : "s"}`;
  switch (phase) {
    case "asking":
      return "Asking…";
    case "stopped":
      return "Stopped.";
    case "failed":
      return "";
    case "answered":
      if (!model) return "";
      if (!model.answer.trim()) return n ? `No answer; ${notes} retrieved` : "No answer";
      return model.model ? `Answered by ${model.model} from ${notes}` : `Answered from ${notes}`;
  }
}

/** The heading over the list: "Sources" when the model used them, else what they are. */
export function sourcesHeading(model: Pick<AskModel, "answer" | "sources">): string {
  if (model.sources.length === 0) return "";
  return model.answer.trim() ? "Sources" : "Retrieved notes";
}

/** Index of the source a citation names (`[Title]`, case and spacing ignored), or -1. */
export function citedSource(text: string, titles: readonly string[]): number {
  const key = normalizeTitle(text);
  return key ? titles.findIndex((t) => normalizeTitle(t) === key) : -1;
}

function normalizeTitle(text: string): string {
  return text.trim().replace(/\s+/g, " ").toLowerCase();
}

// `code`, **bold**, [Title] or [[Title]] / [[Title|alias]] (models sometimes echo wiki links).
const INLINE = /`([^`\n]+)`|\*\*(?=\S)([^*\n]+?)\*\*|\[\[([^[\]\n]{1,200})\]\]|\[([^[\]\n]{1,200})\]/g;

function renderInline(text: string, titles: readonly string[], bold: boolean): string {
  let out = "";
  let at = 0;
  for (const m of text.matchAll(INLINE)) {
    const start = m.index ?? 0;
    out += escapeHtml(text.slice(at, start));
    at = start + m[0].length;
    const [whole, code, strong, wiki, cite] = m;
    if (code !== undefined) {
      out += `<code>${escapeHtml(code)}</code>`;
    } else if (strong !== undefined) {
      out += bold ? `<strong>${renderInline(strong, titles, false)}</strong>` : escapeHtml(whole);
    } else {
      const name = wiki !== undefined ? (wiki.split("|")[0] ?? wiki) : (cite ?? "");
      const i = citedSource(name, titles);
      out +=
        i >= 0
          ? `<button type="button" class="cite" data-source="${i}" title="Open ${escapeHtml(
              titles[i] ?? name,
            )}">${escapeHtml(whole)}</button>`
          : escapeHtml(whole);
    }
  }
  return out + escapeHtml(text.slice(at));
}

/**
 * The answer as HTML for a `white-space: pre-wrap` element: everything escaped, line breaks
 * kept as they are, `**bold**` and `` `code` `` marked up, and citations of `titles` (the
 * sources, by index) as buttons with `data-source`. Unfinished markup (while streaming) stays
 * plain text until it is closed.
 */
export function renderAnswerHtml(text: string, titles: readonly string[] = []): string {
  return text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => renderInline(line, titles, true))
    .join("\n");
}

/** The sources' list: one `<li role="option">` per source, `data-index` for events. */
export function renderSourcesHtml(items: readonly SourceItem[], selected: number): string {
  return items
    .map((item, i) => {
      const on = i === selected;
      return (
        `<li id="source-${i}" class="source${on ? " selected" : ""}" role="option" ` +
        `aria-selected="${on ? "true" : "false"}" tabindex="${on ? "0" : "-1"}" data-index="${i}">` +
        `<div class="line1"><span class="num">${i + 1}</span>` +
        `<span class="title">${escapeHtml(item.title)}</span>` +
        folderHtml(item.folder) +
        (item.scoreText
          ? `<span class="score" title="retrieval score">${escapeHtml(item.scoreText)}</span>`
          : "") +
        `</div>` +
        `<div class="excerpt">${item.breadcrumb ? `<span class="crumb">${item.breadcrumbHtml}</span> ` : ""}` +
        `${item.excerptHtml}</div>` +
        `</li>`
      );
    })
    .join("");
}
