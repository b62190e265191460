/**
 * VS Code settings (`zettel.*`) -> the server's settings object (docs/settings.md).
 *
 * Only keys the server knows are sent: it warns about unknown keys, and `zettel.server.*`,
 * `zettel.trace.*` and `zettel.relatedView.*` belong to the extension. Every known key is sent
 * with its effective value (a cleared optional string becomes null, which the server reads as
 * "its default"), because the server merges a `didChangeConfiguration` into what it has: a key
 * left out would keep its old value instead of returning to the default.
 */

import { CORE_KEYS, INDEX_KEY_LIST, LLM_KEYS, SCHEMA } from "./settingsSchema";

/**
 * The server's own keys and the optional Ollama layer's keys: generated from the server's one
 * settings table (zettel_lsp/settings_schema.py) into ./settingsSchema.ts, with package.json's
 * `zettel.*` entries for them.
 */
export { CORE_KEYS, LLM_KEYS };

/** Every key the server reads. */
export const SERVER_KEYS = [...CORE_KEYS, ...LLM_KEYS] as const;

export type ServerKey = (typeof SERVER_KEYS)[number];
export type ServerSettings = Partial<Record<ServerKey, unknown>>;

/**
 * Model names the server requires (it rejects an empty one with a warning): empty means its
 * default, which is sent as such.
 */
export const MODEL_DEFAULTS: Readonly<Partial<Record<ServerKey, string>>> = Object.fromEntries(
  SERVER_KEYS.filter((k) => SCHEMA[k].client === "required-string").map((k) => [k, String(SCHEMA[k].default)]),
);

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
    switch (SCHEMA[key].client) {
      case "optional-string":
      case "path":
        value = typeof value === "string" && value.trim() !== "" ? value.trim() : null;
        if (typeof value === "string" && SCHEMA[key].client === "path") value = expandPath(value, vars);
        break;
      case "required-string":
        value = typeof value === "string" && value.trim() !== "" ? value.trim() : MODEL_DEFAULTS[key];
        break;
      case "count-or-null":
        // 0 or null: the server's default (null; for threads, all cores)
        value = typeof value === "number" && value > 0 ? Math.trunc(value) : null;
        break;
      case "string-list":
        value = stringList(value) ?? [];
        break;
      case "non-empty-list": {
        const list = stringList(value);
        if (list === undefined || list.length === 0) continue; // the server's default (legs: all)
        value = list;
        break;
      }
      case "value":
        break;
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
