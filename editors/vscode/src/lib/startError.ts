/** The message shown when the server cannot start: what went wrong, and how to fix it. */

import { formatCommand, type ServerCommand } from "./serverCommand";

// Plain text: VS Code's notifications do not render Markdown. The package is not on PyPI: the
// extension installs the wheel it bundles, or it is installed from the project folder.
export const INSTALL_HINT =
  "Run 'Zettel: Install zettel-lsp' (the server bundled with this extension, in an environment " +
  "of its own; used when 'zettel.server.command' is empty and no zettel-lsp is on PATH), or install it from the zettel-lsp project folder with 'pipx install /path/to/zettel-lsp' (or " +
  "'pip install /path/to/zettel-lsp' in a virtual environment; 'bash scripts/setup.sh' there " +
  "creates .venv/bin/zettel-lsp), then set 'zettel.server.command' to the zettel-lsp program " +
  "(or 'zettel.server.python' to the Python that has it).";

/** The most telling line of what the server printed before it died (Python's last error). */
export function lastErrorLine(stderr: string): string | undefined {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as string;
    if (/(Error|Exception|error:|No module named)/.test(line)) return line;
  }
  return lines[lines.length - 1];
}

/**
 * Why the server did not start, in one sentence: a missing program, a Python without the
 * package, or the last error line it printed.
 */
export function startFailureReason(
  cmd: ServerCommand,
  opts: { missing?: string; spawnError?: string; stderr?: string; exitCode?: number | null },
): string {
  const line = formatCommand(cmd);
  if (opts.missing) return cmd.args.length ? `${opts.missing} (command: ${line})` : opts.missing;
  if (opts.spawnError) return `'${line}' failed to run: ${opts.spawnError}`;
  const stderr = opts.stderr ?? "";
  if (/No module named '?zettel_lsp/.test(stderr)) {
    return `${cmd.command} has no zettel_lsp package installed`;
  }
  const last = lastErrorLine(stderr);
  const code = opts.exitCode !== undefined && opts.exitCode !== null ? ` (exit code ${opts.exitCode})` : "";
  return last ? `'${line}' stopped${code}: ${last}` : `'${line}' stopped${code} before it answered`;
}

export function startFailureMessage(reason: string): string {
  return `Zettel: the zettel-lsp server could not start: ${reason}. ${INSTALL_HINT}`;
}

/**
 * Whether a failed start means "no server found": nothing in zettel.server.command, no
 * zettel-lsp on PATH, none installed by the extension, and the Python is missing or has no
 * zettel_lsp package; installing it would fix it. (A server that is there and fails for
 * another reason is not fixed by installing one.)
 */
export function offersInstall(
  cmd: Pick<ServerCommand, "source">,
  opts: { missing?: string; spawnError?: string; stderr?: string },
): boolean {
  if (cmd.source !== "python") return false;
  return !!opts.missing || !!opts.spawnError || /No module named '?zettel_lsp/.test(opts.stderr ?? "");
}

export const INSTALL_BUTTON = "Install zettel-lsp";

export function noServerMessage(reason: string): string {
  return (
    `Zettel: no zettel-lsp server was found (${reason}). '${INSTALL_BUTTON}' puts the server ` +
    "bundled with this extension in a Python environment of its own (needs Python 3.11 or " +
    "later; its dependencies come from PyPI, a few minutes the first time). Or set " +
    "'zettel.server.command' to a zettel-lsp you installed."
  );
}
