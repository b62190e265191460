/**
 * The pure parts of "Zettel: Install zettel-lsp": which Python to build the virtual environment
 * with, what the bundled wheel is, where the installed server lives, and whether an installed
 * server must be upgraded to the bundled one.
 *
 * Layout in the extension's global storage: one folder per install,
 * `venv-<version>-<sha256 prefix>-<time>/`, and `installed.json` naming the one in use. The record is
 * written only after the new server answered `--version`, so a failed or interrupted install is
 * never started; the folder of the previous build is removed once the new one runs. One window
 * installs at a time (LOCK_FILE).
 */

/** Python's minimum version for zettel-lsp (pyproject.toml: requires-python). */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

export const RECORD_FILE = "installed.json";

/**
 * Held (created exclusively) while one window installs: VS Code restarts every window after an
 * extension update, and only one of them may upgrade; the others wait, then start what it
 * installed. A lock older than this is left over from a window that died.
 */
export const LOCK_FILE = "install.lock";
export const LOCK_STALE_MS = 30 * 60_000;

export function lockIsStale(lockTimeMs: number, nowMs: number): boolean {
  return nowMs - lockTimeMs > LOCK_STALE_MS;
}

/** What `installed.json` holds. */
export interface InstallRecord {
  /** The zettel-lsp version installed (from the wheel's name). */
  version: string;
  /** The installed wheel's SHA-256: a rebuilt wheel of the same version is a new build. */
  sha256: string;
  /** The virtual environment's folder name, inside the global storage. */
  venv: string;
  /** The Python the environment was made with (for upgrades). */
  python: string;
}

/** The wheel bundled in the extension (server/zettel_lsp-<version>-*.whl). */
export interface BundledWheel {
  file: string;
  version: string;
  sha256: string;
}

/** `3.11.7` from `python --version`'s "Python 3.11.7" (or "Python 3.12.0rc1"); undefined if none. */
export function parsePythonVersion(text: string): [number, number, number] | undefined {
  const m = /(?:^|\s)(?:Python\s+)?(\d+)\.(\d+)(?:\.(\d+))?/.exec(text.trim());
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

export function isRecentEnough(version: readonly number[] | undefined): boolean {
  if (!version) return false;
  const [major = 0, minor = 0] = version;
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

/**
 * The Pythons to try, in order: only the setting when it is set (the user chose it), else the
 * usual names on PATH.
 */
export function pythonCandidates(setting: string | undefined, isWindows: boolean): string[] {
  if (setting && setting.trim() !== "") return [setting.trim()];
  return isWindows
    ? ["python", "python3", "py"]
    : ["python3", "python", "python3.13", "python3.12", "python3.11"];
}

/** What running `<candidate> --version` gave: its output, or why it did not run. */
export interface PythonProbe {
  command: string;
  output?: string;
  error?: string;
}

export type PythonChoice =
  | { ok: true; command: string; version: string }
  | { ok: false; message: string };

/** The first candidate that is Python >= 3.11; else a message that says what was found. */
export function choosePython(probes: PythonProbe[], fromSetting: boolean): PythonChoice {
  const seen: string[] = [];
  for (const p of probes) {
    const version = p.output === undefined ? undefined : parsePythonVersion(p.output);
    if (isRecentEnough(version)) return { ok: true, command: p.command, version: (version ?? []).join(".") };
    if (version) seen.push(`${p.command} is Python ${version.join(".")}`);
    else if (p.error) seen.push(`${p.command}: ${p.error}`);
    else seen.push(`${p.command} did not say its version`);
  }
  const want = `zettel-lsp needs Python ${MIN_PYTHON.join(".")} or later`;
  const found = seen.length ? ` (${seen.join("; ")})` : "";
  const message = fromSetting
    ? `${want}; zettel.server.python is not${found}: set it to a newer Python`
    : `${want}; none was found on PATH${found}: install one (python.org, or your system's python3.11 package) or set zettel.server.python to it`;
  return { ok: false, message };
}

/** The version in a wheel's file name (`zettel_lsp-0.1.0-py3-none-any.whl` -> `0.1.0`). */
export function wheelVersion(fileName: string): string | undefined {
  const m = /^zettel_lsp-([^-]+)-.+\.whl$/.exec(fileName);
  return m?.[1];
}

/**
 * The folder of one install's environment: `venv-0.1.0-1a2b3c4d-<time>`. Each install gets a
 * new one (a reinstall of the same build never writes into the folder the server runs from).
 */
export function venvName(wheel: Pick<BundledWheel, "version" | "sha256">, now: number): string {
  return `venv-${wheel.version}-${wheel.sha256.slice(0, 8)}-${now.toString(36)}`;
}

/** The server program inside an environment, as path parts below it. */
export function serverInVenv(isWindows: boolean): string[] {
  return isWindows ? ["Scripts", "zettel-lsp.exe"] : ["bin", "zettel-lsp"];
}

export function pythonInVenv(isWindows: boolean): string[] {
  return isWindows ? ["Scripts", "python.exe"] : ["bin", "python"];
}

/** `installed.json`'s text as a record, or undefined when it is missing or not one. */
export function parseRecord(text: string | undefined): InstallRecord | undefined {
  if (!text) return undefined;
  try {
    const r = JSON.parse(text) as Partial<InstallRecord>;
    const ok = [r.version, r.sha256, r.venv, r.python].every((v) => typeof v === "string" && v !== "");
    return ok && /^venv-[\w.+-]+$/.test(r.venv ?? "") ? (r as InstallRecord) : undefined;
  } catch {
    return undefined;
  }
}

export type UpgradeDecision =
  | { action: "none" }
  | { action: "upgrade"; from: string; to: string; reason: string };

/**
 * Whether the installed server must be replaced by the bundled wheel: yes when a server was
 * installed by this extension and the bundled wheel is another version or another build of it.
 * Nothing installed: nothing to upgrade (installing is the user's choice).
 */
export function upgradeDecision(
  installed: InstallRecord | undefined,
  bundled: BundledWheel | undefined,
): UpgradeDecision {
  if (!installed || !bundled) return { action: "none" };
  if (installed.version !== bundled.version) {
    return { action: "upgrade", from: installed.version, to: bundled.version, reason: "a new version" };
  }
  if (installed.sha256 !== bundled.sha256) {
    return { action: "upgrade", from: installed.version, to: bundled.version, reason: "a new build" };
  }
  return { action: "none" };
}

/**
 * Why a step failed, from its output: Debian's Python without venv support, else pip's last
 * `ERROR:` line, else the last line.
 */
export function failureLine(output: string): string {
  if (/ensurepip is not\s+available|No module named '?ensurepip/.test(output)) {
    const pkg = /apt install (python3[\d.]*-venv)/.exec(output)?.[1] ?? "python3-venv";
    return `this Python cannot make virtual environments: install the ${pkg} package (Debian, Ubuntu: sudo apt install ${pkg})`;
  }
  const lines = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const error = [...lines].reverse().find((l) => l.startsWith("ERROR:"));
  return error ?? lines[lines.length - 1] ?? "no output";
}

/** The line of pip's output to show in the progress notification (undefined: keep the last). */
export function progressLine(line: string): string | undefined {
  // A file by its name ("Processing zettel_lsp-0.1.0-py3-none-any.whl"), not its whole path.
  const t = line.trim().replace(/(^|\s)(?:\/|[A-Za-z]:\\)\S*[\\/]([^\\/\s]+)/g, "$1$2");
  if (!t || /^(WARNING|DEPRECATION|\[notice\])/.test(t)) return undefined;
  return t.length > 100 ? `${t.slice(0, 97)}…` : t;
}
