/**
 * HTML escaping and query-word highlighting for the Search view. Everything that reaches the
 * webview's innerHTML goes through {@link escapeHtml}; the only markup added is `<mark>`.
 */

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text made safe for element content and (quoted) attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** Words too common to be worth highlighting (the search itself still uses them). */
const STOPWORDS = new Set(
  (
    "a an and are as at be but by for from has have how in into is it its of on or so that the " +
    "their then there these this to was what when where which who why with without"
  ).split(" "),
);

const WORD = /[\p{L}\p{N}_]+/gu;

/** The distinct, lower-cased words of a query worth highlighting, longest first. */
export function queryTerms(query: string): string[] {
  const seen = new Set<string>();
  for (const m of query.toLowerCase().matchAll(WORD)) {
    const w = m[0];
    if (w.length >= 2 && !STOPWORDS.has(w)) seen.add(w);
  }
  return [...seen].sort((a, b) => b.length - a.length || a.localeCompare(b));
}

const SUFFIXES = ["ings", "ing", "ers", "er", "ed", "es", "s", "ly", "e"];

/** The word and its light stems ("ranked" -> ranked, rank): a word minus a common ending. */
function stems(word: string): string[] {
  const out = [word];
  for (const suffix of SUFFIXES) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 4) {
      out.push(word.slice(0, -suffix.length));
    }
  }
  return out;
}

/**
 * Whether a word of the text matches a query term: equal (ignoring case), or the same after
 * dropping a common English ending, so "embeddings" marks "embedding", "ranked" marks "ranks"
 * and "scores" marks "score". Cheap and predictable; the server does the real matching.
 */
export function wordMatches(word: string, term: string): boolean {
  const w = word.toLowerCase();
  if (w === term) return true;
  const termStems = stems(term);
  return stems(w).some((s) => termStems.includes(s));
}

export interface Segment {
  text: string;
  match: boolean;
}

/** `text` split into runs, each marked as a query-word match or not (adjacent runs merged). */
export function highlightSegments(text: string, terms: readonly string[]): Segment[] {
  const out: Segment[] = [];
  const push = (piece: string, match: boolean): void => {
    if (!piece) return;
    const last = out[out.length - 1];
    if (last && last.match === match) last.text += piece;
    else out.push({ text: piece, match });
  };
  let at = 0;
  if (terms.length > 0) {
    for (const m of text.matchAll(WORD)) {
      const start = m.index ?? 0;
      if (terms.some((t) => wordMatches(m[0], t))) {
        push(text.slice(at, start), false);
        push(m[0], true);
        at = start + m[0].length;
      }
    }
  }
  push(text.slice(at), false);
  return out;
}

/** Escaped HTML of `text` with the query's words wrapped in `<mark>`. */
export function highlightHtml(text: string, terms: readonly string[]): string {
  return highlightSegments(text, terms)
    .map((s) => (s.match ? `<mark>${escapeHtml(s.text)}</mark>` : escapeHtml(s.text)))
    .join("");
}
