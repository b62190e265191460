// The server's code lens commands as VS Code runs them (docs/lsp-outline.md). Pure: no vscode
// import, so the unit tests run under node.

/** A command as VS Code holds it on a code lens. */
export interface LensCommand {
  title: string;
  command: string;
  tooltip?: string;
  arguments?: unknown[];
}

export const SHOW_REFERENCES = "zettel.showReferences";
export const SUGGEST_LINKS = "zettel.suggestLinks";
export const SUGGEST_LINKS_FOR_NOTE = "zettel.suggestLinksForNote";

/**
 * The lens command VS Code should run. "zettel.suggestLinks" is a server command: run through
 * vscode-languageclient its answer would be dropped, so the lens opens the extension's
 * "Suggest links" for that note instead (arguments: the note's URI as a string).
 * "zettel.showReferences" is this extension's own command (see {@link referencesArgs}).
 */
export function clientLensCommand(cmd: LensCommand): LensCommand {
  if (cmd.command !== SUGGEST_LINKS) return cmd;
  const arg = cmd.arguments?.[0];
  const uri =
    typeof arg === "object" && arg !== null && "uri" in arg && typeof arg.uri === "string" ? arg.uri : undefined;
  return { ...cmd, command: SUGGEST_LINKS_FOR_NOTE, arguments: uri ? [uri] : [] };
}

export interface JsonPosition {
  line: number;
  character: number;
}

export interface JsonLocation {
  uri: string;
  range: { start: JsonPosition; end: JsonPosition };
}

export interface ReferencesArgs {
  uri: string;
  position: JsonPosition;
  locations: JsonLocation[];
}

function isPosition(x: unknown): x is JsonPosition {
  return (
    typeof x === "object" &&
    x !== null &&
    "line" in x &&
    "character" in x &&
    typeof x.line === "number" &&
    typeof x.character === "number"
  );
}

function isLocation(x: unknown): x is JsonLocation {
  if (typeof x !== "object" || x === null || !("uri" in x) || !("range" in x)) return false;
  const range = x.range;
  return (
    typeof x.uri === "string" &&
    typeof range === "object" &&
    range !== null &&
    "start" in range &&
    "end" in range &&
    isPosition(range.start) &&
    isPosition(range.end)
  );
}

/**
 * The arguments of the server's "N backlinks" lens, ``[uri, position, locations]`` in LSP JSON
 * (the shape of VS Code's ``editor.action.showReferences``), or undefined when they are not that.
 */
export function referencesArgs(args: unknown[]): ReferencesArgs | undefined {
  const [uri, position, locations] = args;
  if (typeof uri !== "string" || !isPosition(position) || !Array.isArray(locations)) return undefined;
  if (!locations.every(isLocation)) return undefined;
  return { uri, position, locations };
}
