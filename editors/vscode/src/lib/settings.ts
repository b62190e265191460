/**
 * VS Code settings (`zettel.*`) -> the server's settings object (docs/server.md, "Settings").
 *
 * Only keys the server knows are sent: it warns about unknown keys, and `zettel.server.*`,
 * `zettel.trace.*` and `zettel.relatedView.*` belong to the extension. Every known key is sent
 * with its effective value (a cleared optional string becomes null, which the server reads as
 * "its default"), because the server merges a `didChangeConfiguration` into what it has: a key
 * left out would keep its old value instead of returning to the default.
 */

/** The server's keys, as in docs/server.md and zettel_lsp/server/settings.py. */
export const SERVER_KEYS = [
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
  "legs",
  "graph",
  "graphStrength",
  "symbolLimit",
  "hoverLimit",
  "relatedLimit",
  "relatedHeading",
] as const;

export type ServerKey = (typeof SERVER_KEYS)[number];
export type ServerSettings = Partial<Record<ServerKey, unknown>>;

/** Optional strings: empty means "the server's default" (sent as null). */
const OPTIONAL_STRINGS: ReadonlySet<ServerKey> = new Set<ServerKey>([
  "model",
  "cacheDir",
  "indexDir",
  "qdrantUrl",
  "qdrantApiKey",
]);
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

/** Keys whose change re-opens the vaults on the server (it re-indexes): worth a word to the user. */
export const INDEX_KEYS: ReadonlySet<ServerKey> = new Set<ServerKey>([
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
]);

export function changedKeys(a: ServerSettings, b: ServerSettings): ServerKey[] {
  return SERVER_KEYS.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}
