/**
 * The Related view: `zettel.related {uri}` for the active Markdown note, refreshed (debounced)
 * when the active editor changes, when the note is saved and when the index becomes ready.
 * Work is done only while the view is visible.
 */

import * as vscode from "vscode";
import { NotRunningError, type ZettelClient } from "./client";
import { Debouncer, LatestGate } from "./lib/latest";
import { parseRows, type SearchRow } from "./lib/protocol";
import { breadcrumbOf, excerptOf, folderOf, lastSegment, shortFolder } from "./lib/results";

export const RELATED_VIEW_ID = "zettel.relatedView";
const DEBOUNCE_MS = 300;

const RELATION_ICONS: Record<string, string> = {
  linked: "link",
  backlink: "references",
  "2 hops": "type-hierarchy-sub",
  "not linked": "lightbulb",
};

export function isNote(doc: vscode.TextDocument | undefined): doc is vscode.TextDocument {
  return doc !== undefined && doc.uri.scheme === "file" && doc.languageId === "markdown";
}

export class RelatedProvider implements vscode.TreeDataProvider<SearchRow>, vscode.Disposable {
  private rows: SearchRow[] = [];
  /** The note whose related notes are listed. */
  private uri: vscode.Uri | undefined;
  private readonly changed = new vscode.EventEmitter<SearchRow | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<SearchRow>;
  private readonly gate = new LatestGate<vscode.CancellationTokenSource>((cts) => cts.cancel());
  private readonly debounced = new Debouncer<vscode.Uri | undefined>(DEBOUNCE_MS, (uri) => {
    void this.load(uri);
  });
  /** Set when a refresh was skipped because the view was hidden. */
  private stale = true;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly client: ZettelClient) {
    this.view = vscode.window.createTreeView(RELATED_VIEW_ID, {
      treeDataProvider: this,
      showCollapseAll: false,
    });
    this.view.message = "Open a Markdown note to see its related notes.";
    this.disposables.push(
      this.view,
      this.changed,
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        // Focus moving to a panel or a webview leaves the list as it is.
        if (editor) this.refresh();
      }),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (this.uri && doc.uri.toString() === this.uri.toString()) this.refresh();
      }),
      this.view.onDidChangeVisibility((e) => {
        if (e.visible && this.stale) this.refresh();
      }),
      client.onDidChangeState((state) => {
        if (state === "running") this.refresh();
      }),
    );
  }

  /** The note the list is for (the active one, or the last active one). */
  get currentUri(): vscode.Uri | undefined {
    return this.uri;
  }

  /** Recompute for the active editor's note (debounced). */
  refresh(): void {
    const doc = vscode.window.activeTextEditor?.document;
    const uri = isNote(doc) ? doc.uri : undefined;
    if (!this.view.visible) {
      this.stale = true;
      return;
    }
    this.debounced.call(uri);
  }

  private async load(uri: vscode.Uri | undefined): Promise<void> {
    this.stale = false;
    this.uri = uri;
    if (!uri) {
      this.show([], "Open a Markdown note to see its related notes.");
      this.view.description = undefined;
      return;
    }
    this.view.description = lastSegment(uri.path).replace(/\.md$/i, "");
    const cts = new vscode.CancellationTokenSource();
    const ticket = this.gate.begin(cts);
    const limit = vscode.workspace.getConfiguration("zettel").get<number>("relatedView.limit", 10);
    try {
      const raw = await this.client.executeCommand(
        "zettel.related",
        { uri: uri.toString(), limit },
        cts.token,
      );
      if (!this.gate.finish(ticket)) return;
      const rows = parseRows(raw);
      this.show(rows, rows.length ? undefined : "No related notes (is this note inside the vault?).");
    } catch (err) {
      if (!this.gate.finish(ticket)) return;
      this.show(
        [],
        err instanceof NotRunningError ? err.message : `Related notes failed: ${String(err)}`,
      );
    } finally {
      cts.dispose();
    }
  }

  private show(rows: SearchRow[], message: string | undefined): void {
    this.rows = rows;
    this.view.message = message;
    this.changed.fire(undefined);
  }

  getChildren(element?: SearchRow): SearchRow[] {
    return element ? [] : this.rows;
  }

  getTreeItem(row: SearchRow): vscode.TreeItem {
    const item = new vscode.TreeItem(row.title, vscode.TreeItemCollapsibleState.None);
    item.id = `${row.uri}#${row.line_start}`;
    // The title is the label (never cut before the description); the folder keeps its end.
    item.description = [row.relation, shortFolder(folderOf(row))].filter(Boolean).join(" · ");
    const tooltip = new vscode.MarkdownString();
    tooltip.appendMarkdown("**").appendText(row.title).appendMarkdown("**");
    if (row.relation) tooltip.appendMarkdown(" — ").appendText(row.relation);
    const crumb = breadcrumbOf(row.heading);
    tooltip.appendMarkdown("\n\n").appendText(row.path + (crumb ? ` › ${crumb}` : ""));
    const excerpt = excerptOf(row);
    if (excerpt) tooltip.appendMarkdown("\n\n").appendText(excerpt.replace(/\n/g, " / "));
    item.tooltip = tooltip;
    item.iconPath = new vscode.ThemeIcon(RELATION_ICONS[row.relation ?? ""] ?? "note");
    item.contextValue = "zettel.related";
    item.command = {
      command: "zettel.openLocation",
      title: "Open",
      arguments: [row.uri, row.line_start, row.line_end],
    };
    return item;
  }

  dispose(): void {
    this.debounced.cancel();
    this.gate.cancelAll();
    for (const d of this.disposables) d.dispose();
  }
}
