/**
 * Entry point: wires the client, the views, the status bar item and the palette commands.
 *
 * Command ids avoid the server's own (`zettel.search`, `zettel.related`, `zettel.suggestLinks`,
 * `zettel.reindex`, `zettel.status`): vscode-languageclient registers those as VS Code commands
 * that forward to the server, so they stay available to other extensions and keybindings.
 */

import * as vscode from "vscode";
import { ZettelClient } from "./client";
import { ServerInstaller } from "./installer";
import { RELATED_VIEW_ID, RelatedProvider, isNote } from "./relatedView";
import { SEARCH_VIEW_ID, SearchViewProvider, toggleCompact } from "./searchView";
import { StatusController } from "./status";
import { suggestLinks } from "./suggest";
import { openAt } from "./open";
import { SHOW_REFERENCES, referencesArgs, type JsonPosition } from "./lib/lenses";

let client: ZettelClient | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("Zettel");
  // The installer restarts the client it serves (made just below).
  const installer: ServerInstaller = new ServerInstaller(context, output, {
    restart: () => zettel.restart(),
    installing: (on) => zettel.installing(on),
  });
  client = new ZettelClient(output, () => installer.serverPath());
  const zettel = client;
  const status = new StatusController(zettel);
  const search = new SearchViewProvider(context.extensionUri, zettel);
  const related = new RelatedProvider(zettel);

  context.subscriptions.push(
    output,
    zettel,
    status,
    search,
    related,
    // Kept alive while hidden: an answer that is still streaming (or on screen) is not lost
    // when the user looks at another view.
    vscode.window.registerWebviewViewProvider(SEARCH_VIEW_ID, search, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    // Complete answers from now on: redo what was answered from a partial index.
    status.onDidBecomeReady(() => {
      related.refresh();
      search.refresh();
    }),

    vscode.commands.registerCommand("zettel.openSearch", () => {
      // A one-line selection in the editor becomes the query.
      const editor = vscode.window.activeTextEditor;
      const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : "";
      return search.focus(selected && !selected.includes("\n") ? selected.trim() : undefined);
    }),
    vscode.commands.registerCommand("zettel.openAsk", () => {
      // A selection in the editor becomes the question (not sent: the user may edit it first).
      const editor = vscode.window.activeTextEditor;
      const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection).trim() : "";
      return search.focusAsk(selected || undefined);
    }),
    vscode.commands.registerCommand("zettel.openRelated", async () => {
      await vscode.commands.executeCommand(`${RELATED_VIEW_ID}.focus`);
      related.refresh();
    }),
    vscode.commands.registerCommand("zettel.refreshRelated", () => related.refresh()),
    vscode.commands.registerCommand("zettel.toggleCompactResults", () => toggleCompact()),
    vscode.commands.registerCommand("zettel.suggestLinksForNote", (arg?: unknown) => {
      const active = vscode.window.activeTextEditor?.document;
      const given = typeof arg === "string" ? vscode.Uri.parse(arg, true) : arg; // a code lens's
      const uri = given instanceof vscode.Uri ? given : isNote(active) ? active.uri : related.currentUri;
      return suggestLinks(zettel, uri);
    }),
    // The "N backlinks" code lens: (uri, position, locations) in LSP JSON.
    vscode.commands.registerCommand(SHOW_REFERENCES, (...args: unknown[]) => {
      const refs = referencesArgs(args);
      if (!refs) return undefined;
      const at = (p: JsonPosition) => new vscode.Position(p.line, p.character);
      return vscode.commands.executeCommand(
        "editor.action.showReferences",
        vscode.Uri.parse(refs.uri, true),
        at(refs.position),
        refs.locations.map(
          (l) => new vscode.Location(vscode.Uri.parse(l.uri, true), new vscode.Range(at(l.range.start), at(l.range.end))),
        ),
      );
    }),
    vscode.commands.registerCommand("zettel.reindexVaults", async () => {
      try {
        const answer = await zettel.executeCommand("zettel.reindex");
        const started =
          typeof answer === "object" && answer !== null && "started" in answer && Array.isArray(answer.started)
            ? answer.started.length
            : 0;
        status.kick();
        void vscode.window.showInformationMessage(
          started
            ? `Zettel: reindexing ${started} vault${started === 1 ? "" : "s"} in the background.`
            : "Zettel: no vault to reindex (open a folder of notes).",
        );
      } catch (err) {
        void vscode.window.showErrorMessage(`Zettel: reindex failed: ${errorText(err)}`);
      }
    }),
    vscode.commands.registerCommand("zettel.showOutput", () => output.show(true)),
    vscode.commands.registerCommand("zettel.showStatus", () => status.show()),
    vscode.commands.registerCommand("zettel.restartServer", () => zettel.restart()),
    vscode.commands.registerCommand("zettel.installServer", () => installer.install()),
    // The Related view's items: (uri, first line, last line).
    vscode.commands.registerCommand("zettel.openLocation", (uri: unknown, start: unknown, end: unknown) => {
      if (typeof uri !== "string") return undefined;
      const first = typeof start === "number" ? start : 0;
      return openAt(vscode.Uri.parse(uri, true), first, typeof end === "number" ? end : first);
    }),
  );

  // An extension update that bundles another server build upgrades the installed one first.
  void installer.upgradeIfNeeded().then(
    (started) => (started ? undefined : zettel.start()),
    () => zettel.start(),
  );
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
