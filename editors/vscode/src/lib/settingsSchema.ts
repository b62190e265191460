// Generated from zettel_lsp/settings_schema.py by `python -m zettel_lsp.settings_gen --write`: do not edit.

/** How the extension normalises a value before sending it (see `serverSettings`). */
export type ClientKind =
  | "value"
  | "optional-string"
  | "path"
  | "required-string"
  | "count-or-null"
  | "string-list"
  | "non-empty-list";

/** The server's own keys, in the order of docs/settings.md. */
export const CORE_KEYS = [
  "model",
  "threads",
  "ignore",
  "maxFileBytes",
  "cacheDir",
  "indexDir",
  "qdrantUrl",
  "qdrantApiKey",
  "watch",
  "debounceMs",
  "titleSource",
  "followExternalSymlinks",
  "multilingual",
  "legs",
  "graph",
  "graphStrength",
  "symbolLimit",
  "hoverLimit",
  "relatedLimit",
  "suggestSelfTune",
  "relatedHeading",
  "diagnosticsUnresolved",
  "diagnosticsAmbiguous",
  "diagnosticsMissingAnchor",
  "diagnosticsDuplicateTitle",
  "newNoteFolder",
] as const;

/**
 * The optional Ollama layer's keys (docs/llm.md). The server reads them from the same settings
 * object. Nothing talks to Ollama unless a feature that needs it is used (Ask, or `expandQuery` /
 * `llmRerank` turned on).
 */
export const LLM_KEYS = [
  "ollamaHost",
  "chatModel",
  "embedModel",
  "llmTimeout",
  "llmConnectTimeout",
  "temperature",
  "maxContextChunks",
  "contextWindow",
  "expandQuery",
  "llmRerank",
] as const;

/** Keys whose change re-opens the vaults on the server (it re-indexes). */
export const INDEX_KEY_LIST = [
  "model",
  "threads",
  "ignore",
  "maxFileBytes",
  "cacheDir",
  "indexDir",
  "qdrantUrl",
  "qdrantApiKey",
  "watch",
  "debounceMs",
  "titleSource",
  "followExternalSymlinks",
  "multilingual",
] as const;

type Key = (typeof CORE_KEYS)[number] | (typeof LLM_KEYS)[number];

/** Per key: how the extension normalises it, and the server's default (null: unset). */
export const SCHEMA: Readonly<Record<Key, { client: ClientKind; default: unknown }>> = {
  model: { client: "optional-string", default: "sentence-transformers/all-MiniLM-L6-v2" },
  threads: { client: "count-or-null", default: null },
  ignore: { client: "string-list", default: [] },
  maxFileBytes: { client: "value", default: 5242880 },
  cacheDir: { client: "path", default: null },
  indexDir: { client: "path", default: null },
  qdrantUrl: { client: "optional-string", default: null },
  qdrantApiKey: { client: "optional-string", default: null },
  watch: { client: "value", default: true },
  debounceMs: { client: "value", default: 500 },
  titleSource: { client: "value", default: "auto" },
  followExternalSymlinks: { client: "value", default: false },
  multilingual: { client: "value", default: "auto" },
  legs: { client: "non-empty-list", default: ["dense", "bm25", "keyword", "title"] },
  graph: { client: "value", default: true },
  graphStrength: { client: "value", default: 1 },
  symbolLimit: { client: "value", default: 20 },
  hoverLimit: { client: "value", default: 5 },
  relatedLimit: { client: "value", default: 5 },
  suggestSelfTune: { client: "value", default: true },
  relatedHeading: { client: "value", default: "## Related" },
  diagnosticsUnresolved: { client: "value", default: "warning" },
  diagnosticsAmbiguous: { client: "value", default: "information" },
  diagnosticsMissingAnchor: { client: "value", default: "warning" },
  diagnosticsDuplicateTitle: { client: "value", default: "information" },
  newNoteFolder: { client: "optional-string", default: null },
  ollamaHost: { client: "optional-string", default: null },
  chatModel: { client: "required-string", default: "llama3.2" },
  embedModel: { client: "required-string", default: "nomic-embed-text" },
  llmTimeout: { client: "value", default: 60 },
  llmConnectTimeout: { client: "value", default: 2 },
  temperature: { client: "value", default: 0.2 },
  maxContextChunks: { client: "value", default: 8 },
  contextWindow: { client: "value", default: 8192 },
  expandQuery: { client: "value", default: false },
  llmRerank: { client: "value", default: false },
};
