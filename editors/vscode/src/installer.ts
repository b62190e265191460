/**
 * "Zettel: Install zettel-lsp": a virtual environment in the extension's global storage, made
 * with the user's Python >= 3.11, with the server wheel bundled in the .vsix installed into it
 * (its dependencies come from PyPI). An extension update that bundles another wheel upgrades
 * it on activation. The rules are in lib/install.ts; this file runs the processes.
 */

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  LOCK_FILE,
  RECORD_FILE,
  lockIsStale,
  choosePython,
  failureLine,
  parseRecord,
  progressLine,
  pythonCandidates,
  pythonInVenv,
  serverInVenv,
  upgradeDecision,
  venvName,
  wheelVersion,
  type BundledWheel,
  type InstallRecord,
  type PythonChoice,
} from "./lib/install";
import { formatCommand } from "./lib/serverCommand";

const isWindows = process.platform === "win32";
const PROBE_TIMEOUT_MS = 15_000;
const LOCK_POLL_MS = 1000;

/** Create `file` exclusively; a stale one (its window died) is taken over. */
async function takeLock(file: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fs.promises.writeFile(file, String(process.pid), { flag: "wx" });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const stat = await fs.promises.stat(file).catch(() => undefined);
      if (stat && !lockIsStale(stat.mtimeMs, Date.now())) return false;
      await fs.promises.rm(file, { force: true });
    }
  }
  return false;
}

/** Wait until `file` is gone (or stale). */
async function waitForLock(file: string): Promise<void> {
  for (;;) {
    const stat = await fs.promises.stat(file).catch(() => undefined);
    if (!stat || lockIsStale(stat.mtimeMs, Date.now())) return;
    await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
  }
}

interface RunResult {
  code: number | null;
  output: string;
  error?: string;
}

/** Run a program to its end; each output line goes to `onLine`. Cancelling kills it. */
function run(
  command: string,
  args: string[],
  onLine: (line: string) => void,
  token?: vscode.CancellationToken,
  timeoutMs?: number,
): Promise<RunResult> {
  return new Promise((resolve) => {
    let output = "";
    let pending = "";
    const child = spawn(command, args, {
      env: { ...process.env, PYTHONUNBUFFERED: "1", PIP_NO_INPUT: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      windowsHide: true,
    });
    const feed = (data: Buffer | string) => {
      const text = data.toString();
      output = (output + text).slice(-20_000);
      pending += text;
      const lines = pending.split(/\r?\n|\r/);
      pending = lines.pop() ?? "";
      for (const line of lines) onLine(line);
    };
    child.stdout?.on("data", feed);
    child.stderr?.on("data", feed);
    const stop = () => child.kill();
    const cancel = token?.onCancellationRequested(stop);
    const timer = timeoutMs ? setTimeout(stop, timeoutMs) : undefined;
    const done = (r: RunResult) => {
      cancel?.dispose();
      if (timer) clearTimeout(timer);
      if (pending) onLine(pending);
      resolve(r);
    };
    child.once("error", (err) => done({ code: null, output, error: err.message }));
    child.once("close", (code) => done({ code, output }));
  });
}

export class ServerInstaller {
  private busy: Promise<boolean> | undefined;
  private wheelCache: BundledWheel | null | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    private readonly client: {
      /** Start the server again (after an install or an upgrade). */
      restart(): Promise<void>;
      /** An install is under way (true) or over (false). */
      installing(on: boolean): void;
    },
  ) {}

  private get storage(): string {
    return this.context.globalStorageUri.fsPath;
  }

  private log(line: string): void {
    this.output.appendLine(`[install] ${line}`);
  }

  /** What installed.json says, if anything. */
  record(): InstallRecord | undefined {
    try {
      return parseRecord(fs.readFileSync(path.join(this.storage, RECORD_FILE), "utf8"));
    } catch {
      return undefined;
    }
  }

  /** The installed server program (it may be missing if the folder was removed by hand). */
  serverPath(): string | undefined {
    const r = this.record();
    return r ? path.join(this.storage, r.venv, ...serverInVenv(isWindows)) : undefined;
  }

  /** The wheel in the extension's server/ folder (the build puts exactly one there). */
  bundled(): BundledWheel | undefined {
    if (this.wheelCache !== undefined) return this.wheelCache ?? undefined;
    const dir = path.join(this.context.extensionPath, "server");
    let found: BundledWheel | undefined;
    try {
      for (const name of fs.readdirSync(dir)) {
        const version = wheelVersion(name);
        if (!version) continue;
        const file = path.join(dir, name);
        const sha256 = createHash("sha256").update(fs.readFileSync(file)).digest("hex");
        found = { file, version, sha256 };
        break;
      }
    } catch {
      // no server/ folder: a development build without the wheel
    }
    this.wheelCache = found ?? null;
    return found;
  }

  private async findPython(preferred?: string): Promise<PythonChoice> {
    const setting = vscode.workspace.getConfiguration("zettel").get<string>("server.python");
    const fromSetting = !!setting && setting.trim() !== "";
    const candidates = pythonCandidates(setting, isWindows);
    if (preferred && !fromSetting) candidates.unshift(preferred);
    const probes = [];
    for (const command of candidates) {
      const r = await run(command, ["--version"], () => undefined, undefined, PROBE_TIMEOUT_MS);
      const probe =
        r.code === 0 ? { command, output: r.output } : { command, error: r.error ?? `exit code ${r.code}` };
      probes.push(probe);
      const choice = choosePython([probe], fromSetting);
      if (choice.ok) return choice;
    }
    return choosePython(probes, fromSetting);
  }

  /** Install the bundled wheel (or upgrade to it), then start the server from it. */
  install(kind: "install" | "upgrade" = "install"): Promise<boolean> {
    this.busy ??= this.installOnce(kind).finally(() => {
      this.busy = undefined;
    });
    return this.busy;
  }

  /**
   * On activation: upgrade an installed server older than (or another build of) the bundled
   * wheel. True when it did and started the new server.
   */
  async upgradeIfNeeded(): Promise<boolean> {
    const decision = upgradeDecision(this.record(), this.bundled());
    if (decision.action !== "upgrade") return false;
    this.log(`installed ${decision.from}, bundled ${decision.to} (${decision.reason}): upgrading`);
    void vscode.window.showInformationMessage(
      `Zettel: upgrading zettel-lsp ${decision.from} to ${decision.to} (${decision.reason} came with this extension).`,
    );
    return this.install("upgrade");
  }

  private async installOnce(kind: "install" | "upgrade"): Promise<boolean> {
    const wheel = this.bundled();
    if (!wheel) {
      const msg = "this build of the extension has no server wheel in it (scripts/build-wheel.sh makes it)";
      this.log(msg);
      void vscode.window.showErrorMessage(`Zettel: cannot install zettel-lsp: ${msg}.`);
      return false;
    }
    const verb = kind === "upgrade" ? "upgrading" : "installing";
    this.client.installing(true);
    await fs.promises.mkdir(this.storage, { recursive: true });
    const lock = path.join(this.storage, LOCK_FILE);
    if (!(await takeLock(lock))) {
      // Another window is installing: wait for it, then start what it installed.
      this.log("another window is installing zettel-lsp: waiting for it");
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "Zettel: another window is installing zettel-lsp…" },
        () => waitForLock(lock),
      );
      const now = this.record();
      if (now && upgradeDecision(now, wheel).action === "none") {
        this.client.installing(false);
        await this.client.restart();
        return true;
      }
      if (!(await takeLock(lock))) {
        this.client.installing(false);
        return false;
      }
    }
    // Kept fresh while pip runs, so that a slow install is not taken for a dead window's.
    const touch = setInterval(() => {
      const now = new Date();
      fs.promises.utimes(lock, now, now).catch(() => undefined);
    }, 60_000);
    let result: InstallRecord | string;
    try {
      result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `Zettel: ${verb} zettel-lsp ${wheel.version}`,
          cancellable: true,
        },
        (progress, token) => this.installWheel(wheel, (m) => progress.report({ message: m }), token),
      );
    } finally {
      clearInterval(touch);
      await fs.promises.rm(lock, { force: true }).catch(() => undefined);
      this.client.installing(false);
    }
    if (typeof result === "string") {
      this.log(`failed: ${result}`);
      // Not awaited: an upgrade that failed goes on with the server installed before.
      void vscode.window
        .showErrorMessage(
          `Zettel: ${verb} zettel-lsp failed: ${result.replace(/\.$/, "")}. The details are in the Output channel (Zettel).`,
          "Show Output",
          "Retry",
        )
        .then((choice) => {
          if (choice === "Show Output") this.output.show(true);
          if (choice === "Retry") void this.install(kind);
        });
      return false;
    }
    const where = path.join(this.storage, result.venv);
    this.log(`zettel-lsp ${result.version} installed in ${where}`);
    void vscode.window.showInformationMessage(
      `Zettel: zettel-lsp ${result.version} is installed (${where}); starting it.`,
    );
    await this.client.restart();
    await this.removeOthers(result.venv);
    return true;
  }

  /**
   * Make a new environment, install the wheel, check that the server answers `--version`, then
   * record it. Returns the record, or why it failed (the new folder is removed then).
   */
  private async installWheel(
    wheel: BundledWheel,
    report: (message: string) => void,
    token: vscode.CancellationToken,
  ): Promise<InstallRecord | string> {
    report("looking for Python 3.11 or later");
    const python = await this.findPython(this.record()?.python);
    if (!python.ok) return python.message;
    const venv = venvName(wheel, Date.now());
    const dir = path.join(this.storage, venv);
    const log = (line: string) => {
      this.output.appendLine(line);
      const shown = progressLine(line);
      if (shown) report(shown);
    };
    const step = async (what: string, command: string, args: string[]): Promise<string | undefined> => {
      report(what);
      this.log(`${what}: ${formatCommand({ command, args })}`);
      const r = await run(command, args, log, token);
      if (token.isCancellationRequested) return "cancelled";
      if (r.code === 0) return undefined;
      return r.error ?? `${path.basename(command)} exited with code ${r.code}: ${failureLine(r.output)}`;
    };
    try {
      await fs.promises.mkdir(this.storage, { recursive: true });
      const py = path.join(dir, ...pythonInVenv(isWindows));
      const failed =
        (await step(`creating a virtual environment with ${python.command} (Python ${python.version})`, python.command, [
          "-m",
          "venv",
          dir,
        ])) ??
        (await step("pip: installing zettel-lsp and its dependencies from PyPI", py, [
          "-m",
          "pip",
          "install",
          "--disable-pip-version-check",
          "--progress-bar",
          "off",
          wheel.file,
        ])) ??
        (await step("checking the installed server", path.join(dir, ...serverInVenv(isWindows)), ["--version"]));
      if (failed) {
        await fs.promises.rm(dir, { recursive: true, force: true }).catch(() => undefined);
        return failed;
      }
      const record: InstallRecord = { version: wheel.version, sha256: wheel.sha256, venv, python: python.command };
      const file = path.join(this.storage, RECORD_FILE);
      await fs.promises.writeFile(`${file}.tmp`, JSON.stringify(record, null, 2));
      await fs.promises.rename(`${file}.tmp`, file);
      return record;
    } catch (err) {
      await fs.promises.rm(dir, { recursive: true, force: true }).catch(() => undefined);
      return err instanceof Error ? err.message : String(err);
    }
  }

  /** Remove the environments of earlier builds (the server now runs from `keep`). */
  private async removeOthers(keep: string): Promise<void> {
    let names: string[] = [];
    try {
      names = await fs.promises.readdir(this.storage);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith("venv-") && name !== keep) {
        this.log(`removing the earlier environment ${name}`);
        await fs.promises.rm(path.join(this.storage, name), { recursive: true, force: true }).catch(() => undefined);
      }
    }
  }
}
