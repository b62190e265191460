/**
 * VS Code settings (`zettel.*`) -> the server's settings object (docs/server.md, "Settings").
 *
 * Only keys the server knows are sent: it warns about unknown keys, and `zettel.server.*`,
 * `zettel.trace.*` and `zettel.relatedView.*` belong to the extension. Every known key is sent
 * with its effective value (a cleared optional string becomes null, which the server reads as
 * "its default"), because the server merges a `didChangeConfiguration` into what it has: a key
 * left out would keep its old value instead of returning to the default.
 */

/** Server keys whose change re-opens the vaults (the server re-indexes): worth a word to the user. */
const INDEX_KEY_LIST = [
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
] as const;

/** The server's own keys, as in docs/server.md and zettel_lsp/server/settings.py (`_KEYS`). */
export const CORE_KEYS = [
  ...INDEX_KEY_LIST,
  "legs",
  "graph",
  "graphStrength",
  "symbolLimit",
  "hoverLimit",
  "relatedLimit",
  "relatedHeading",
] as const;

/**
 * The optional Ollama layer's keys (docs/llm.md; zettel_lsp/llm/settings.py, `LLM_KEYS`). The
 * server reads them from the same settings object. Nothing talks to Ollama unless a feature
 * that needs it is used (Ask, or `expandQuery` / `llmRerank` turned on).
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

/** Every key the server reads. */
export const SERVER_KEYS = [...CORE_KEYS, ...LLM_KEYS] as const;

export type ServerKey = (typeof SERVER_KEYS)[number];
export type ServerSettings = Partial<Record<ServerKey, unknown>>;

/** Optional strings: empty means "the server's default" (sent as null). */
const OPTIONAL_STRINGS: ReadonlySet<ServerKey> = new Set<ServerKey>([
  "model",
  "cacheDir",
  "indexDir",
  "qdrantUrl",
  "qdrantApiKey",
  "ollamaHost",
]);
/**
 * Model names the server requires (it rejects an empty one with a warning): empty means its
 * default, which is sent as such.
 */
export const MODEL_DEFAULTS: Readonly<Partial<Record<ServerKey, string>>> = {
  chatModel: "llama3.2",
  embedModel: "nomic-embed-text",
};
/** Paths: `~` and `${workspaceFolder}` are expanded. */
const PATHS: ReadonlySet<ServerKey> = new Set<ServerKey>(["cacheDir", "indexDir"]);

export interface Expand {
  /** The first workspace folder's path, for `${workspaceFolder}`. */
  workspaceFolder?: string;
  /** The user's home, for a leading `~`. */
  home?: string;
}

export function expandPath(value: string, vars: Expand): string {
  let out = value;
  if (vars.workspaceFolder !== undefined) {
    out = out.split("${workspaceFolder}").join(vars.workspaceFolder);
  }
  if (vars.home !== undefined && (out === "~" || out.startsWith("~/") || out.startsWith("~\\"))) {
    out = vars.home + out.slice(1);
  }
  return out;
}

function stringList(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter((v): v is string => typeof v === "string" && v.trim() !== "");
}

/**
 * The server's settings from a lookup of `zettel.<key>` values (VS Code's
 * `getConfiguration("zettel").get(key)`); a key whose value is undefined is left out.
 */
export function serverSettings(get: (key: ServerKey) => unknown, vars: Expand = {}): ServerSettings {
  const out: ServerSettings = {};
  for (const key of SERVER_KEYS) {
    let value = get(key);
    if (value === undefined) continue;
    if (OPTIONAL_STRINGS.has(key)) {
      value = typeof value === "string" && value.trim() !== "" ? value.trim() : null;
      if (typeof value === "string" && PATHS.has(key)) value = expandPath(value, vars);
    } else if (MODEL_DEFAULTS[key] !== undefined) {
      value = typeof value === "string" && value.trim() !== "" ? value.trim() : MODEL_DEFAULTS[key];
    } else if (key === "threads") {
      // 0 or null: all cores (the server's default, null)
      value = typeof value === "number" && value > 0 ? Math.trunc(value) : null;
    } else if (key === "ignore") {
      value = stringList(value) ?? [];
    } else if (key === "legs") {
      const legs = stringList(value);
      if (legs === undefined || legs.length === 0) continue; // server default: every leg
      value = legs;
    }
    out[key] = value;
  }
  return out;
}

/** The `workspace/didChangeConfiguration` params for `settings` (nested, as docs/server.md). */
export function didChangeConfigurationParams(settings: ServerSettings): {
  settings: { zettel: ServerSettings };
} {
  return { settings: { zettel: settings } };
}

/** Whether two settings objects send the same thing (to skip a no-op notification). */
export function sameSettings(a: ServerSettings, b: ServerSettings): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Keys whose change re-opens the vaults on the server (it re-indexes). */
export const INDEX_KEYS: ReadonlySet<ServerKey> = new Set<ServerKey>(INDEX_KEY_LIST);

export function changedKeys(a: ServerSettings, b: ServerSettings): ServerKey[] {
  return SERVER_KEYS.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

/**
 * Whether going from `before` to `after` re-opens the vaults: an index key changed, or the
 * index embeds with Ollama (`model: "ollama:<name>"`) and its host or timeout changed.
 */
export function reindexes(before: ServerSettings, after: ServerSettings): boolean {
  const keys = changedKeys(before, after);
  if (keys.some((k) => INDEX_KEYS.has(k))) return true;
  const ollamaIndex = typeof after.model === "string" && after.model.startsWith("ollama:");
  return ollamaIndex && keys.some((k) => k === "ollamaHost" || k === "llmTimeout");
}
