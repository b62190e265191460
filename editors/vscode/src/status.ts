/**
 * The status bar item: polls `zettel.status` every 2 s until every vault is ready, then every
 * 20 s (the watcher may start embedding again). The server's `$/progress` reports are shown by
 * vscode-languageclient in VS Code's own progress UI. Click -> "Zettel: Show Status".
 */

import * as vscode from "vscode";
import type { ZettelClient } from "./client";
import { parseStatus, type ServerStatus } from "./lib/protocol";
import { basename, ollamaEntry, phaseText, statusView, vaultDetails, type StatusView } from "./lib/status";

const FAST_MS = 2_000;
const SLOW_MS = 20_000;

export class StatusController implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private status: ServerStatus | undefined;
  private view: StatusView;
  private polling = false;
  private readonly readyEmitter = new vscode.EventEmitter<ServerStatus>();
  /** Fires when the vaults become ready (answers are complete from now on). */
  readonly onDidBecomeReady = this.readyEmitter.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly client: ZettelClient) {
    this.item = vscode.window.createStatusBarItem("zettel.status", vscode.StatusBarAlignment.Left, 10);
    this.item.name = "Zettel";
    this.item.command = "zettel.showStatus";
    this.view = statusView(undefined, client.state);
    this.render();
    this.item.show();
    this.disposables.push(
      this.item,
      this.readyEmitter,
      client.onDidChangeState(() => {
        this.status = undefined;
        this.render();
        this.kick();
      }),
      client.onDidSendSettings(() => this.kick()),
    );
  }

  get current(): ServerStatus | undefined {
    return this.status;
  }

  /** Poll now (after a reindex, a settings change, a state change). */
  kick(): void {
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), ms);
  }

  /**
   * Ask for the status now. `ollama`: also Ollama's state ("Show Status" only: the regular polls
   * leave Ollama alone). Returns the answer, or undefined if there was none.
   */
  private async poll(ollama = false): Promise<ServerStatus | undefined> {
    this.timer = undefined;
    if (this.polling && !ollama) return undefined;
    if (!this.client.running) {
      this.render();
      return undefined; // the next state change kicks again
    }
    this.polling = true;
    let status: ServerStatus | undefined;
    try {
      const wasReady = this.view.ready;
      status = parseStatus(
        await this.client.executeCommand("zettel.status", ollama ? { ollama: true } : undefined),
      );
      if (status) this.status = status;
      this.render();
      if (this.view.ready && !wasReady && this.status) this.readyEmitter.fire(this.status);
    } catch (err) {
      this.client.log(`zettel.status failed: ${String(err)}`);
    } finally {
      this.polling = false;
    }
    if (this.client.running) this.schedule(this.view.ready ? SLOW_MS : FAST_MS);
    return status;
  }

  private render(): void {
    this.view = statusView(this.status, this.client.state);
    this.item.text = this.view.text;
    this.item.tooltip = this.view.tooltip;
    this.item.accessibilityInformation = { label: this.view.text.replace(/\$\([^)]*\)\s*/g, "") };
    this.item.backgroundColor = this.view.problem
      ? new vscode.ThemeColor("statusBarItem.warningBackground")
      : undefined;
  }

  /** "Zettel: Show Status": the vaults, their problems, and what can be done about them. */
  async show(): Promise<void> {
    const fresh = this.client.running ? await this.poll(true) : undefined;
    type Item = vscode.QuickPickItem & { run?: () => unknown };
    const items: Item[] = [];
    const status = this.status;
    if (!this.client.running) {
      items.push({
        label: `$(error) Server ${this.client.state === "starting" || this.client.state === "installing" ? this.client.state : "not running"}`,
        detail: this.client.lastError,
      });
    } else if (status) {
      items.push({ label: `zettel-lsp ${status.version}`, kind: vscode.QuickPickItemKind.Separator });
      if (status.vaults.length === 0) {
        items.push({ label: "$(info) No vault: open a folder of Markdown notes" });
      }
      for (const v of status.vaults) {
        items.push({
          label: `$(folder) ${basename(v.root)}`,
          description: phaseText(v),
          detail: vaultDetails(v).join(" · "),
          run: () => vscode.env.clipboard.writeText(v.root),
        });
        for (const p of v.problems.slice(0, 10)) {
          items.push({ label: `$(warning) ${p}` });
        }
      }
      // Ollama is optional (Ask, and the LLM search steps when turned on).
      const ollama = ollamaEntry(fresh?.ollama);
      items.push({ label: "Ollama (optional)", kind: vscode.QuickPickItemKind.Separator });
      items.push({
        ...ollama,
        run: () => vscode.commands.executeCommand("workbench.action.openSettings", "zettel.ollamaHost"),
      });
    }
    items.push({ label: "Actions", kind: vscode.QuickPickItemKind.Separator });
    if (this.client.running) {
      items.push({
        label: "$(refresh) Reindex",
        description: "zettel.reindex",
        run: () => vscode.commands.executeCommand("zettel.reindexVaults"),
      });
    }
    items.push(
      {
        label: "$(debug-restart) Restart Server",
        run: () => vscode.commands.executeCommand("zettel.restartServer"),
      },
      { label: "$(output) Show Output", run: () => this.client.output.show(true) },
      {
        label: "$(settings-gear) Open Settings",
        run: () => vscode.commands.executeCommand("workbench.action.openSettings", "zettel."),
      },
    );
    if (status) {
      items.push({
        label: "$(copy) Copy Status JSON",
        run: () => vscode.env.clipboard.writeText(JSON.stringify(status, null, 2)),
      });
    }
    const pick = await vscode.window.showQuickPick(items, {
      title: this.view.text.replace(/\$\([^)]*\)\s*/g, ""),
      matchOnDescription: true,
      matchOnDetail: true,
    });
    await pick?.run?.();
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
