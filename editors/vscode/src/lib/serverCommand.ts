/**
 * Which command starts the server, from `zettel.server.command` and `zettel.server.python`:
 *
 * 1. `zettel.server.command` set: an array is [program, ...args]; a string is the path of a
 *    program if such a file exists, else split like a shell would (quotes, no expansion).
 * 2. else `zettel-lsp` if it is on PATH;
 * 3. else the server "Zettel: Install zettel-lsp" put in the extension's storage, if any;
 * 4. else `<python> -m zettel_lsp`, with `zettel.server.python` or `python3` (`python` on
 *    Windows). This is the "no server found" case: a failed start offers to install it.
 *
 * File-system checks are injected so this stays pure and testable.
 */

import { expandPath, type Expand } from "./settings";

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where it came from: for messages ("from zettel.server.command"). */
  source: "setting" | "path" | "installed" | "python";
}

export interface Env {
  /** PATH (or Path) of the environment. */
  path: string;
  /** ":" or ";" */
  delimiter: string;
  /** Windows: PATHEXT extensions to try (".EXE;.CMD"); empty elsewhere. */
  pathext: string[];
  isWindows: boolean;
  /** Whether `path` is an executable file. */
  isExecutable(path: string): boolean;
  /** Whether `path` exists as a file. */
  exists(path: string): boolean;
  join(...parts: string[]): string;
  vars: Expand;
}

/** Split a command line into words: whitespace separates, quotes group, backslash escapes. */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let word = "";
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < line.length && /["\\]/.test(line.charAt(i + 1))) {
        word += line.charAt(++i);
      } else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) out.push(word);
  return out;
}

function isPathLike(name: string): boolean {
  return name.includes("/") || name.includes("\\");
}

/** The full path of `name` on PATH, or undefined (a name with a slash is checked as is). */
export function which(name: string, env: Env): string | undefined {
  const exts = env.isWindows ? ["", ...env.pathext] : [""];
  if (isPathLike(name)) {
    return exts.map((e) => name + e).find((p) => env.isExecutable(p));
  }
  for (const dir of env.path.split(env.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = env.join(dir, name + ext);
      if (env.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

function words(setting: unknown, env: Env): string[] {
  if (Array.isArray(setting)) {
    return setting.filter((w): w is string => typeof w === "string" && w !== "");
  }
  if (typeof setting === "string" && setting.trim() !== "") {
    const whole = expandPath(setting.trim(), env.vars);
    return env.exists(whole) ? [whole] : splitCommandLine(setting);
  }
  return [];
}

export function resolveServerCommand(
  commandSetting: unknown,
  pythonSetting: unknown,
  env: Env,
  installed?: string,
): ServerCommand {
  const given = words(commandSetting, env);
  const [program, ...rest] = given;
  if (program !== undefined) {
    return { command: expandPath(program, env.vars), args: rest, source: "setting" };
  }
  const onPath = which("zettel-lsp", env);
  if (onPath) return { command: onPath, args: [], source: "path" };
  if (installed && env.isExecutable(installed)) return { command: installed, args: [], source: "installed" };
  const python =
    typeof pythonSetting === "string" && pythonSetting.trim() !== ""
      ? expandPath(pythonSetting.trim(), env.vars)
      : env.isWindows
        ? "python"
        : "python3";
  return { command: python, args: ["-m", "zettel_lsp"], source: "python" };
}

/**
 * Why `cmd` cannot start, checked before spawning (undefined if it looks runnable): the program
 * is neither an executable file nor found on PATH.
 */
export function missingProgram(cmd: ServerCommand, env: Env): string | undefined {
  if (which(cmd.command, env)) return undefined;
  return isPathLike(cmd.command)
    ? `${cmd.command} does not exist or is not executable`
    : `${cmd.command} was not found on PATH`;
}

/** The command line for messages and the Output channel (quotes where needed). */
export function formatCommand(cmd: Pick<ServerCommand, "command" | "args">): string {
  return [cmd.command, ...cmd.args]
    .map((w) => (/^[\w@%+=:,./~-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`))
    .join(" ");
}
