/**
 * The Search view (a webview in the Zettel activity-bar container), with two modes:
 *
 * - **Search**: the webview debounces typing and sends numbered queries; the host runs
 *   `zettel.search` (with `llm: false` while typing, so the optional LLM steps never slow it
 *   down; Enter runs them), cancels the request before it (`$/cancelRequest`) and answers only
 *   the newest one. Results open at their chunk's line.
 * - **Ask**: the host runs `zettel.ask` with a fresh token and the active note's uri, forwards
 *   the `zettel/askDelta` pieces of that token as they arrive, then the answer with its
 *   sources; Stop cancels the request (the server stops the stream).
 */

import { randomBytes, randomUUID } from "node:crypto";
import * as vscode from "vscode";
import { NotRunningError, type ZettelClient } from "./client";
import { askToken, toAskModel, type SourceItem } from "./lib/ask";
import { LatestGate } from "./lib/latest";
import { parseFromWebview, type ToWebview } from "./lib/messages";
import { parseAskAnswer, parseSearchAnswer } from "./lib/protocol";
import { toResultsModel, type ResultItem } from "./lib/results";
import { openAt } from "./open";

export const SEARCH_VIEW_ID = "zettel.searchView";
/** One line per result (title and folder); the extension's own setting. */
export const COMPACT_SETTING = "zettel.searchView.compact";

/** "Zettel: Toggle Compact Results": flips `zettel.searchView.compact` where it is set (the
 * workspace's value when it has one, else the user's). */
export async function toggleCompact(): Promise<void> {
  const config = vscode.workspace.getConfiguration("zettel");
  const now = config.get<boolean>("searchView.compact") === true;
  const where = config.inspect<boolean>("searchView.compact");
  const target =
    where?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await config.update("searchView.compact", !now, target);
}

export class SearchViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private readonly gate = new LatestGate<vscode.CancellationTokenSource>((cts) => {
    cts.cancel();
    cts.dispose();
  });
  /** The answer on screen, by request number: `open` messages name an item in it. */
  private shown: { seq: number; items: ResultItem[] } | undefined;
  /** Only one question is answered at a time: a new one cancels the one before. */
  private readonly askGate = new LatestGate<vscode.CancellationTokenSource>((cts) => {
    cts.cancel();
  });
  /** The question being answered (Stop names it). */
  private asking: { seq: number; cts: vscode.CancellationTokenSource } | undefined;
  /** The sources on screen, by question number: `openSource` names one. */
  private shownSources: { seq: number; items: SourceItem[] } | undefined;
  /** A focus request that came before the webview was ready. */
  private pendingFocus: ToWebview | undefined;
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
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (
          e.affectsConfiguration("zettel.expandQuery") ||
          e.affectsConfiguration("zettel.llmRerank") ||
          e.affectsConfiguration(COMPACT_SETTING)
        ) {
          this.postConfig();
        }
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
        this.askGate.cancelAll();
        this.view = undefined;
        for (const s of subs) s.dispose();
      }),
    ];
  }

  /** "Zettel: Search": show the view and put the cursor in the box (with `query`, if given). */
  focus(query?: string): Promise<void> {
    return this.reveal(query !== undefined ? { type: "focus", query } : { type: "focus" });
  }

  /** "Zettel: Ask": show the Ask box and put the cursor in it (with `question`, if given). */
  focusAsk(question?: string): Promise<void> {
    return this.reveal(question !== undefined ? { type: "focusAsk", question } : { type: "focusAsk" });
  }

  private async reveal(msg: ToWebview): Promise<void> {
    await vscode.commands.executeCommand(`${SEARCH_VIEW_ID}.focus`);
    if (this.view && this.ready) this.post(msg);
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
          : state === "installing"
            ? "Installing the zettel-lsp server (a few minutes the first time)…"
            : "The zettel-lsp server is not running: see 'Zettel: Show Status'.";
    this.post({ type: "server", message });
  }

  /** Tell the webview whether Enter in the search box has LLM steps to run, and whether the
   * results are compact (one line each). */
  private postConfig(): void {
    const config = vscode.workspace.getConfiguration("zettel");
    const llmSearch = config.get<boolean>("expandQuery") === true || config.get<boolean>("llmRerank") === true;
    const compact = config.get<boolean>("searchView.compact") === true;
    this.post({ type: "config", llmSearch, compact });
  }

  private async onMessage(raw: unknown): Promise<void> {
    const msg = parseFromWebview(raw);
    if (!msg) return;
    switch (msg.type) {
      case "ready":
        this.ready = true;
        this.postServerLine();
        this.postConfig();
        if (this.pendingFocus) {
          this.post(this.pendingFocus);
          this.pendingFocus = undefined;
        }
        return;
      case "search":
        return this.search(msg.seq, msg.query, msg.llm);
      case "ask":
        return this.ask(msg.seq, msg.question);
      case "askStop":
        if (this.asking?.seq === msg.seq) this.asking.cts.cancel();
        return;
      case "openSource":
        return this.openItem(
          this.shownSources?.seq === msg.seq ? this.shownSources.items[msg.index] : undefined,
          msg.preserveFocus,
        );
      case "open":
        return this.openItem(
          this.shown?.seq === msg.seq ? this.shown.items[msg.index] : undefined,
          msg.preserveFocus,
        );
    }
  }

  /** Opens a result or a source at its lines (stale or missing: nothing). */
  private async openItem(
    item: { uri: string; title: string; lineStart: number; lineEnd: number } | undefined,
    preserveFocus: boolean | undefined,
  ): Promise<void> {
    if (!item) return;
    try {
      await openAt(vscode.Uri.parse(item.uri, true), item.lineStart, item.lineEnd, { preserveFocus });
    } catch (err) {
      void vscode.window.showErrorMessage(`Zettel: could not open ${item.title}: ${String(err)}`);
    }
  }

  private async search(seq: number, query: string, llm: boolean): Promise<void> {
    const cts = new vscode.CancellationTokenSource();
    const ticket = this.gate.begin(cts);
    const limit = vscode.workspace.getConfiguration("zettel").get<number>("symbolLimit");
    const args: { query: string; limit?: number; llm?: boolean; uri?: string } = { query };
    if (limit) args.limit = limit;
    if (!llm) args.llm = false; // typing: skip the optional (slow) LLM steps
    const active = vscode.window.activeTextEditor?.document;
    if (active?.languageId === "markdown") args.uri = active.uri.toString(); // relation badges
    try {
      const raw = await this.client.executeCommand("zettel.search", args, cts.token);
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

  /**
   * Answer `question`: pieces of the answer go to the webview as they stream (routed by a fresh
   * token), then the whole answer and its sources. A newer question or Stop cancels it.
   */
  private async ask(seq: number, question: string): Promise<void> {
    const cts = new vscode.CancellationTokenSource();
    const ticket = this.askGate.begin(cts);
    this.asking = { seq, cts };
    const token = askToken(randomUUID);
    const stopListening = this.client.askStreams.listen(token, (delta) =>
      this.post({ type: "askDelta", seq, delta }),
    );
    // The server answers from the vault of the active note (when there are several).
    const doc = vscode.window.activeTextEditor?.document;
    const uri = doc && doc.uri.scheme === "file" ? doc.uri.toString() : undefined;
    try {
      const raw = await this.client.executeCommand(
        "zettel.ask",
        uri ? { question, token, uri } : { question, token },
        cts.token,
      );
      if (!this.askGate.finish(ticket)) return; // a newer question: drop this answer
      const model = toAskModel(parseAskAnswer(raw, question));
      if (cts.token.isCancellationRequested) model.cancelled = true;
      this.shownSources = { seq, items: model.sources };
      this.post({ type: "askDone", seq, model });
    } catch (err) {
      if (!this.askGate.finish(ticket)) return; // cancelled by a newer question
      if (cts.token.isCancellationRequested) {
        // Stopped: the server answers the cancel at once (without sources); what streamed stays.
        this.post({ type: "askStopped", seq });
        return;
      }
      const message =
        err instanceof NotRunningError ? err.message : `Ask failed: ${errorText(err)}`;
      this.post({ type: "askError", seq, message });
    } finally {
      stopListening(); // pieces that come after the answer (or the cancel) are dropped
      if (this.asking?.seq === seq) this.asking = undefined;
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
  <div class="modes" role="tablist" aria-label="Search or ask">
    <button id="tab-search" class="mode" type="button" role="tab" aria-selected="true"
      aria-controls="search-panel" tabindex="0">Search</button>
    <button id="tab-ask" class="mode" type="button" role="tab" aria-selected="false"
      aria-controls="ask-panel" tabindex="-1">Ask</button>
  </div>
  <div id="server" class="server" role="status" hidden></div>
  <section id="search-panel" class="search" role="tabpanel" aria-labelledby="tab-search">
    <div id="box" class="box">
      <input id="query" type="text" role="combobox" aria-expanded="false" aria-autocomplete="list"
        aria-controls="results" aria-label="Search notes" placeholder="Search notes (meaning, words, titles)"
        spellcheck="false" autocomplete="off">
    </div>
    <div id="summary" class="summary" aria-live="polite"></div>
    <div id="note" class="note" role="status" hidden></div>
    <ul id="results" class="results" role="listbox" aria-label="Search results"></ul>
  </section>
  <section id="ask-panel" class="ask" role="tabpanel" aria-labelledby="tab-ask" hidden>
    <div id="ask-box" class="box ask-box">
      <textarea id="question" rows="2" aria-label="Ask a question about your notes"
        aria-describedby="ask-hint" placeholder="Ask your notes a question" spellcheck="true"></textarea>
      <div class="ask-actions">
        <button id="ask-button" class="button" type="button">Ask</button>
        <button id="stop-button" class="button secondary" type="button" hidden>Stop</button>
      </div>
    </div>
    <div id="ask-hint" class="hint">Enter asks, Shift+Enter adds a line, Esc stops. Answers come
      from your notes through a local Ollama (see the zettel.ollamaHost and zettel.chatModel settings).</div>
    <div id="ask-status" class="summary" role="status" aria-live="polite"></div>
    <div id="ask-notice" class="note warning" role="alert" hidden></div>
    <div id="answer" class="answer" aria-live="off" aria-busy="false" hidden></div>
    <div id="sources-heading" class="sources-heading" hidden>Sources</div>
    <ul id="sources" class="sources" role="listbox" aria-labelledby="sources-heading"></ul>
  </section>
  <script nonce="${nonce}" src="${js.toString()}"></script>
</body>
</html>`;
  }

  dispose(): void {
    this.gate.cancelAll();
    this.askGate.cancelAll();
    for (const d of this.disposables) d.dispose();
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function makeNonce(): string {
  return randomBytes(18).toString("base64");
}
