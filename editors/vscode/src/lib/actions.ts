/** Ordering and labels for "Suggest links": the server's code actions for a whole note. */

export interface ActionLike {
  title: string;
  kind?: string;
}

/**
 * The one-mention fixes (kind quickfix, most confident first as the server sends them) first,
 * then the note-wide actions ("Link N confident mentions", "Add related links", kind refactor.*):
 * a user reads what "Link N" would do before applying it to the whole note.
 */
export function orderActions<T extends ActionLike>(actions: readonly T[]): T[] {
  const rank = (a: T): number => (a.kind?.startsWith("refactor") ? 1 : 0);
  return actions
    .map((a, i) => ({ a, i }))
    .sort((x, y) => rank(x.a) - rank(y.a) || x.i - y.i)
    .map(({ a }) => a);
}

export function actionDescription(kind: string | undefined): string {
  if (!kind) return "";
  if (kind.startsWith("quickfix")) return "link this mention";
  if (kind.startsWith("refactor")) return "whole note";
  return kind;
}

/**
 * Whether an item of a `textDocument/codeAction` answer is a CodeAction literal rather than a
 * bare Command (whose `command` is a string). Not `CodeAction.is` from the protocol types: it
 * requires an `edit` or a `command`, so it rejects actions that are filled in on
 * `codeAction/resolve`, such as the server's "Add related links".
 */
export function isCodeActionLiteral(value: unknown): value is ActionLike {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.title === "string" && typeof v.command !== "string";
}
