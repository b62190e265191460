/**
 * The JSON that zettel-lsp's `zettel.*` commands return (see docs/server.md), with defensive
 * parsers: the answer crosses a process boundary, so every field is checked before a view uses
 * it and anything malformed is dropped rather than rendered as "undefined".
 *
 * No `vscode` import here: this module is shared by the extension host, the webview and tests.
 */

/** One search hit (`zettel.search`) or related note (`zettel.related`, which adds `relation`). */
export interface SearchRow {
  path: string;
  uri: string;
  vault: string;
  title: string;
  score: number;
  /** 0-based first line of the best chunk. */
  line_start: number;
  /** 0-based last line of the best chunk (inclusive). */
  line_end: number;
  heading: string;
  /** Up to 200 characters of the chunk as written (Markdown syntax flattened to one line). */
  excerpt: string;
  /**
   * The same excerpt as a reader sees it (newer servers): link text instead of link syntax, no
   * emphasis marks, each table row on its own line with its cells between " │ ", and without
   * the leading headings that `heading` names. Absent: `readableExcerpt(excerpt)`.
   */
  excerpt_text?: string;
  /** Which search legs found the card, and at which rank (1 = best). */
  legs: Record<string, number>;
  /** What the graph rerank did (`credit`, `discount`, `mention_share`), when it did something. */
  graph?: Record<string, number>;
  /** `zettel.related` only: linked, backlink, 2 hops, not linked. */
  relation?: string;
  /** The folder to show (newer servers): the card's folder, or the vault's name at its top. */
  folder?: string;
}

export interface SearchAnswer {
  query: string;
  results: SearchRow[];
  /** False until every vault is `ready`; `note` then says what is missing. */
  complete: boolean;
  note: string;
}

export type Phase =
  | "starting"
  | "syncing"
  | "graph"
  | "embedding"
  | "ready"
  | "read-only"
  | "failed";

export const PHASES: readonly Phase[] = [
  "starting",
  "syncing",
  "graph",
  "embedding",
  "ready",
  "read-only",
  "failed",
];

export interface VaultStatus {
  root: string;
  phase: Phase;
  complete: boolean;
  note: string;
  cards_in_graph: number;
  problems: string[];
  // Present once the index is open:
  cards?: number;
  chunks?: number;
  cards_embedded?: number;
  chunks_waiting_for_vectors?: number;
  model?: string;
  index_dir?: string;
  backend?: string;
  skipped?: Record<string, string>;
  // Search legs ready and the multilingual phase (issue #17):
  legs_ready?: string[];
  languages?: Record<string, number>;
  multilingual?: string;
  multilingual_scope?: string;
  cards_embedded_multilingual?: number;
  cards_waiting_for_multilingual?: number;
  multilingual_off_reason?: string;
  // The related-card suggestions' weights (issue #15): chosen on the vault's links, or default
  suggestion_weights?: string;
}

/** `zettel.status {ollama: true}`: whether Ollama answers, and whether it has the models. */
export interface OllamaStatus {
  reachable: boolean;
  host: string;
  models: string[];
  chat_model: string;
  chat_model_available: boolean;
  embed_model: string;
  embed_model_available: boolean;
  /** Why something does not work (not reachable, chat model not pulled); null when all is well. */
  message: string | null;
}

export interface ServerStatus {
  version: string;
  vaults: VaultStatus[];
  /** When asked for (`{ollama: true}`) or when a setting uses Ollama. */
  ollama?: OllamaStatus;
}

/** One note an answer was built from (`zettel.ask`'s `sources`, in prompt order). */
export interface AskSource {
  path: string;
  uri: string;
  title: string;
  chunk: number;
  /** 0-based first line of the chunk. */
  line_start: number;
  /** 0-based last line (inclusive). */
  line_end: number;
  score: number;
  excerpt: string;
  /** The excerpt as a reader sees it, as in a search row (when the server sends it). */
  excerpt_text?: string;
  /** The chunk's heading path (when the server sends it). */
  heading: string;
  /** The folder to show (newer servers), as in a search row. */
  folder?: string;
}

/** `zettel.ask`'s answer (docs/server.md, docs/llm.md). */
export interface AskAnswer {
  question: string;
  /** What the model said ("" when it could not answer; the text so far when cut off). */
  answer: string;
  model: string;
  sources: AskSource[];
  /** One line when the model could not (fully) answer ("Ollama at … is not reachable"). */
  fallback: string | null;
  /** LLM steps that were skipped, and notes ("no card matches the question"). */
  messages: string[];
  context_chunks: number;
  cancelled: boolean;
  vault: string;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown, fallback = ""): string {
  return typeof value === "string" ? value : fallback;
}

function num(value: unknown, fallback = 0): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function optNum(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function numberMap(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "number" && Number.isFinite(v)) out[k] = v;
    }
  }
  return out;
}

/** Where a row or a source points (path, uri, title, lines); undefined without a uri or a
 * title (it could not be opened or named). */
function location(
  value: Record<string, unknown>,
): { path: string; uri: string; title: string; line_start: number; line_end: number } | undefined {
  const uri = str(value.uri);
  const path = str(value.path);
  const title = str(value.title) || path;
  if (!uri || !title) return undefined;
  const lineStart = Math.max(0, Math.trunc(num(value.line_start)));
  return {
    path,
    uri,
    title,
    line_start: lineStart,
    line_end: Math.max(lineStart, Math.trunc(num(value.line_end, lineStart))),
  };
}

/** A result row, or undefined when it lacks what a view needs (a uri and a title). */
export function parseRow(value: unknown): SearchRow | undefined {
  const where = isObject(value) ? location(value) : undefined;
  if (!isObject(value) || !where) return undefined;
  const row: SearchRow = {
    ...where,
    vault: str(value.vault),
    score: num(value.score),
    heading: str(value.heading),
    excerpt: str(value.excerpt),
    legs: numberMap(value.legs),
  };
  if (typeof value.excerpt_text === "string") row.excerpt_text = value.excerpt_text;
  if (isObject(value.graph)) row.graph = numberMap(value.graph);
  if (typeof value.relation === "string" && value.relation) row.relation = value.relation;
  if (typeof value.folder === "string") row.folder = value.folder;
  return row;
}

export function parseRows(value: unknown): SearchRow[] {
  if (!Array.isArray(value)) return [];
  return value.map(parseRow).filter((r): r is SearchRow => r !== undefined);
}

export function parseSearchAnswer(value: unknown, query: string): SearchAnswer {
  if (!isObject(value)) {
    return { query, results: [], complete: false, note: "the server gave no answer" };
  }
  return {
    query: str(value.query, query),
    results: parseRows(value.results),
    complete: value.complete === true,
    note: str(value.note),
  };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** A source, or undefined when it lacks a uri or a title (it could not be opened or named). */
export function parseAskSource(value: unknown): AskSource | undefined {
  const where = isObject(value) ? location(value) : undefined;
  if (!isObject(value) || !where) return undefined;
  const source: AskSource = {
    ...where,
    chunk: Math.trunc(num(value.chunk)),
    score: num(value.score),
    excerpt: str(value.excerpt),
    heading: str(value.heading),
  };
  if (typeof value.excerpt_text === "string") source.excerpt_text = value.excerpt_text;
  if (typeof value.folder === "string") source.folder = value.folder;
  return source;
}

export function parseAskAnswer(value: unknown, question: string): AskAnswer {
  if (!isObject(value)) {
    return {
      question,
      answer: "",
      model: "",
      sources: [],
      fallback: "the server gave no answer",
      messages: [],
      context_chunks: 0,
      cancelled: false,
      vault: "",
    };
  }
  const fallback = str(value.fallback).trim();
  return {
    question: str(value.question, question),
    answer: str(value.answer),
    model: str(value.model),
    sources: Array.isArray(value.sources)
      ? value.sources.map(parseAskSource).filter((s): s is AskSource => s !== undefined)
      : [],
    fallback: fallback || null,
    messages: strings(value.messages).filter((m) => m.trim() !== ""),
    context_chunks: Math.trunc(num(value.context_chunks)),
    cancelled: value.cancelled === true,
    vault: str(value.vault),
  };
}

export function parseOllamaStatus(value: unknown): OllamaStatus | undefined {
  if (!isObject(value)) return undefined;
  const message = str(value.message).trim();
  return {
    reachable: value.reachable === true,
    host: str(value.host),
    models: strings(value.models),
    chat_model: str(value.chat_model),
    chat_model_available: value.chat_model_available === true,
    embed_model: str(value.embed_model),
    embed_model_available: value.embed_model_available === true,
    message: message || null,
  };
}

function parsePhase(value: unknown): Phase {
  return PHASES.find((p) => p === value) ?? "starting";
}

export function parseVaultStatus(value: unknown): VaultStatus | undefined {
  if (!isObject(value) || typeof value.root !== "string") return undefined;
  const out: VaultStatus = {
    root: value.root,
    phase: parsePhase(value.phase),
    complete: value.complete === true,
    note: str(value.note),
    cards_in_graph: num(value.cards_in_graph),
    problems: Array.isArray(value.problems)
      ? value.problems.filter((p): p is string => typeof p === "string")
      : [],
  };
  const cards = optNum(value.cards);
  if (cards !== undefined) out.cards = cards;
  const chunks = optNum(value.chunks);
  if (chunks !== undefined) out.chunks = chunks;
  const embedded = optNum(value.cards_embedded);
  if (embedded !== undefined) out.cards_embedded = embedded;
  const waiting = optNum(value.chunks_waiting_for_vectors);
  if (waiting !== undefined) out.chunks_waiting_for_vectors = waiting;
  if (typeof value.model === "string") out.model = value.model;
  if (typeof value.index_dir === "string") out.index_dir = value.index_dir;
  if (typeof value.backend === "string") out.backend = value.backend;
  if (isObject(value.skipped)) {
    out.skipped = Object.fromEntries(
      Object.entries(value.skipped).map(([k, v]) => [k, String(v)]),
    );
  }
  if (Array.isArray(value.legs_ready)) {
    out.legs_ready = value.legs_ready.filter((l): l is string => typeof l === "string");
  }
  if (isObject(value.languages)) {
    out.languages = Object.fromEntries(
      Object.entries(value.languages)
        .filter(([, n]) => typeof n === "number")
        .map(([k, n]) => [k, n as number]),
    );
  }
  if (typeof value.multilingual === "string") out.multilingual = value.multilingual;
  if (typeof value.multilingual_scope === "string") out.multilingual_scope = value.multilingual_scope;
  if (typeof value.suggestion_weights === "string") out.suggestion_weights = value.suggestion_weights;
  const mlDone = optNum(value.cards_embedded_multilingual);
  if (mlDone !== undefined) out.cards_embedded_multilingual = mlDone;
  const mlWaiting = optNum(value.cards_waiting_for_multilingual);
  if (mlWaiting !== undefined) out.cards_waiting_for_multilingual = mlWaiting;
  if (typeof value.multilingual_off_reason === "string") {
    out.multilingual_off_reason = value.multilingual_off_reason;
  }
  return out;
}

export function parseStatus(value: unknown): ServerStatus | undefined {
  if (!isObject(value) || !Array.isArray(value.vaults)) return undefined;
  const out: ServerStatus = {
    version: str(value.version),
    vaults: value.vaults
      .map(parseVaultStatus)
      .filter((v): v is VaultStatus => v !== undefined),
  };
  const ollama = parseOllamaStatus(value.ollama);
  if (ollama) out.ollama = ollama;
  return out;
}
