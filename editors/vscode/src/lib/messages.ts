/** Messages between the Search webview (Search and Ask) and the extension host (both directions). */

import type { AskModel } from "./ask";
import type { ResultsModel } from "./results";

export type Mode = "search" | "ask";

export type FromWebview =
  /** The webview's script is listening (sent once per load). */
  | { type: "ready" }
  /**
   * Search for `query`; `seq` numbers the webview's requests. `llm: false` skips the optional
   * LLM steps (typing); true runs them when the user turned them on (Enter).
   */
  | { type: "search"; seq: number; query: string; llm: boolean }
  /** Open the `index`-th result of the answer to `seq`. */
  | { type: "open"; seq: number; index: number; preserveFocus: boolean }
  /** Ask `question` (`zettel.ask`); `seq` numbers the webview's questions. */
  | { type: "ask"; seq: number; question: string }
  /** Stop answering question `seq` (cancels the request). */
  | { type: "askStop"; seq: number }
  /** Open the `index`-th source of the answer to question `seq`. */
  | { type: "openSource"; seq: number; index: number; preserveFocus: boolean };

export type ToWebview =
  | { type: "results"; seq: number; model: ResultsModel }
  | { type: "error"; seq: number; message: string }
  /** Put the cursor in the search box (the "Zettel: Search" command), optionally with text. */
  | { type: "focus"; query?: string }
  /** A line about the server shown under the box ("starting", "not running"): "" hides it. */
  | { type: "server"; message: string }
  /** Search the current text again (the server (re)started or the index became complete). */
  | { type: "refresh" }
  /**
   * The view's settings: whether Enter in the search box has LLM steps to run
   * (`zettel.expandQuery`/`llmRerank`), and whether results are one line each
   * (`zettel.searchView.compact`).
   */
  | { type: "config"; llmSearch: boolean; compact: boolean }
  /** Show the Ask box and put the cursor in it ("Zettel: Ask"), optionally with a question. */
  | { type: "focusAsk"; question?: string }
  /** A streamed piece of the answer to question `seq`. */
  | { type: "askDelta"; seq: number; delta: string }
  /** The answer to question `seq` (final: its text replaces what streamed, if any). */
  | { type: "askDone"; seq: number; model: AskModel }
  /** Question `seq` was stopped before its answer came (what streamed stays). */
  | { type: "askStopped"; seq: number }
  | { type: "askError"; seq: number; message: string };

export const MAX_QUERY = 1000;
export const MAX_QUESTION = 4000;

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
        return {
          type: "search",
          seq: value.seq,
          query: value.query.slice(0, MAX_QUERY),
          llm: value.llm !== false,
        };
      }
      return undefined;
    case "open":
    case "openSource":
      if (typeof value.seq === "number" && typeof value.index === "number") {
        return {
          type: value.type,
          seq: value.seq,
          index: value.index,
          preserveFocus: value.preserveFocus === true,
        };
      }
      return undefined;
    case "ask":
      if (typeof value.seq === "number" && typeof value.question === "string") {
        return { type: "ask", seq: value.seq, question: value.question.slice(0, MAX_QUESTION) };
      }
      return undefined;
    case "askStop":
      return typeof value.seq === "number" ? { type: "askStop", seq: value.seq } : undefined;
    default:
      return undefined;
  }
}
