/** Messages between the Search webview and the extension host (both directions). */

import type { ResultsModel } from "./results";

export type FromWebview =
  /** The webview's script is listening (sent once per load). */
  | { type: "ready" }
  /** Search for `query`; `seq` numbers the webview's requests. */
  | { type: "search"; seq: number; query: string }
  /** Open the `index`-th result of the answer to `seq`. */
  | { type: "open"; seq: number; index: number; preserveFocus: boolean };

export type ToWebview =
  | { type: "results"; seq: number; model: ResultsModel }
  | { type: "error"; seq: number; message: string }
  /** Put the cursor in the search box (the "Zettel: Search" command), optionally with text. */
  | { type: "focus"; query?: string }
  /** A line about the server shown under the box ("starting", "not running"): "" hides it. */
  | { type: "server"; message: string }
  /** Search the current text again (the server (re)started or the index became complete). */
  | { type: "refresh" };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** Validate a message from the webview (it is untrusted input to the host). */
export function parseFromWebview(value: unknown): FromWebview | undefined {
  if (!isObject(value)) return undefined;
  switch (value.type) {
    case "ready":
      return { type: "ready" };
    case "search":
      if (typeof value.seq === "number" && typeof value.query === "string") {
        return { type: "search", seq: value.seq, query: value.query.slice(0, 1000) };
      }
      return undefined;
    case "open":
      if (typeof value.seq === "number" && typeof value.index === "number") {
        return {
          type: "open",
          seq: value.seq,
          index: value.index,
          preserveFocus: value.preserveFocus === true,
        };
      }
      return undefined;
    default:
      return undefined;
  }
}
