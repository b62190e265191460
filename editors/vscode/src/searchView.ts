/**
 * The Search view (a webview in the Zettel activity-bar container): the webview debounces typing
 * and sends numbered queries; the host runs `zettel.search`, cancels the request before it
 * (`$/cancelRequest`) and answers only the newest one. Results open at their chunk's line.
 */

import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import { NotRunningError, type ZettelClient } from "./client";
import { LatestGate } from "./lib/latest";
import { parseFromWebview, type ToWebview } from "./lib/messages";
import { parseSearchAnswer } from "./lib/protocol";
import { toResultsModel, type ResultItem } from "./lib/results";
import { openAt } from "./open";

export const SEARCH_VIEW_ID = "zettel.searchView";

export class SearchViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private readonly gate = new LatestGate<vscode.CancellationTokenSource>((cts) => {
    cts.cancel();
    cts.dispose();
  });
  /** The answer on screen, by request number: `open` messages name an item in it. */
  private shown: { seq: number; items: ResultItem[] } | undefined;
  /** A focus request that came before the webview was ready. */
  private pendingFocus: { query?: string } | undefined;
  private ready = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly client: ZettelClient,
  ) {
    this.disposables.push(
      client.onDidChangeState((state) => {
        this.postServerLine();
        if (state === "running") this.refresh();
      }),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const webview = view.webview;
    webview.options = {
      enableScripts: true,
      localResourceRoots: [
        vscode.Uri.joinPath(this.extensionUri, "media"),
        vscode.Uri.joinPath(this.extensionUri, "dist", "webview"),
      ],
    };
    webview.html = this.html(webview);
    const subs = [
      webview.onDidReceiveMessage((raw: unknown) => void this.onMessage(raw)),
      view.onDidDispose(() => {
        this.gate.cancelAll();
        this.view = undefined;
        for (const s of subs) s.dispose();
      }),
    ];
  }

  /** "Zettel: Search": show the view and put the cursor in the box (with `query`, if given). */
  async focus(query?: string): Promise<void> {
    await vscode.commands.executeCommand(`${SEARCH_VIEW_ID}.focus`);
    const msg = query !== undefined ? { query } : {};
    if (this.view && this.ready) this.post({ type: "focus", ...msg });
    else this.pendingFocus = msg;
  }

  /** Have the webview search its current text again (no-op when the box is empty). */
  refresh(): void {
    if (this.view && this.ready) this.post({ type: "refresh" });
  }

  private post(msg: ToWebview): void {
    void this.view?.webview.postMessage(msg);
  }

  private postServerLine(): void {
    const state = this.client.state;
    const message =
      state === "running"
        ? ""
        : state === "starting"
          ? "Starting the zettel-lsp server…"
          : "The zettel-lsp server is not running: see 'Zettel: Show Status'.";
    this.post({ type: "server", message });
  }

  private async onMessage(raw: unknown): Promise<void> {
    const msg = parseFromWebview(raw);
    if (!msg) return;
    switch (msg.type) {
      case "ready":
        this.ready = true;
        this.postServerLine();
        if (this.pendingFocus) {
          this.post({ type: "focus", ...this.pendingFocus });
          this.pendingFocus = undefined;
        }
        return;
      case "search":
        return this.search(msg.seq, msg.query);
      case "open": {
        const item = this.shown?.seq === msg.seq ? this.shown.items[msg.index] : undefined;
        if (!item) return;
        try {
          await openAt(vscode.Uri.parse(item.uri, true), item.lineStart, item.lineEnd, {
            preserveFocus: msg.preserveFocus,
          });
        } catch (err) {
          void vscode.window.showErrorMessage(`Zettel: could not open ${item.title}: ${String(err)}`);
        }
        return;
      }
    }
  }

  private async search(seq: number, query: string): Promise<void> {
    const cts = new vscode.CancellationTokenSource();
    const ticket = this.gate.begin(cts);
    const limit = vscode.workspace.getConfiguration("zettel").get<number>("symbolLimit");
    try {
      const raw = await this.client.executeCommand(
        "zettel.search",
        limit ? { query, limit } : { query },
        cts.token,
      );
      if (!this.gate.finish(ticket)) return; // a newer query is running: drop this answer
      const model = toResultsModel(parseSearchAnswer(raw, query), query);
      this.shown = { seq, items: model.items };
      this.post({ type: "results", seq, model });
    } catch (err) {
      if (!this.gate.finish(ticket)) return; // cancelled by a newer query
      const message =
        err instanceof NotRunningError ? err.message : `Search failed: ${errorText(err)}`;
      this.post({ type: "error", seq, message });
    } finally {
      cts.dispose();
    }
  }

  private html(webview: vscode.Webview): string {
    const nonce = makeNonce();
    const css = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "media", "search.css"));
    const js = webview.asWebviewUri(
      vscode.Uri.joinPath(this.extensionUri, "dist", "webview", "search.js"),
    );
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${csp}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <link rel="stylesheet" href="${css.toString()}">
  <title>Zettel Search</title>
</head>
<body>
  <section class="search" aria-label="Search notes">
    <div id="box" class="box">
      <input id="query" type="text" role="combobox" aria-expanded="false" aria-autocomplete="list"
        aria-controls="results" aria-label="Search notes" placeholder="Search notes (meaning, words, titles)"
        spellcheck="false" autocomplete="off">
    </div>
    <div id="server" class="server" role="status" hidden></div>
    <div id="summary" class="summary" aria-live="polite"></div>
    <div id="note" class="note" role="status" hidden></div>
    <ul id="results" class="results" role="listbox" aria-label="Search results"></ul>
  </section>
  <!-- Room for the "Ask" box (zettel.ask, a later issue): a second <section> goes here. -->
  <script nonce="${nonce}" src="${js.toString()}"></script>
</body>
</html>`;
  }

  dispose(): void {
    this.gate.cancelAll();
    for (const d of this.disposables) d.dispose();
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function makeNonce(): string {
  return randomBytes(18).toString("base64");
}
