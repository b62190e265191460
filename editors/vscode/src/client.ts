/**
 * The language client's life: find the server command, start `zettel-lsp` over stdio, explain a
 * failed start, restart on request, and keep the server's settings in step with `zettel.*`.
 */

import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type LanguageClientOptions,
} from "vscode-languageclient/node";
import { clientLensCommand } from "./lib/lenses";
import {
  didChangeConfigurationParams,
  changedKeys,
  reindexes,
  sameSettings,
  serverSettings,
  type Expand,
  type ServerKey,
  type ServerSettings,
} from "./lib/settings";
import {
  formatCommand,
  missingProgram,
  resolveServerCommand,
  type Env,
  type ServerCommand,
} from "./lib/serverCommand";
import { ASK_DELTA_METHOD, AskStreams } from "./lib/ask";
import {
  INSTALL_BUTTON,
  noServerMessage,
  offersInstall,
  startFailureMessage,
  startFailureReason,
} from "./lib/startError";
import type { ClientState } from "./lib/status";

const CLIENT_ID = "zettel";
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 3 * 60 * 1000;
const STDERR_KEEP = 8000;

export class NotRunningError extends Error {
  constructor(readonly state: ClientState) {
    super(
      state === "starting" || state === "installing"
        ? `The Zettel server is ${state}…`
        : "The Zettel server is not running (see 'Zettel: Show Status').",
    );
  }
}

function expandVars(): Expand {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return { workspaceFolder: folder?.uri.fsPath, home: os.homedir() };
}

function nodeEnv(): Env {
  const isWindows = process.platform === "win32";
  return {
    path: process.env.PATH ?? process.env.Path ?? "",
    delimiter: path.delimiter,
    pathext: isWindows ? (process.env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").filter(Boolean) : [],
    isWindows,
    isExecutable: (p) => {
      try {
        if (!fs.statSync(p).isFile()) return false;
        fs.accessSync(p, isWindows ? fs.constants.F_OK : fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    },
    exists: (p) => fs.existsSync(p),
    join: (...parts) => path.join(...parts),
    vars: expandVars(),
  };
}

/** The server's settings from the current `zettel.*` configuration. */
export function currentServerSettings(): ServerSettings {
  const config = vscode.workspace.getConfiguration("zettel");
  return serverSettings((key: ServerKey) => config.get(key), expandVars());
}

export class ZettelClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private _state: ClientState = "stopped";
  private readonly stateEmitter = new vscode.EventEmitter<ClientState>();
  /** Fires on every state change: starting, running, stopped, failed. */
  readonly onDidChangeState = this.stateEmitter.event;
  private readonly settingsEmitter = new vscode.EventEmitter<{ reindex: boolean }>();
  /** Fires after new settings were sent (`reindex`: the server re-opens its vaults). */
  readonly onDidSendSettings = this.settingsEmitter.event;
  private sent: ServerSettings | undefined;
  private crashes: number[] = [];
  /** Why the last start failed (for "Show Status"). */
  lastError: string | undefined;
  private stopping = false;
  /** Inside doStart: its own try/catch reports the outcome. */
  private startingNow = false;
  /** The server crashed and the client is about to start it again (Stopped is expected). */
  private restarting = false;
  private startQueue: Promise<void> = Promise.resolve();
  private readonly disposables: vscode.Disposable[] = [];
  /**
   * Streamed answers of `zettel.ask`: each request listens for its own token; the client's one
   * `zettel/askDelta` handler (registered on every LanguageClient this class makes) feeds it.
   */
  readonly askStreams = new AskStreams();

  constructor(
    readonly output: vscode.OutputChannel,
    /** The server "Zettel: Install zettel-lsp" installed, if any. */
    private readonly installedServer: () => string | undefined = () => undefined,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfiguration(e)),
      this.stateEmitter,
      this.settingsEmitter,
    );
  }

  get state(): ClientState {
    return this._state;
  }

  /** The running client, or undefined. */
  get running(): LanguageClient | undefined {
    return this._state === "running" && this.client?.isRunning() ? this.client : undefined;
  }

  private setState(state: ClientState): void {
    if (state !== this._state) {
      this._state = state;
      this.stateEmitter.fire(state);
    }
  }

  /** While "Install zettel-lsp" runs and no server does: the status says so. */
  installing(on: boolean): void {
    if (on && this._state !== "running") this.setState("installing");
    else if (!on && this._state === "installing") this.setState(this.client ? "starting" : "failed");
  }

  /** Start (or restart) the server; calls are serialised. */
  start(): Promise<void> {
    this.startQueue = this.startQueue.then(() => this.doStart()).catch(() => undefined);
    return this.startQueue;
  }

  restart(): Promise<void> {
    this.crashes = [];
    return this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      this.stopping = true;
      try {
        // The server flushes its index before it answers `shutdown`: give it time.
        if (client.isRunning()) await client.stop(10_000);
      } catch (err) {
        this.log(`stopping the server: ${String(err)}`);
      } finally {
        this.stopping = false;
        await client.dispose().catch(() => undefined);
      }
    }
    this.setState("stopped");
  }

  private async doStart(): Promise<void> {
    await this.stop();
    this.lastError = undefined;
    this.setState("starting");
    const env = nodeEnv();
    const config = vscode.workspace.getConfiguration("zettel");
    const cmd = resolveServerCommand(
      config.get("server.command"),
      config.get("server.python"),
      env,
      this.installedServer(),
    );
    this.log(`starting ${formatCommand(cmd)} (${describeSource(cmd)})`);

    const missing = missingProgram(cmd, env);
    if (missing) {
      this.fail(cmd, startFailureReason(cmd, { missing }), offersInstall(cmd, { missing }));
      return;
    }

    let stderr = "";
    let exitCode: number | null | undefined;
    let spawnError: string | undefined;
    const serverOptions = async (): Promise<ChildProcess> => {
      const child = await spawnServer(cmd);
      child.stderr?.on("data", (data: Buffer | string) => {
        stderr = (stderr + data.toString()).slice(-STDERR_KEEP);
      });
      child.on("exit", (code) => {
        exitCode = code;
      });
      return child;
    };

    const settings = currentServerSettings();
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", language: "markdown" }],
      initializationOptions: settings,
      outputChannel: this.output,
      // Our own messages explain failures; the server's warnings still come as notifications.
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationFailedHandler: () => false,
      // The server's lens commands as this extension runs them (lib/lenses.ts).
      middleware: {
        provideCodeLenses: async (document, token, next) => mapLenses(await next(document, token)),
        resolveCodeLens: async (lens, token, next) => {
          const resolved = await next(lens, token);
          return resolved ? mapLens(resolved) : resolved;
        },
      },
      errorHandler: {
        error: (_error, _message, count) => ({
          action: count !== undefined && count > 3 ? ErrorAction.Shutdown : ErrorAction.Continue,
          handled: true,
        }),
        closed: () => this.onClosed(),
      },
    };
    const client = new ZettelLanguageClient(CLIENT_ID, "Zettel", serverOptions, clientOptions);
    this.client = client;
    // Kept by the client across its own restarts after a crash.
    client.onNotification(ASK_DELTA_METHOD, (params: unknown) => {
      this.askStreams.deliver(params);
    });
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Running) {
        this.restarting = false;
        this.setState("running");
      } else if (e.newState === State.Starting) {
        this.restarting = false; // the restart after a crash is under way
      } else if (e.newState === State.Stopped && !this.stopping && !this.startingNow && !this.restarting) {
        // Stopped on its own: after a crash it will not restart, or a restart failed.
        if (this._state !== "failed") this.lastError ??= "the server stopped";
        this.setState("failed");
      }
    });
    this.startingNow = true;
    try {
      await client.start();
      // start() resolves (instead of rejecting) when the server exits during `initialize`
      // and the close handler says "do not restart" (vscode-languageclient 9.0.1).
      if (!client.isRunning()) throw new Error("the server exited while starting");
      client.quiet = false;
      this.sent = settings;
      this.setState("running");
    } catch (err) {
      spawnError = err instanceof SpawnError ? err.message : undefined;
      if (this.client === client) {
        this.client = undefined;
        await client.dispose().catch(() => undefined);
      }
      // Let the exit and the last stderr lines arrive.
      await new Promise((r) => setTimeout(r, 200));
      const reason = startFailureReason(cmd, { spawnError, stderr, exitCode });
      this.fail(cmd, reason, offersInstall(cmd, { spawnError, stderr }));
    } finally {
      this.startingNow = false;
    }
  }

  private onClosed(): { action: CloseAction; handled: boolean; message?: string } {
    if (this._state !== "running") {
      // Closed while starting: start() fails and explains.
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < RESTART_WINDOW_MS);
    this.crashes.push(now);
    if (this.crashes.length <= MAX_RESTARTS) {
      this.log(`the server stopped unexpectedly; restarting (${this.crashes.length}/${MAX_RESTARTS})`);
      this.restarting = true;
      this.setState("starting");
      return { action: CloseAction.Restart, handled: true };
    }
    this.lastError = `the server stopped ${this.crashes.length} times in 3 minutes`;
    this.setState("failed");
    void this.showError(`Zettel: ${this.lastError}; it will not be restarted. See the output for why.`);
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  /** `noServer`: nothing to start was found; offer to install it. */
  private fail(cmd: ServerCommand, reason: string, noServer = false): void {
    this.lastError = reason;
    this.log(`could not start ${formatCommand(cmd)}: ${reason}`);
    this.setState("failed");
    if (noServer) void this.offerInstall(`zettel-lsp is not on PATH, and ${reason}`);
    else void this.showError(startFailureMessage(reason));
  }

  /** No server anywhere: offer to install the one bundled with the extension. */
  private async offerInstall(reason: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(
      noServerMessage(reason),
      INSTALL_BUTTON,
      "Open Settings",
      "Show Output",
    );
    if (choice === INSTALL_BUTTON) {
      await vscode.commands.executeCommand("zettel.installServer");
    } else if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "zettel.server");
    } else if (choice === "Show Output") {
      this.output.show(true);
    }
  }

  private async showError(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, "Open Settings", "Show Output", "Retry");
    if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "zettel.server");
    } else if (choice === "Show Output") {
      this.output.show(true);
    } else if (choice === "Retry") {
      await this.restart();
    }
  }

  /** Run a `zettel.*` server command with one object argument (or none). */
  async executeCommand(
    command: string,
    arg?: object,
    token?: vscode.CancellationToken,
  ): Promise<unknown> {
    const client = this.running;
    if (!client) throw new NotRunningError(this._state);
    const params = { command, arguments: arg === undefined ? [] : [arg] };
    return token
      ? client.sendRequest(ExecuteCommandRequest.type, params, token)
      : client.sendRequest(ExecuteCommandRequest.type, params);
  }

  private onConfiguration(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration("zettel")) return;
    if (e.affectsConfiguration("zettel.server")) {
      this.log("zettel.server.* changed: restarting the server");
      void this.restart();
      return;
    }
    void this.sendSettings();
  }

  /** Send the current settings if they differ from what the server has. */
  async sendSettings(): Promise<void> {
    const client = this.running;
    if (!client) return;
    const settings = currentServerSettings();
    const before = this.sent ?? {};
    if (sameSettings(settings, before)) return;
    const keys = changedKeys(before, settings);
    this.sent = settings;
    this.log(`settings changed (${keys.join(", ")}): sending them to the server`);
    await client.sendNotification(
      DidChangeConfigurationNotification.type,
      didChangeConfigurationParams(settings),
    );
    this.settingsEmitter.fire({ reindex: reindexes(before, settings) });
  }

  log(line: string): void {
    this.output.appendLine(`[zettel] ${line}`);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

class SpawnError extends Error {}

/**
 * A LanguageClient that keeps quiet while starting: a failed start would otherwise pop up its
 * generic "couldn't create connection to server" next to our message with the actual reason and
 * the install instructions. Everything is still written to the Output channel.
 */
class ZettelLanguageClient extends LanguageClient {
  quiet = true;

  override error(message: string, data?: unknown, showNotification?: boolean | "force"): void {
    super.error(message, data, this.quiet ? false : showNotification);
  }
}

function describeSource(cmd: ServerCommand): string {
  switch (cmd.source) {
    case "setting":
      return "from zettel.server.command";
    case "path":
      return "found on PATH";
    case "installed":
      return "installed by 'Zettel: Install zettel-lsp'";
    case "python":
      return "zettel-lsp is not on PATH; using zettel.server.python";
  }
}

/** Spawn the server; resolves once it runs, rejects with a SpawnError if it cannot. */
function spawnServer(cmd: ServerCommand): Promise<ChildProcess> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const cwd = folder?.uri.scheme === "file" ? folder.uri.fsPath : os.homedir();
  const child = spawn(cmd.command, cmd.args, {
    cwd,
    env: { ...process.env, PYTHONUNBUFFERED: "1" },
    stdio: ["pipe", "pipe", "pipe"],
    // Windows can run .cmd/.bat shims only through a shell.
    shell: process.platform === "win32" && /\.(cmd|bat)$/i.test(cmd.command),
    windowsHide: true,
  });
  return new Promise((resolve, reject) => {
    child.once("spawn", () => resolve(child));
    child.once("error", (err) => reject(new SpawnError(err.message)));
  });
}

function mapLens(lens: vscode.CodeLens): vscode.CodeLens {
  if (lens.command) lens.command = clientLensCommand(lens.command);
  return lens;
}

function mapLenses(lenses: vscode.CodeLens[] | null | undefined): vscode.CodeLens[] | null | undefined {
  return lenses?.map(mapLens);
}
